import Foundation
import ShelfCore
import ShelfMatching

/// Why a source gave no answer. A source that answered "nothing found" returns an empty list instead.
package enum LookupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Network down, 5xx, timeout: try again later; meanwhile decide without this source.
    case unavailable(String)
    /// 429 or a spent daily quota: not asked again before `until`.
    case rateLimited(until: Date?)
    /// 401/403, a wrong key: not asked again until the configuration changes.
    case refused(String)

    package var description: String {
        switch self {
        case .unavailable(let reason): "unavailable: \(reason)"
        case .rateLimited(let until): "rate limited" + (until.map { " until \($0)" } ?? "")
        case .refused(let reason): "refused: \(reason)"
        }
    }
}

/// A place books are looked up: the local catalogue, OpenLibrary, Google Books.
package protocol BookSource: Sendable {
    /// `catalogue`, `openlibrary`, `googlebooks`: the name in `enrich.sources` and in `match.source`.
    var name: String { get }
    /// Records that may be the book on this spine, in the source's own order, at most `limit`.
    /// The caller scores them; a source never decides.
    func candidates(for query: SpineQuery, limit: Int) async throws(LookupError) -> [CatalogueRecord]
    /// The record an ISBN names, or nil when the source does not know it.
    func record(isbn: ISBN) async throws(LookupError) -> CatalogueRecord?
    /// False when asking cannot help (a catalogue nothing was imported into): the source is then skipped
    /// as if it were not configured, so an empty catalogue never sends every book to review.
    var isUsable: Bool { get async }
    /// How many of the source's records hold each of these folded words, when it can count them (the local
    /// catalogue can; a remote source cannot, and says nil).
    func rarity(of words: Set<String>) async -> WordRarity?
}

extension BookSource {
    package var isUsable: Bool { get async { true } }
    package func rarity(of words: Set<String>) async -> WordRarity? { nil }
}
