import Foundation
import ShelfCore
import ShelfEnrichment
import ShelfStore

/// `shelfd catalogue`: files imported into the local catalogue, what it holds, and spine texts matched against it
/// as the pipeline matches them (the same search and the same `SpineMatcher`).
package struct CatalogueDesk: Sendable {
    let store: Store

    package init(store: Store) { self.store = store }

    /// The files in the order they import best: OpenLibrary's authors dump before its editions and works, so
    /// those get their authors' names.
    package static func importOrder(_ files: [String]) -> [String] { CatalogueImporter.importOrder(files) }

    package func importFile(_ path: String) throws -> CatalogueImportReport {
        try CatalogueImporter(store: store).importFile(path)
    }

    package func stats() throws -> CatalogueStats { try store.catalogueStats() }

    /// A matcher over the catalogue as it is now, for one text after another.
    package func matching() throws -> SpineMatching { SpineMatching(source: try CatalogueSource(store: store)) }

    package struct SpineMatching: Sendable {
        let source: CatalogueSource
        let matcher = SpineMatcher()

        package func match(_ text: String) throws -> SpineMatchLine {
            let query = SpineQuery(text: text)
            return SpineMatchLine(text: text, result: matcher.decide(query, among: try source.search(query, limit: CatalogueSource.searchLimit)))
        }
    }
}
