import Foundation
import Logging
import ShelfCore

/// Turns a photo's checked books into trusted ones: looks each up in the configured sources, in order,
/// scores the candidates itself, assigns records one-to-one across the photo, checks the model's ISBN,
/// and decides `verified` or `needs_review` (DESIGN §7, issue 4 items 2, 3 and 5).
package struct Enricher: Sendable {
    package var sources: [any BookSource]
    package var matcher: SpineMatcher
    package var reviewThreshold: Double
    /// Records asked of each source per book; the matcher ranks them itself.
    package var candidatesPerSource = 10

    package init(sources: [any BookSource], matcher: SpineMatcher = SpineMatcher(), reviewThreshold: Double) {
        self.sources = sources; self.matcher = matcher; self.reviewThreshold = reviewThreshold
    }

    /// What enrichment made of a photo's books, and what it could not do.
    package struct Outcome: Sendable {
        package var books: [Book]
        /// Photo-level notes: a source that did not answer, books decided without any source.
        package var notes: [String]
    }

    package func enrich(_ books: [Book]) async -> Outcome {
        var usable: [any BookSource] = []
        for source in sources where await source.isUsable { usable.append(source) }
        // Nothing to consult (no source configured, an empty catalogue): the model's confidence decides alone.
        guard !usable.isEmpty, !books.isEmpty else { return Outcome(books: books, notes: []) }

        let queries = books.map { SpineQuery(title: $0.title, author: $0.author, isbn: $0.isbn13.flatMap(ISBN.init)) }
        var pools = [[CatalogueRecord]](repeating: [], count: books.count)
        var isbnRecords = [CatalogueRecord?](repeating: nil, count: books.count)
        var consulted = [Bool](repeating: false, count: books.count)
        var notes: [String] = []

        for source in usable {
            for index in books.indices where !isSettled(queries[index], pools[index]) {
                do {
                    if let isbn = queries[index].isbn, isbnRecords[index] == nil,
                       let record = try await source.record(isbn: isbn) {
                        isbnRecords[index] = record
                        Self.add(record, to: &pools[index])
                    }
                    for record in try await source.candidates(for: queries[index], limit: candidatesPerSource) {
                        Self.add(record, to: &pools[index])
                    }
                    consulted[index] = true
                } catch {
                    notes.append("enrichment_unavailable: \(source.name): \(error)")
                    // A source that is down or refusing answers no better for the next book.
                    break
                }
            }
        }

        let results = matcher.assign(queries, candidates: pools)
        var enriched = books
        for index in books.indices {
            guard consulted[index] else {
                enriched[index].notes = append("not_enriched: no source answered", to: enriched[index].notes)
                continue
            }
            enriched[index] = decide(books[index], query: queries[index], result: results[index],
                                     isbnRecord: isbnRecords[index])
        }
        return Outcome(books: enriched, notes: notes)
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

    /// A book already has an accepted match: later sources are not asked about it.
    private func isSettled(_ query: SpineQuery, _ pool: [CatalogueRecord]) -> Bool {
        !pool.isEmpty && matcher.decide(query, among: pool).decision == .accepted
    }

    func decide(_ book: Book, query: SpineQuery, result: MatchResult, isbnRecord: CatalogueRecord?) -> Book {
        var book = book
        var notes = book.notes ?? []
        let accepted = result.decision == .accepted ? result.best : nil

        // The model's ISBN is a hint: kept only when the record it names is the book read on the spine.
        if let isbn = book.isbn13 {
            let confirmed = isbnRecord.map { record in
                matcher.decide(SpineQuery(title: query.title, author: query.author), among: [record]).decision == .accepted
            } ?? false
            if !confirmed {
                let named = isbnRecord.map { " names «\($0.title)»" } ?? " is in no source"
                book.isbn13 = nil; book.isbn10 = nil
                if let record = accepted?.record, let replacement = record.isbn13 {
                    book.isbn13 = replacement; book.isbn10 = record.isbn10
                    notes.append("isbn_replaced: \(isbn)\(named); \(replacement) from \(record.source)")
                } else {
                    notes.append("isbn_dropped: \(isbn)\(named)")
                }
            }
        } else if let record = accepted?.record, let isbn = record.isbn13 {
            book.isbn13 = isbn; book.isbn10 = record.isbn10
        }

        if let accepted {
            book.match = BookMatch(source: accepted.record.source, key: accepted.record.key,
                                   score: (accepted.score * 1000).rounded() / 1000, year: accepted.record.year)
            if book.author == nil { book.author = accepted.record.author }
        }

        var reasons: [String] = []
        if book.confidence < reviewThreshold { reasons.append("low_confidence") }
        switch result.decision {
        case .accepted: break
        case .review: reasons.append("weak_match")
        case .none: reasons.append("no_match")
        }
        if reasons.isEmpty {
            book.status = .verified
            book.candidates = nil; book.reviewReasons = nil
        } else {
            book.status = .needsReview
            book.candidates = result.candidates.isEmpty ? nil : result.candidates
            book.reviewReasons = reasons
        }
        book.notes = notes.isEmpty ? nil : notes
        return book
    }

    private func append(_ note: String, to notes: [String]?) -> [String] { (notes ?? []) + [note] }
}
