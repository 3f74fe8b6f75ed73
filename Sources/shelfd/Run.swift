import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One pass for cron or a timer: rescan incoming/, process everything due, exit.",
        discussion: "Exits 0 when everything is done, 3 when some photo failed or could not be processed now.")

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Ask OpenLibrary and Google Books again instead of using their cached answers.")
    var refresh = false
    @Flag(name: .long, help: "Print the final status as JSON.") var json = false
    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Send due photos to Gemini's Batch API (half the price, answers within hours) and wait for the answers.",
            discussion: "Interrupted, the Batch API jobs go on; the next run or the daemon collects them.")) var batch =
        false

    func run() async throws {
        Shutdown.rememberEarlySignals()
        let (config, secrets, logger) = try global.load()
        let runtime = try Runtime.start(config: config, secrets: secrets, logger: logger, refreshLookups: refresh)
        let report = try await OneShot(runtime: runtime, logger: logger, batchMode: batch).run()
        if json {
            try printJSON(report.status)
        } else {
            print(
                "Queued \(report.queued) new photo\(report.queued == 1 ? "" : "s"). \(StatusReport.summary(report.status))."
            )
        }
        if let warning = report.warning { FileHandle.standardError.write(Data("shelfd: \(warning)\n".utf8)) }
        if report.warning != nil || report.status.isDegraded { throw ExitCode(3) }
    }
}
