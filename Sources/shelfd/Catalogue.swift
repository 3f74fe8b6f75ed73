import ArgumentParser
import Foundation
import ShelfConfig
import ShelfDaemon
import ShelfStore

struct Catalogue: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The local catalogue: books you already have, the first place a spine is looked up.",
        discussion: "Import a library export or an OpenLibrary dump, ask why a spine did (not) match, see what is there.",
        subcommands: [CatalogueImport.self, CatalogueMatch.self, CatalogueStatsCommand.self])

    /// The database the catalogue lives in; nil when there is none yet and `create` is false.
    static func store(_ config: Configuration, create: Bool) throws -> Store? {
        if !create && !FileManager.default.fileExists(atPath: config.paths.database) { return nil }
        return try StoreAccess.catalogue(config: config, shared: nil)
    }
}
