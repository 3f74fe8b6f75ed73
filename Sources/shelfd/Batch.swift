import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Batch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Gemini Batch API jobs ([gemini] mode = \"batch\" or 'shelfd run --batch').",
        subcommands: [BatchList.self, BatchCancel.self], defaultSubcommand: BatchList.self)
}

struct BatchList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The latest batches, newest first.")

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the batches as JSON.") var json = false
    @Option(name: .long, help: "How many to show.") var limit = 20

    func run() async throws {
        let (config, secrets, _) = try global.load(quiet: true)
        guard let store = try StoreAccess.openForReading(config: config, secrets: secrets) else {
            if json { try printJSON([ProviderBatch]()) } else { print("No batches: no photo has been queued yet.") }
            return
        }
        let batches = try BatchHistory(store: store).recent(limit: limit)
        if json { try printJSON(batches); return }
        if batches.isEmpty { print("No batches yet."); return }
        let formatter = ISO8601DateFormatter()
        for batch in batches {
            let ended = batch.finishedAt.map { ", ended \(formatter.string(from: $0))" } ?? ", in flight"
            print(
                "\(batch.name ?? "(not named yet)")  \(batch.displayName)  \(batch.state)  \(batch.photos) photo\(batch.photos == 1 ? "" : "s")  "
                    + "submitted \(formatter.string(from: batch.createdAt))\(ended)")
        }
    }
}

struct BatchCancel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Ask Gemini to cancel a batch; its photos go back to the queue when it has.",
        discussion:
            "The next poll (the daemon's, or the next 'shelfd run --batch') sees it cancelled and queues its photos again, no attempt used."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(
        help: ArgumentHelp(
            "The batch, as 'shelfd batch list' shows it (batches/…, or its shelfd-… display name).", valueName: "name"))
    var name: String

    func run() async throws {
        let (config, secrets, _) = try global.load(quiet: true)
        guard let store = try StoreAccess.openForReading(config: config, secrets: secrets),
            let batch = try BatchHistory(store: store).named(name)
        else {
            throw ValidationError("No batch named \(name); 'shelfd batch list' shows them.")
        }
        guard batch.finishedAt == nil, let remote = batch.name else {
            print(
                batch.finishedAt == nil
                    ? "\(name) has no name from Gemini yet; try again in a minute."
                    : "\(name) already ended (\(batch.state)).")
            return
        }
        do {
            try await Runtime.cancelBatch(remote, config: config, secrets: secrets)
        } catch {
            throw StartupError("Could not cancel \(remote): \(error.message)")
        }
        print("Asked Gemini to cancel \(remote); its \(batch.photos) photos go back to the queue at the next poll.")
    }
}
