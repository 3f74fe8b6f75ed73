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
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The latest Batch API jobs, newest first.")

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the Batch API jobs as JSON.") var json = false
    @Option(name: .long, help: "How many to show.") var limit = 20

    func run() async throws {
        let (config, secrets, _) = try global.load(quiet: true)
        guard let store = try StoreAccess.openForReading(config: config, secrets: secrets) else {
            if json {
                try printJSON([BatchAPIJob]())
            } else {
                print("No Batch API jobs: no photo has been queued yet.")
            }
            return
        }
        let jobs = try BatchAPIJobHistory(store: store).recent(limit: limit)
        if json { try printJSON(jobs); return }
        if jobs.isEmpty { print("No Batch API jobs yet."); return }
        let formatter = ISO8601DateFormatter()
        for job in jobs {
            let ended = job.finishedAt.map { ", ended \(formatter.string(from: $0))" } ?? ", in flight"
            print(
                "\(job.name ?? "(not named yet)")  \(job.displayName)  \(job.state)  \(job.photos) photo\(job.photos == 1 ? "" : "s")  "
                    + "submitted \(formatter.string(from: job.createdAt))\(ended)")
        }
    }
}

struct BatchCancel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Ask Gemini to cancel a Batch API job; its photos go back to the queue when it has.",
        discussion:
            "The next poll (the daemon's, or the next 'shelfd run --batch') sees it cancelled and queues its photos again, no attempt used."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(
        help: ArgumentHelp(
            "The Batch API job, as 'shelfd batch list' shows it (batches/…, or its shelfd-… display name).",
            valueName: "name"))
    var name: String

    func run() async throws {
        let (config, secrets, _) = try global.load(quiet: true)
        guard let store = try StoreAccess.openForReading(config: config, secrets: secrets),
            let job = try BatchAPIJobHistory(store: store).named(name)
        else {
            throw ValidationError("No Batch API job named \(name); 'shelfd batch list' shows them.")
        }
        guard job.finishedAt == nil, let remote = job.name else {
            print(
                job.finishedAt == nil
                    ? "\(name) has no name from Gemini yet; try again in a minute."
                    : "\(name) already ended (\(job.state)).")
            return
        }
        do {
            try await Runtime.cancelBatchAPIJob(remote, config: config, secrets: secrets)
        } catch {
            throw StartupError("Could not cancel \(remote): \(error.message)")
        }
        print("Asked Gemini to cancel \(remote); its \(job.photos) photos go back to the queue at the next poll.")
    }
}
