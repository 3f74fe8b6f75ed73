import ArgumentParser
import Foundation
import ShelfApp
import ShelfCore

struct CatalogueStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "What the local catalogue holds and which files it was imported from.")

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the figures as JSON.") var json = false

    func run() throws {
        let (config, _, _) = try global.load(quiet: true)
        let stats = try Catalogue.desk(config, create: false)?.stats() ?? .empty
        if json { try printJSON(stats); return }
        print("entries:  \(stats.entries) (\(stats.withISBN) with an ISBN, \(stats.withTag) with a call number)")
        let formatter = ISO8601DateFormatter()
        for file in stats.imports {
            let when =
                file.finishedAt.map { formatter.string(from: $0) }
                ?? "interrupted (started \(formatter.string(from: file.startedAt)))"
            print(
                "imported: \(file.path) (\(file.format)) \(when): \(file.imported) new, \(file.duplicates) already there, \(file.skipped) skipped"
            )
        }
        if stats.imports.isEmpty { print("imported: nothing yet; add books with 'shelfd catalogue import FILE'") }
    }
}
