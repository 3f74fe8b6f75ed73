import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Retry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Put failed photos back in the queue with a fresh attempt count.",
        discussion: "A running daemon picks them up within seconds; otherwise the next 'shelfd run' does.")

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Requeue every failed photo.") var failed = false
    @Argument(help: ArgumentHelp("Job IDs, as listed by 'shelfd status'.", valueName: "id")) var ids: [Int64] = []

    func validate() throws {
        if failed && !ids.isEmpty { throw ValidationError("Give job IDs or --failed, not both.") }
        if !failed && ids.isEmpty {
            throw ValidationError("Nothing to retry: give job IDs (see 'shelfd status') or --failed.")
        }
    }

    func run() async throws {
        let (config, secrets, _) = try global.load(quiet: true)
        guard StoreAccess.exists(config: config) else {
            print("Nothing to retry: no photo has been queued yet.")
            return
        }
        let store = try StoreAccess.open(config: config, secrets: secrets)
        let outcome = try Requeue.failed(failed ? nil : ids, in: store, now: Date())
        print(outcome.summary)
        guard !outcome.refused.isEmpty else { return }
        for line in outcome.refusals { FileHandle.standardError.write(Data("shelfd: \(line)\n".utf8)) }
        throw ExitCode(1)
    }
}
