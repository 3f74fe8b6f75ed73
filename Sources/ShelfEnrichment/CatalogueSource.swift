import ShelfCore
import ShelfMatching
import ShelfStore
import Synchronization

/// The local catalogue as a place books are looked up: a full-text search (SQLite FTS5) over folded
/// titles, authors, call numbers and series. Works offline; the matcher decides among what it finds.
package final class CatalogueSource: BookSource {
    package let name = Catalogue.source
    private let catalogue: Catalogue
    /// Words too common to search for, read once from the index (`refresh()` after an import).
    private let commonWords: Mutex<Set<String>>
    /// The entry count the common words were read at.
    private let countAtRefresh = Mutex(0)
    /// Words already counted (`countWords`), until the catalogue changes: a photo's spines share most of their
    /// candidates' words, and a daemon's photos many.
    private let counted = Mutex<[String: Int]>([:])
    static let countedCapacity = 100_000
    /// A word in more than this share of the entries (and more than `commonMinimum`) is not searched
    /// for: it would rank hundreds of entries for nothing (on the library data set, searching every word
    /// takes ten times as long).
    static let commonShare = 0.01, commonMinimum = 100
    /// Words searched for at most: the first ones read, which on a spine are as good as any.
    static let maximumWords = 16
    /// Records to ask for per spine: on the library data set the right one is among the first 20 for
    /// 99.6 % of spines (as among the first 30), and more only costs time.
    package static let searchLimit = 20

    package init(catalogue: Catalogue) throws(LookupError) {
        self.catalogue = catalogue
        commonWords = Mutex([])
        try refresh()
    }

    /// Re-reads which words are common, after the catalogue changed.
    package func refresh() throws(LookupError) {
        let common = try lookup { try catalogue.commonWords(share: Self.commonShare, minimum: Self.commonMinimum) }
        commonWords.withLock { $0 = common.words }
        countAtRefresh.withLock { $0 = common.entries }
        counted.withLock { $0 = [:] }
    }

    /// An empty catalogue cannot help: books are then decided as if it were not configured. A catalogue that
    /// changed since the common words were read (an import while the daemon runs) is read again first.
    package var isUsable: Bool {
        get async {
            guard let count = try? catalogue.count() else { return false }
            if count != countAtRefresh.withLock({ $0 }) { try? refresh() }
            return count > 0
        }
    }

    package func candidates(for query: SpineQuery, limit: Int) async throws(LookupError) -> [CatalogueRecord] {
        try search(query, limit: limit)
    }

    package func record(isbn: ISBN) async throws(LookupError) -> CatalogueRecord? {
        try lookup { try catalogue.record(isbn13: isbn.isbn13) }
    }

    package func rarity(of words: Set<String>) async -> WordRarity? { try? countWords(words) }

    /// The same as `rarity(of:)`, for callers that are not async; a catalogue that cannot be read throws.
    package func countWords(_ words: Set<String>) throws(LookupError) -> WordRarity {
        WordRarity(entries: countAtRefresh.withLock { $0 }, holding: try entriesHolding(words))
    }

    /// How many entries hold each of `words` (0: none), from memory where counted before.
    private func entriesHolding(_ words: Set<String>) throws(LookupError) -> [String: Int] {
        var known = counted.withLock { counted in words.compactMap { word in counted[word].map { (word, $0) } } }
        let missing = words.subtracting(known.map(\.0))
        if !missing.isEmpty {
            let found = try lookup { try catalogue.documentCounts(of: missing) }
            // A word the index does not hold is in no entry.
            let new = missing.map { ($0, found[$0] ?? 0) }
            counted.withLock { counted in
                if counted.count + new.count > Self.countedCapacity { counted.removeAll(keepingCapacity: true) }
                for (word, count) in new { counted[word] = count }
            }
            known += new
        }
        return Dictionary(known) { a, _ in a }
    }

    /// The same as `candidates(for:limit:)`, for callers that are not async (`shelfd catalogue match`,
    /// the benchmark). An ISBN hint's record comes first.
    package func search(_ query: SpineQuery, limit: Int) throws(LookupError) -> [CatalogueRecord] {
        var records: [CatalogueRecord] = []
        if let isbn = query.isbn, let record = try lookup({ try catalogue.record(isbn13: isbn.isbn13) }) {
            records.append(record)
        }
        records += try textSearch(query.text, limit: limit).filter { $0.key != records.first?.key }
        return Array(records.prefix(limit))
    }

    private func textSearch(_ text: String, limit: Int) throws(LookupError) -> [CatalogueRecord] {
        let words = TextNormalization.fold(text).split(separator: " ").map(String.init)
        let pieces = try lookup { try gluedPieces(of: words) }
        guard let match = ftsQuery(pieces + words) else { return [] }
        return try lookup { try catalogue.search(match, limit: limit) }
    }

    /// A word at least this long that the index does not hold may be words read without the spaces between
    /// them, or a title with the spine's decoration read as letters around it ("IROCKONOMICSIALAN": yellow bars
    /// read as I); the index's words inside it at least `pieceLength` long are searched for too.
    static let gluedLength = 8, pieceLength = 5
    /// Letters of a glued word looked into at most: its pieces grow with the square of its length.
    static let gluedLongest = 48

    /// The longest words of the index inside each long word of `words` the index does not hold (none inside
    /// another): the long words' counts (from memory once counted), and one look-up of their pieces when some is not
    /// held, so a spine's search costs its own words, not the catalogue.
    func gluedPieces(of words: [String]) throws -> [String] {
        let long = Set(words.filter { $0.count >= Self.gluedLength })
        guard !long.isEmpty else { return [] }
        let unknown = Set(try entriesHolding(long).filter { $0.value == 0 }.keys)
        guard !unknown.isEmpty else { return [] }
        var inside: [String: Set<String>] = [:]
        for word in unknown {
            let letters = Array(word.prefix(Self.gluedLongest))
            for length in Self.pieceLength..<letters.count {
                for start in 0...(letters.count - length) {
                    inside[word, default: []].insert(String(letters[start..<(start + length)]))
                }
            }
        }
        let held = try catalogue.documentCounts(of: inside.values.reduce(into: Set()) { $0.formUnion($1) })
        return unknown.sorted().flatMap { word in
            let found = (inside[word] ?? []).filter { held[$0] != nil }
            return found.filter { piece in !found.contains { $0 != piece && $0.contains(piece) } }.sorted()
        }
    }

    /// Any of the words' distinct words (the text's, folded), each quoted (FTS5 syntax never sees the text
    /// itself). Common words are left out unless there is nothing else.
    func ftsQuery(_ text: String) -> String? {
        ftsQuery(TextNormalization.fold(text).split(separator: " ").map(String.init))
    }

    func ftsQuery(_ folded: [String]) -> String? {
        var seen = Set<String>()
        let words = folded.filter { seen.insert($0).inserted }
        let common = commonWords.withLock { $0 }
        let rare = words.filter { !common.contains($0) }
        let chosen = (rare.isEmpty ? words : rare).prefix(Self.maximumWords)
        guard !chosen.isEmpty else { return nil }
        return chosen.map { "\"\($0)\"" }.joined(separator: " OR ")
    }

    private func lookup<T>(_ body: () throws -> T) throws(LookupError) -> T {
        do { return try body() } catch {
            throw LookupError.unavailable("the local catalogue could not be read: \(error)")
        }
    }
}
