import Foundation
import Logging
import ShelfCore
import ShelfMatching

/// Turns a photo's checked books into trusted ones: looks each up in the configured sources, in order,
/// scores the candidates itself, assigns records one-to-one across the photo, checks the model's ISBN,
/// and decides `verified` or `needs_review` (ARCHITECTURE.md, "One entry per work"; docs/reading.md, "How a book is decided").
package struct Enricher: Sendable {
    package var sources: [any BookSource]
    package var matcher: SpineMatcher
    package var reviewThreshold: Double
    /// Records asked of each source per book; the matcher ranks them itself.
    /// A record scoring below this shares next to nothing with the reading (a stray short word): no person would
    /// pick it, and offering it hides that nothing matched. Less than the author's surname alone weighs
    /// (`SpineMatcher.authorWeight`, 0.15), so a spine showing only its author ("ORWELL PENGUIN") is still offered
    /// that author's books.
    static let offerFloor = 0.1
    package var candidatesPerSource = 10
    /// Which of the given ISBNs the library already holds (`LibraryRecords.heldISBNs(among:)`); nil: no library
    /// (`shelfd eval`). Of the editions of a work a spine names, the one a person has is the one on their shelf.
    package var libraryHolds: (@Sendable (Set<String>) -> Set<String>)? = nil

    package init(sources: [any BookSource], matcher: SpineMatcher = SpineMatcher(), reviewThreshold: Double) {
        self.sources = sources; self.matcher = matcher; self.reviewThreshold = reviewThreshold
    }

    /// What enrichment made of a photo's books, and what it could not do.
    package struct Outcome: Sendable {
        package var books: [Book]
        /// Photo-level notes: a source that did not answer, books decided without any source.
        package var notes: [String]
        /// Spine texts that show too little to decide on (`isUnreadable`): kept with their place, never asked about.
        package var unread: [ResultDocument.UnreadSpine] = []
    }

    /// Why enrichment leaves a book for a person: doubts about which book it is, which the library can answer.
    package enum Reason {
        package static let lowConfidence = "low_confidence", weakMatch = "weak_match", noMatch = "no_match"
        package static let all: Set<String> = [lowConfidence, weakMatch, noMatch]
        /// A barcode's ISBN that no source knows (offline, or a book too new or too rare): the ISBN is exact, only
        /// the book's name is missing.
        package static let isbnUnresolved = "isbn_unresolved"
    }

    /// How much of a spine text's confidence is its match score; the rest is the reading's own (the OCR's).
    package static let matchWeight = 0.65
    /// A spine text that matched nothing keeps this share of its reading's confidence: below any review threshold.
    static let unmatchedFactor = 0.4

    package func enrich(_ books: [Book]) async -> Outcome {
        guard !books.isEmpty else { return Outcome(books: books, notes: []) }
        let queries = books.map(Self.query)
        var search = CandidateSearch(sources: sources, matcher: matcher)
        search.perSource = candidatesPerSource
        let found = await search.run(queries)
        // Nothing to consult (no source configured, an empty catalogue): the model's confidence decides alone.
        guard found.anyUsable else { return Outcome(books: books.map(unmatched), notes: []) }

        let held = heldEditions(found.results)
        var enriched = books
        for index in books.indices {
            guard found.consulted[index] else {
                enriched[index] = unmatched(books[index])
                enriched[index].notes = (enriched[index].notes ?? []) + ["not_enriched: no source answered"]
                continue
            }
            enriched[index] = decide(
                books[index], query: queries[index], result: Self.preferring(held, found.results[index]),
                isbnRecord: found.isbnRecords[index], authorRecord: found.authorRecords[index], held: held)
        }
        var notes = found.notes
        // One book per ISBN on a photo: a reading of a book the photo already shows exactly is that book's evidence.
        let exact = Self.exactBooks(enriched)
        var twins: [Int: Int] = [:]
        for index in books.indices {
            twins[index] = Self.twinOwner(
                at: index, among: exact, books: enriched, texts: books, results: found.results)
        }
        for (twin, owner) in twins.sorted(by: { $0.key < $1.key }) {
            enriched[owner].notes =
                (enriched[owner].notes ?? []) + ["\(Self.alsoRead): «\(books[twin].title)» (\(books[twin].source))"]
        }
        // A piece of a spine read apart joins the book it belongs to: its text is part of the spine's, its box too.
        var owners: [Int: Int] = [:]
        for index in books.indices where books[index].form == .spineText && twins[index] == nil {
            owners[index] = Self.fragmentOwner(at: index, texts: books, results: found.results)
        }
        let fragments = Set(owners.keys)
        for (piece, owner) in owners.sorted(by: { $0.key < $1.key }) where !fragments.contains(owner) {
            enriched[owner].spineText = [enriched[owner].spineText, books[piece].title].compactMap { $0 }
                .joined(separator: " ")
            if let box = enriched[owner].box, let other = books[piece].box { enriched[owner].box = box.union(other) }
        }
        if !fragments.isEmpty { notes.append("spine_fragments_joined: \(fragments.count)") }
        let unread = books.indices.filter { index in
            twins[index] == nil && !fragments.contains(index) && found.consulted[index]
                && books[index].form == .spineText && enriched[index].status == .needsReview
                && Self.isUnreadable(books[index].title, result: found.results[index])
        }
        let kept = enriched.indices.filter { twins[$0] == nil && !fragments.contains($0) && !unread.contains($0) }
            .map { enriched[$0] }
        return Outcome(
            books: kept, notes: notes,
            unread: unread.map { index in
                ResultDocument.UnreadSpine(
                    text: books[index].title, box: books[index].box, confidence: books[index].confidence)
            })
    }

    /// The note an exact book carries for each other reading of it on the photo (`twinOwner`).
    package static let alsoRead = "also_read"

    /// The books of a photo that other readings may be readings of, in the order they are preferred: those read
    /// exactly (a barcode's, an ISBN printed as digits) before the verified ones with an ISBN, each kind in the photo's
    /// order.
    static func exactBooks(_ books: [Book]) -> [Int] {
        let withISBN = books.indices.filter { books[$0].checkedISBN != nil }
        return withISBN.filter { books[$0].form == .barcode }
            + withISBN.filter { books[$0].form != .barcode && books[$0].status == .verified }
    }

    /// The book on the photo that the reading at `index` is another reading of, when it is one, among `exact` (as
    /// `exactBooks` orders them, before the reading's own place there): one with an ISBN that the reading carries or
    /// that its text is; or one read exactly whose ISBN the record the reading scores best carries (even when another
    /// reading took that record), or whose title it has (unless it was itself accepted as another edition). So a
    /// photo showing a book twice (its back and its spine, a title far from its barcode) keeps one item, the
    /// barcode's box. `books` are the photo's books as decided, `texts` as read.
    static func twinOwner(at index: Int, among exact: [Int], books: [Book], texts: [Book], results: [MatchResult])
        -> Int?
    {
        let book = books[index]
        // The record the reading scores best, whether or not another reading of the photo took it.
        let best = ([results[index].best].compactMap { $0 } + results[index].takenElsewhere).max { $0.score < $1.score }
        let title = TextNormalization.title(book.title)
        return exact.prefix { $0 != index }.first { owner in
            guard let isbn = books[owner].checkedISBN else { return false }
            if book.checkedISBN == isbn || ISBN.printed(texts[index].title) == isbn { return true }
            // Only a book read exactly stands for its record and title: beside a verified spine, a reading of the
            // author's name alone scores that spine's record as well as the author's other books.
            guard books[owner].form == .barcode else { return false }
            let sameTitle =
                books[owner].match != nil && !title.isEmpty && title == TextNormalization.title(books[owner].title)
                && !(book.status == .verified && book.checkedISBN != nil)
            return best?.record.isbn13 == isbn.isbn13 || sameTitle
        }
    }

    /// A spine's text shorter than this (letters and digits) identifies nothing: "HH", "99", "IS", a stray "N".
    static let minimumCharacters = 4
    /// A one-word text is a title only when its best record's title is nearly that word (the share of the title
    /// it covers, OCR damage forgiven): "Superintelligence" is one, "RADICAL" of "Radical Abundance" or a
    /// publisher's "VINTAGE" is not.
    static let wholeTitle = 0.8

    /// Whether a spine's text that no record was accepted for shows too little for a person to decide on: fewer than
    /// `minimumCharacters` letters and digits, one word that is no record's whole title, or under three words that
    /// match nothing. A person decides a readable title or a candidate with a real chance; the rest (a publisher's
    /// mark, a name read apart from its title, one word of a title split by the reader) would be a question per
    /// scrap. An ISBN read as text is exact, never a scrap.
    static func isUnreadable(_ text: String, result: MatchResult) -> Bool {
        guard ISBN.printed(text) == nil else { return false }
        let words = TextNormalization.fold(text).split(separator: " ")
        if words.reduce(0, { $0 + $1.count }) < minimumCharacters { return true }
        if words.count == 1 { return (result.evidence?.title ?? 0) < wholeTitle }
        return result.decision == .none && words.count < 3
    }

    /// What the sources are asked about a book: a structured reading by its title and author, a spine's text
    /// as free text in any word order.
    package static func query(_ book: Book) -> SpineQuery {
        switch book.form {
        case .structured: SpineQuery(title: book.title, author: book.author, isbn: book.isbn13.flatMap(ISBN.init))
        case .spineText: SpineQuery(text: book.title)
        // Only the ISBN: the words a model may have read beside the barcode do not make another book of it.
        case .barcode: SpineQuery(title: nil, author: nil, isbn: book.checkedISBN)
        }
    }

    /// A spine text no source could match: the text read stays its title, unsure, so it goes to review.
    func unmatched(_ book: Book) -> Book {
        guard book.form == .spineText else { return book }
        var book = book
        book.confidence = (book.confidence * Self.unmatchedFactor * 1000).rounded() / 1000
        book.status = book.confidence >= reviewThreshold ? .verified : .needsReview
        return book
    }

    /// A piece of a spine read apart from its title is not another book; it is part of the spine beside it (or
    /// across it) that shows its title. Two kinds:
    /// - the author's name alone, or a publisher's line, offered that author's other books by the matcher: by the
    ///   same author, with none of the offered title's words in its own text, beside (or over) a spine that shows
    ///   its title;
    /// - any piece whose own candidates hold the record of a spine beside or over it, which shows that record's
    ///   title while the piece does not: a subtitle printed beside the title, the authors set across the spine above.
    /// A spine carries one call-number label: a piece that shows the label of that spine's call number (its class, or
    /// its author's code) while the spine shows it too is the next book of that section (a library shelves one
    /// author's books side by side), not a piece.
    /// `texts` are the books as read (their titles the spines' texts); `results` what each matched.
    /// The spine that a piece at `index` belongs to, when it is one.
    static func fragmentOwner(at index: Int, texts: [Book], results: [MatchResult]) -> Int? {
        guard results[index].decision != .accepted, let a = texts[index].box else { return nil }
        let surname =
            results[index].decision == .review ? TextNormalization.surname(results[index].best?.record.author) : ""
        let authorsOtherBook =
            results[index].best.map { !surname.isEmpty && !showsTitle(texts[index].title, of: $0.record) } ?? false
        let offered = Set(
            (results[index].candidates.filter { $0.score >= offerFloor } + results[index].takenElsewhere).map {
                SpineMatcher.identity($0.record)
            })
        return texts.indices.first { other in
            guard other != index, texts[other].form == .spineText, results[other].decision != .none,
                let book = results[other].best?.record, showsTitle(texts[other].title, of: book),
                let b = texts[other].box
            else { return false }
            // Over it, or beside it: its middle within one and a half spines' width of the other's.
            let near =
                min(a.x2, b.x2) > max(a.x1, b.x1)
                || abs((a.x1 + a.x2) - (b.x1 + b.x2)) / 2 < 1.5 * max(a.x2 - a.x1, b.x2 - b.x1)
            guard near else { return false }
            if let label = callNumberLabel(of: book), showsLabel(texts[index].title, label),
                showsLabel(texts[other].title, label)
            {
                return false
            }
            if offered.contains(SpineMatcher.identity(book)), !showsTitle(texts[index].title, of: book) { return true }
            return authorsOtherBook && TextNormalization.surname(book.author) == surname
        }
    }

    /// What a spine's label shows of a record's call number, folded as texts are: its class ("796 422" of "796.422
    /// Ali"), every word but the last when one of them has a digit; for a call number of letters only ("N Pal"), its
    /// last word, the author's code ("pal"), unless the record's title or author holds that word, as a title's word
    /// could show it by chance.
    static func callNumberLabel(of record: CatalogueRecord) -> String? {
        let words = TextNormalization.fold(record.tag ?? "").split(separator: " ")
        guard words.count >= 2 else { return nil }
        if words.dropLast().contains(where: { $0.contains(where: \.isNumber) }) {
            return words.dropLast().joined(separator: " ")
        }
        let code = String(words.last!)
        let named = TextNormalization.fold("\(record.title) \(record.author ?? "")").split(separator: " ")
        return code.count >= 3 && !named.contains(Substring(code)) ? code : nil
    }

    /// Whether a spine's text shows a call number's label (`callNumberLabel`), as whole words.
    static func showsLabel(_ text: String, _ label: String) -> Bool {
        " \(TextNormalization.fold(text)) ".contains(" \(label) ")
    }

    /// Whether a spine's text holds a word of a record's title (three letters or more).
    static func showsTitle(_ text: String, of record: CatalogueRecord) -> Bool {
        let words = Set(TextNormalization.fold(text).split(separator: " ").map(String.init))
        return TextNormalization.title(record.title).split(separator: " ").map(String.init)
            .contains { $0.count >= 3 && words.contains($0) }
    }

    /// The ISBNs of the accepted works' editions that the library holds, asked once for the photo.
    func heldEditions(_ results: [MatchResult]) -> Set<String> {
        guard let libraryHolds else { return [] }
        let isbns = results.filter { $0.decision == .accepted && !$0.otherEditions.isEmpty }
            .flatMap { result in ([result.best].compactMap { $0 } + result.otherEditions).compactMap(\.record.isbn13) }
        return isbns.isEmpty ? [] : libraryHolds(Set(isbns))
    }

    /// An accepted work's edition the library holds (`held`) in place of the one the spine shows most, when the
    /// library holds that one not: the book a person photographs again is the copy they have.
    static func preferring(_ held: Set<String>, _ result: MatchResult) -> MatchResult {
        guard result.decision == .accepted, let best = result.best, !held.contains(best.record.isbn13 ?? ""),
            let owned = result.otherEditions.first(where: { held.contains($0.record.isbn13 ?? "") })
        else { return result }
        var result = result
        result.best = owned
        result.candidates = [owned] + result.candidates.filter { $0 != owned }
        result.otherEditions = [best] + result.otherEditions.filter { $0 != owned }
        return result
    }

    func decide(
        _ book: Book, query: SpineQuery, result: MatchResult, isbnRecord: CatalogueRecord?,
        authorRecord: CatalogueRecord?, held: Set<String> = []
    ) -> Book {
        if book.form == .barcode { return Self.resolved(book, as: isbnRecord) }
        var book = book
        var notes = book.notes ?? []
        if book.form == .spineText { book = read(book, as: result) }
        // A spine's text has no title of its own worth keeping: a plausible record (one for review) is its best
        // reading, so the book takes that record's identity, and a person confirms it (`weak_match`).
        let accepted =
            result.decision == .accepted || (book.form == .spineText && result.decision == .review)
            ? result.best : nil

        // The model's ISBN is a hint: kept only when the record it names is the book read on the spine.
        if let isbn = book.isbn13 {
            let confirmed =
                isbnRecord.map { record in
                    matcher.decide(SpineQuery(title: query.title, author: query.author), among: [record]).decision
                        == .accepted
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
            // The spine names the work; which of its editions only an ISBN on the book would tell. Not a question.
            let others = result.decision == .accepted ? result.otherEditions.compactMap(\.record.isbn13) : []
            if !others.isEmpty {
                let which =
                    held.contains(isbn)
                    ? "the edition already in the library" : "the edition whose words the spine shows"
                notes.append("edition_uncertain: \(isbn), \(which); also \(others.joined(separator: ", "))")
            }
        }

        if let accepted {
            book.match = BookMatch(
                source: accepted.record.source, key: accepted.record.key,
                score: (accepted.score * 1000).rounded() / 1000, year: accepted.record.year)
            if book.author == nil { book.author = accepted.record.author }
            // An entry of a list of titles: the author another source knows for the work, shown on the spine.
            if book.author == nil, let other = authorRecord, matcher.areEditions(other, accepted.record) {
                book.author = other.author
                notes.append("author_from: \(other.source)")
            }
        }

        var reasons: [String] = []
        if book.confidence < reviewThreshold { reasons.append(Reason.lowConfidence) }
        switch result.decision {
        case .accepted: break
        case .review: reasons.append(Reason.weakMatch)
        case .none: reasons.append(Reason.noMatch)
        }
        if reasons.isEmpty {
            book.status = .verified
            book.candidates = nil; book.reviewReasons = nil
        } else {
            book.status = .needsReview
            let offered = result.candidates.filter { $0.score >= Self.offerFloor }
            book.candidates = offered.isEmpty ? nil : offered
            book.reviewReasons = reasons
        }
        book.notes = notes.isEmpty ? nil : notes
        return book
    }

    /// A barcode's book as the record a source knows by its ISBN, verified; with none it stays for review as the
    /// pipeline made it (`isbn_unresolved`), its ISBN kept.
    static func resolved(_ book: Book, as record: CatalogueRecord?) -> Book {
        guard let record else { return book }
        var book = book
        book.title = record.title.trimmingCharacters(in: .whitespaces)
        book.author = record.author ?? book.author
        book.match = BookMatch(source: record.source, key: record.key, score: 1, year: record.year)
        book.status = .verified
        book.reviewReasons = nil; book.candidates = nil
        return book
    }

    /// A spine's text as the record it matched, when the match is at least plausible (accepted or for review):
    /// the record's title and author, and a confidence mixing the match score with the reading's own. A match
    /// the matcher would not accept stays below its accept threshold, whatever the reading said. A spine that
    /// matched nothing keeps its text.
    func read(_ book: Book, as result: MatchResult) -> Book {
        guard let best = result.best, result.decision != .none else { return unmatched(book) }
        var book = book
        book.spineText = book.title
        book.title = best.record.title.trimmingCharacters(in: .whitespaces)
        book.author = best.record.author
        var confidence = Self.matchWeight * best.score + (1 - Self.matchWeight) * book.confidence
        if result.decision == .review { confidence = min(confidence, matcher.acceptThreshold - 0.05) }
        book.confidence = (confidence * 1000).rounded() / 1000
        return book
    }
}
