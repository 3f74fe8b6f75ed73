import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfDaemon

struct Catalogue: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The local catalogue: books you already have, the first place a spine is looked up.",
        discussion:
            "Import a library export or an OpenLibrary dump, ask why a spine did (not) match, see what is there.",
        subcommands: [CatalogueImport.self, CatalogueMatch.self, CatalogueStatsCommand.self])

    /// The catalogue in the database it lives in; nil when there is none yet and `create` is false.
    static func desk(_ config: Configuration, create: Bool) throws -> CatalogueDesk? {
        if !create && !FileManager.default.fileExists(atPath: config.paths.database) { return nil }
        return CatalogueDesk(store: try StoreAccess.catalogue(config: config, shared: nil))
    }
}
