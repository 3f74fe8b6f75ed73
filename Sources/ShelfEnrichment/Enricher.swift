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
        guard !books.isEmpty else { return Outcome(books: books, notes: []) }
        let queries = books.map { SpineQuery(title: $0.title, author: $0.author, isbn: $0.isbn13.flatMap(ISBN.init)) }
        var search = CandidateSearch(sources: sources, matcher: matcher)
        search.perSource = candidatesPerSource
        let found = await search.run(queries)
        // Nothing to consult (no source configured, an empty catalogue): the model's confidence decides alone.
        guard found.anyUsable else { return Outcome(books: books, notes: []) }

        var enriched = books
        for index in books.indices {
            guard found.consulted[index] else {
                enriched[index].notes = (enriched[index].notes ?? []) + ["not_enriched: no source answered"]
                continue
            }
            enriched[index] = decide(books[index], query: queries[index], result: found.results[index],
                                     isbnRecord: found.isbnRecords[index])
        }
        return Outcome(books: enriched, notes: found.notes)
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
}
