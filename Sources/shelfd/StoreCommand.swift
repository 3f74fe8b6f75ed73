import ArgumentParser
import Foundation
import ShelfDaemon

struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "The store itself: SQLite on this machine, or PostgreSQL ([store] url).",
        subcommands: [StoreMigrate.self])
}

struct StoreMigrate: AsyncParsableCommand {
    /// Where a copy can come from; SQLite, this machine's state folder, is the one there is.
    enum Source: String, ExpressibleByArgument, CaseIterable { case sqlite }

    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy this machine's SQLite state into the PostgreSQL database of [store] url, once.",
        discussion: """
            Copies the queue, library, review, provider health, budgets and caches in one transaction, keeping ids, and \
            checks that PostgreSQL then holds as many rows as SQLite. Refused when the PostgreSQL database already has \
            photos or jobs, or while 'shelfd watch' runs on this state folder. The local catalogue stays in SQLite.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(
        name: .long,
        help: ArgumentHelp("Where the state is now: sqlite (this machine's state folder).", valueName: "store"))
    var from: Source
    @Flag(name: .long, help: "Count what would be copied, per table, and change nothing.") var dryRun = false

    func run() async throws {
        let (config, secrets, _) = try global.load(quiet: true)
        let report = try StoreMigration.fromSQLite(config: config, secrets: secrets, dryRun: dryRun)
        for line in report.lines { print(line) }
    }
}
