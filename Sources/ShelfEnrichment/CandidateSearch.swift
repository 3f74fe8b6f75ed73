import ShelfCore
import ShelfMatching

/// Candidates for one photo's spines, from the sources in order: a source is asked only about the spines no
/// earlier one matched, a source that fails is not asked about the next spine, and the records are then
/// assigned one-to-one across the photo. A spine matched to a record without an author (an entry of a list of
/// titles) is then looked up in the sources not yet asked, for that author. Shared by the enrichment of a model's
/// books and the `ocr` provider.
package struct CandidateSearch: Sendable {
    package var sources: [any BookSource]
    package var matcher: SpineMatcher
    /// Records asked of each source per spine; the matcher ranks them itself.
    package var perSource = 10

    package init(sources: [any BookSource], matcher: SpineMatcher) {
        self.sources = sources; self.matcher = matcher
    }

    package struct Found: Sendable {
        /// Per spine: the best records, decided; `.none` with no candidates when no source was asked.
        package var results: [MatchResult]
        /// Per spine: the record its ISBN hint names, when a source knows it.
        package var isbnRecords: [CatalogueRecord?]
        /// Per spine: whether any source answered about it.
        package var consulted: [Bool]
        /// A source that could not be asked (`enrichment_unavailable: openlibrary: …`).
        package var notes: [String]
        /// Whether any source could help at all (an empty catalogue cannot).
        package var anyUsable: Bool
        /// Per spine: when its best record has no author (an entry of a list of titles), another source's record of
        /// the same work whose author the spine shows (`authorRecord`).
        package var authorRecords: [CatalogueRecord?]
    }

    package func run(_ queries: [SpineQuery]) async -> Found {
        var usable: [any BookSource] = []
        for source in sources where await source.isUsable { usable.append(source) }
        var pools = [[CatalogueRecord]](repeating: [], count: queries.count)
        var isbnRecords = [CatalogueRecord?](repeating: nil, count: queries.count)
        var consulted = [Bool](repeating: false, count: queries.count)
        var asked = [Set<String>](repeating: [], count: queries.count)
        var notes: [String] = []
        var rarity = WordRarity.unknown, counted = Set<String>()
        var down = Set<String>()
        /// How rare the words of these records' titles are, in the sources that can count them.
        func count(_ records: [CatalogueRecord]) async {
            let words = WordRarity.words(of: records).subtracting(counted)
            guard !words.isEmpty else { return }
            counted.formUnion(words)
            for source in usable {
                if let found = await source.rarity(of: words) { rarity = rarity.merging(found) }
            }
        }

        for source in usable {
            for index in queries.indices {
                await count(pools[index])
                guard !isSettled(queries[index], pools[index], rarity: rarity) else { continue }
                do {
                    if let isbn = queries[index].isbn, isbnRecords[index] == nil,
                        let record = try await source.record(isbn: isbn)
                    {
                        isbnRecords[index] = record
                        Self.add(record, to: &pools[index])
                    }
                    // A barcode's query is its ISBN alone: there are no words to search by.
                    if !queries[index].text.isEmpty {
                        for record in try await source.candidates(for: queries[index], limit: perSource) {
                            Self.add(record, to: &pools[index])
                        }
                    }
                    consulted[index] = true
                    asked[index].insert(source.name)
                } catch {
                    notes.append("enrichment_unavailable: \(source.name): \(error)")
                    // A source that is down or refusing answers no better for the next spine.
                    down.insert(source.name)
                    break
                }
            }
        }
        for pool in pools { await count(pool) }
        let results = matcher.assign(queries, candidates: pools, rarity: rarity)
        var authorRecords = [CatalogueRecord?](repeating: nil, count: queries.count)
        for index in queries.indices {
            guard let best = results[index].best?.record, best.author == nil, queries[index].author == nil,
                !queries[index].text.isEmpty
            else { continue }
            authorRecords[index] = authorRecord(of: best, for: queries[index], among: pools[index])
            for source in usable where authorRecords[index] == nil && !asked[index].contains(source.name) {
                guard !down.contains(source.name), source.name != best.source else { continue }
                do {
                    let records = try await source.candidates(for: queries[index], limit: perSource)
                    authorRecords[index] = authorRecord(of: best, for: queries[index], among: records)
                } catch {
                    notes.append("enrichment_unavailable: \(source.name): \(error)")
                    down.insert(source.name)
                }
            }
        }
        return Found(
            results: results, isbnRecords: isbnRecords, consulted: consulted, notes: notes,
            anyUsable: !usable.isEmpty, authorRecords: authorRecords)
    }

    /// A record of the same work as `record`, which has no author (an entry of a list of titles), from another
    /// source, whose author the spine shows: the author the list left out. The spine must show it, since a source
    /// also knows other books of the same title.
    private func authorRecord(of record: CatalogueRecord, for query: SpineQuery, among records: [CatalogueRecord])
        -> CatalogueRecord?
    {
        records.first { other in
            other.source != record.source && other.author?.isEmpty == false && matcher.areEditions(other, record)
                && matcher.showsAuthor(of: other, in: query)
        }
    }

    /// One record per work and source: an edition found by its ISBN and the same work found by a search are
    /// one candidate, with the work's first year (an edition's year is only when that printing appeared).
    static func add(_ record: CatalogueRecord, to pool: inout [CatalogueRecord]) {
        guard let index = pool.firstIndex(where: { $0.source == record.source && $0.key == record.key }) else {
            return pool.append(record)
        }
        if let year = record.year, year < pool[index].year ?? .max { pool[index].year = year }
        if pool[index].isbn13 == nil { pool[index].isbn13 = record.isbn13; pool[index].isbn10 = record.isbn10 }
        if pool[index].author == nil { pool[index].author = record.author }
    }

    /// A spine already has an accepted match: later sources are not asked about it.
    private func isSettled(_ query: SpineQuery, _ pool: [CatalogueRecord], rarity: WordRarity) -> Bool {
        if query.text.isEmpty { return query.isbn != nil && !pool.isEmpty }
        return !pool.isEmpty && matcher.decide(query, among: pool, rarity: rarity).decision == .accepted
    }
}
