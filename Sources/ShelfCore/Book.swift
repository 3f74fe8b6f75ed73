import Foundation

/// One book in a result: a detection after checking (ISBN), the threshold and dedupe.
package struct Book: Sendable, Equatable, Codable {
    package enum Status: String, Sendable, Codable { case verified, needsReview = "needs_review" }

    package var title: String
    package var author: String?
    package var isbn13: String?
    package var isbn10: String?
    package var confidence: Double
    package var box: Box?
    package var status: Status
    /// The provider that read it.
    package var source: String
    /// What was changed or dropped while checking ("isbn_checksum_failed: 9780441172718").
    package var notes: [String]?
    /// The catalogue record this book was matched to, when the match was accepted.
    package var match: BookMatch?
    /// The best records found, best first, for a book that needs review.
    package var candidates: [MatchCandidate]?
    /// Why a person is asked (`low_confidence`, `weak_match`, `no_match`, `ambiguous_match`).
    package var reviewReasons: [String]?
    /// `review/<id>.json` while the book is waiting for a person.
    package var reviewID: String?
    /// How the provider read it; not written: once enriched, a book is what the result says.
    package var form = ReadingForm.structured
    /// Which way its text runs on the upright photo, when the reader knew it: the review page's crop is turned by it.
    package var textRun: TextRun?
    /// What the reader read on the spine, word for word, when a record's title and author took its place: shown
    /// beside the candidates, so that a person judges them against the spine's own words.
    package var spineText: String?

    enum CodingKeys: String, CodingKey {
        case title, author, isbn13, isbn10, confidence, box, status, source, notes, match, candidates,
            reviewReasons = "review_reasons", reviewID = "review_id", textRun = "text_run", spineText = "spine_text"
    }

    package init(
        title: String, author: String?, isbn13: String?, isbn10: String?, confidence: Double, box: Box?,
        status: Status, source: String, notes: [String]? = nil, match: BookMatch? = nil
    ) {
        self.title = title; self.author = author; self.isbn13 = isbn13; self.isbn10 = isbn10
        self.confidence = confidence; self.box = box; self.status = status; self.source = source; self.notes = notes
        self.match = match
    }

    /// The key a new work is filed under (ARCHITECTURE.md, "One entry per work"): its matched record, else normalised title + author surname.
    package var workKey: String { matchKey ?? titleKey }

    /// The matched record as `<source>:<key>`, nil when unmatched. The local catalogue's keys already name it
    /// (`catalogue:12`); OpenLibrary's and Google's do not.
    package var matchKey: String? {
        guard let match else { return nil }
        return match.key.hasPrefix("\(match.source):") ? match.key : "\(match.source):\(match.key)"
    }

    /// The matched record among the candidates a book for review keeps; nil when unmatched or not kept.
    package var matchedRecord: CatalogueRecord? {
        guard let match else { return nil }
        return candidates?.first { $0.record.source == match.source && $0.record.key == match.key }?.record
    }

    /// Normalised title + author surname, whether or not the book was matched.
    package var titleKey: String { Self.titleKey(title: title, author: author) }

    /// The ISBN that counts for identity: `isbn13`, else `isbn10`, only when its checksum passes, as ISBN-13.
    package var checkedISBN: ISBN? { isbn13.flatMap(ISBN.init) ?? isbn10.flatMap(ISBN.init) }

    /// The same work (ARCHITECTURE.md, "One entry per work"): a shared checked ISBN, or the same matched record, or, when one or both
    /// are unmatched, the same normalised title and author surname. Two books matched to different records
    /// with no ISBN in common are two works, whatever their titles.
    package func isSameWork(as other: Book) -> Bool {
        if let isbn = checkedISBN, isbn == other.checkedISBN { return true }
        if let matchKey, let otherKey = other.matchKey { return matchKey == otherKey }
        return titleKey == other.titleKey
    }

    package static func titleKey(title: String, author: String?) -> String {
        "title:\(TextNormalization.title(title))|\(TextNormalization.surname(author))"
    }
}

/// Turns a model's detections into checked books: ISBN checksum, one threshold, dedupe within the photo.
package struct BookChecker: Sendable {
    /// Below it a book is `needs_review` (docs/reading.md, "How a book is decided": one threshold, default 0.60).
    package var reviewThreshold: Double

    package init(reviewThreshold: Double = 0.60) { self.reviewThreshold = reviewThreshold }

    package func check(_ detections: [Detection], source: String) -> [Book] {
        var books: [Book] = []
        for detection in detections {
            let title = detection.title.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !title.isEmpty else { continue }
            let author = detection.author?.trimmingCharacters(in: .whitespacesAndNewlines)
            var notes: [String] = []
            var isbn: ISBN?
            if let raw = detection.isbn?.trimmingCharacters(in: .whitespaces), !raw.isEmpty {
                isbn = ISBN(raw)
                if isbn == nil { notes.append("isbn_checksum_failed: \(raw)") }
            }
            var book = Book(
                title: title, author: (author?.isEmpty ?? true) ? nil : author,
                isbn13: isbn?.isbn13, isbn10: isbn?.isbn10,
                confidence: detection.confidence, box: detection.box?.rounded,
                status: detection.confidence >= reviewThreshold ? .verified : .needsReview,
                source: source, notes: notes.isEmpty ? nil : notes)
            book.form = detection.form
            book.textRun = detection.textRun
            if let existing = books.firstIndex(where: { $0.isSameWork(as: book) }) {
                // A repeat sighting in the same photo raises confidence; it does not add a book.
                if book.confidence > books[existing].confidence {
                    books[existing].confidence = book.confidence
                    books[existing].status = book.status
                }
                if books[existing].isbn13 == nil, let isbn = book.isbn13 {
                    books[existing].isbn13 = isbn; books[existing].isbn10 = book.isbn10
                }
            } else {
                books.append(book)
            }
        }
        return books
    }
}
