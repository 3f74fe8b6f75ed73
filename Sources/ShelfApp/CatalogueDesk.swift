import Foundation
import ShelfCore
import ShelfMatching
import ShelfEnrichment
import ShelfStore

/// `shelfd catalogue`: files imported into the local catalogue, what it holds, and spine texts matched against it
/// as the pipeline matches them (the same search and the same `SpineMatcher`).
package struct CatalogueDesk: Sendable {
    let catalogue: Catalogue
    private let time: TimeSource

    package init(store: Store, time: TimeSource = .system) { catalogue = store.catalogue; self.time = time }

    /// The files in the order they import best: OpenLibrary's authors dump before its editions and works, so
    /// those get their authors' names.
    package static func importOrder(_ files: [String]) -> [String] { CatalogueImporter.importOrder(files) }

    package func importFile(_ path: String) throws -> CatalogueImportReport {
        try CatalogueImporter(catalogue: catalogue, time: time).importFile(path)
    }

    package func stats() throws -> CatalogueStats { try catalogue.stats() }

    /// A matcher over the catalogue as it is now, for one text after another.
    package func matching() throws -> SpineMatching { SpineMatching(source: try CatalogueSource(catalogue: catalogue)) }

    package struct SpineMatching: Sendable {
        let source: CatalogueSource
        let matcher = SpineMatcher()

        package func match(_ text: String) throws -> SpineMatchLine {
            let query = SpineQuery(text: text)
            let records = try source.search(query, limit: CatalogueSource.searchLimit)
            let rarity = try source.countWords(WordRarity.words(of: records))
            return SpineMatchLine(text: text, result: matcher.decide(query, among: records, rarity: rarity))
        }
    }
}
