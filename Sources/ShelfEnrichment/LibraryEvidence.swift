import Foundation
import ShelfCore
import ShelfMatching

/// The library as a source (docs/reading.md, "How a book is decided"): a person's library is the best catalogue shelfd has.
/// A reading the sources left for review is compared with the verified works of the library under the same
/// normalised title, whose surname is the reading's or who was read with none:
/// - such a work is offered first among the candidates, labelled with the shelf it was seen on;
/// - a reading as a model gave it (title and author, not a spine's raw text), or a spine's text the matcher read as
///   the work's own record, clearly ahead of any other, is taken as a sighting of the work, without asking, when the
///   work was seen on this photo's shelf (its sub-folder of incoming/; a photo at the top has none) in an earlier
///   photo and no other work of the library, nor a candidate of the sources, has that title. A shelf photographed
///   again thus needs no answer for the books it showed before.
/// Two works matched to different records are never joined by a title: a work is taken only when it is the one
/// work of that title anywhere shelfd looked.
///
/// An ISBN is a work's own: a reading in doubt that carries the ISBN of a verified work (the library's, or a book
/// another photo of the batch verified) is a sighting of that work, wherever it stands: a barcode no source knew, once
/// a person named its book, and a spine's weak match to an edition the person has, when the spine shows a word of its
/// title. One book per ISBN, never a twin to review.
package struct LibraryEvidence: Sendable {
    package var matcher: SpineMatcher

    package init(matcher: SpineMatcher) { self.matcher = matcher }

    /// The keys worth looking up (`LibraryRecords.works(under:besides:)`): the normalised titles of the readings
    /// waiting for review, and the ISBNs of those waiting only for their book's name (`waitsForName`).
    package static func keys(of books: [Book]) -> Set<String> {
        Set(
            books.filter(isInDoubt).map { TextNormalization.title($0.title) }.filter { !$0.isEmpty }
                + books.filter(waitsForName).compactMap { $0.checkedISBN.map { LibraryWork.isbnKey($0.isbn13) } })
    }

    /// The keys a verified book is a work under: its normalised title and its ISBN.
    package static func keys(naming book: Book) -> [String] {
        [TextNormalization.title(book.title)]
            + [book.checkedISBN.map { LibraryWork.isbnKey($0.isbn13) }].compactMap { $0 }
    }

    /// `stored` (works by key) with the verified books of the photos read with this one, each a work seen on its
    /// photo's shelf (nil: the top of incoming/) under each of its keys (`keys(naming:)`). A book that is the same
    /// work as a stored one or one added before (`Book.isSameWork`, the rule the commit files it by) adds its shelf to
    /// that work rather than being a second work of the key.
    package static func works(_ stored: [String: [LibraryWork]], adding books: [(book: Book, shelf: String?)])
        -> [String: [LibraryWork]]
    {
        var works = stored
        for (book, shelf) in books {
            for key in keys(naming: book) { add(book, seenOn: shelf ?? "", under: key, to: &works) }
        }
        return works
    }

    private static func add(
        _ book: Book, seenOn here: String, under key: String, to works: inout [String: [LibraryWork]]
    ) {
        var list = works[key] ?? []
        let same = list.firstIndex { work in
            book.isSameWork(
                as: Book(
                    title: work.title, author: work.author, isbn13: work.isbn13, isbn10: work.isbn10,
                    confidence: 1, box: nil, status: .verified, source: LibraryWork.source, match: work.match))
        }
        if let same {
            list[same].shelves.insert(here)
            list[same].lastShelf = here
        } else {
            list.append(
                LibraryWork(
                    key: book.workKey, title: book.title, author: book.author, isbn13: book.isbn13,
                    isbn10: book.isbn10, match: book.match, shelves: [here], lastShelf: here))
        }
        works[key] = list
    }

    /// A reading left for review only in doubt of which book it is (`Enricher.Reason`): one that waits for something
    /// else (the accurate provider not asked yet) keeps waiting.
    static func isInDoubt(_ book: Book) -> Bool {
        book.status == .needsReview && Set(book.reviewReasons ?? []).isSubset(of: Enricher.Reason.all)
    }

    /// A reading with an ISBN left for review only in doubt of which book it is, or of the name of the book its exact
    /// ISBN is (`Enricher.Reason.isbnUnresolved`).
    static func waitsForName(_ book: Book) -> Bool {
        book.status == .needsReview && book.checkedISBN != nil
            && Set(book.reviewReasons ?? []).isSubset(of: Enricher.Reason.all.union([Enricher.Reason.isbnUnresolved]))
    }

    /// The one work whose edition `book`'s ISBN is, when the reading is that work: any reading with the ISBN exact (a
    /// barcode's, a model's the sources confirmed), a spine's weak match only when its text shows a word of the work's
    /// title.
    static func edition(of book: Book, among works: [String: [LibraryWork]]) -> LibraryWork? {
        guard waitsForName(book), let isbn = book.checkedISBN,
            let held = works[LibraryWork.isbnKey(isbn.isbn13)], held.count == 1
        else { return nil }
        guard book.form == .spineText else { return held[0] }
        return Enricher.showsTitle(book.spineText ?? book.title, of: held[0].record) ? held[0] : nil
    }

    /// `books` with the library's evidence: `works` by normalised title (`LibraryStore.works(titled:besides:)` or a
    /// commit's `CommitLookup`, with `works(_:adding:)`'s), `shelf` this photo's (nil at the top of incoming/).
    package func apply(to books: [Book], shelf: String?, works: [String: [LibraryWork]]) -> [Book] {
        books.map { book in
            if let work = Self.edition(of: book, among: works), let isbn = book.checkedISBN {
                return taken(book, as: work, because: "its ISBN \(isbn.isbn13)")
            }
            guard Self.isInDoubt(book) else { return book }
            let title = TextNormalization.title(book.title)
            let sameTitle = works[title] ?? []
            let surname = TextNormalization.surname(book.author)
            let fitting = sameTitle.filter { surname.isEmpty || TextNormalization.surname($0.author) == surname }
            guard !fitting.isEmpty else { return book }
            if let shelf, book.form == .structured || isRead(book, as: fitting[0]), fitting.count == 1,
                sameTitle.count == 1,
                fitting[0].shelves.contains(shelf),
                !(book.candidates ?? []).contains(where: { Self.isOther($0.record, than: fitting[0], title: title) })
            {
                return taken(book, as: fitting[0], because: "seen on shelf \(shelf) before")
            }
            return offered(book, fitting, shelf: shelf)
        }
    }

    /// Whether a spine's text was read as the work's own record, ahead of any other record by the matcher's acceptance
    /// lead: the only doubt left was whether the spine confirms that record, and the work standing on this shelf does.
    func isRead(_ book: Book, as work: LibraryWork) -> Bool {
        guard book.form == .spineText, let match = book.match, let record = work.match,
            match.source == record.source, match.key == record.key,
            let candidates = book.candidates, let best = candidates.first,
            best.record.source == match.source, best.record.key == match.key
        else { return false }
        let runnerUp = candidates.dropFirst().first { $0.record.source != match.source || $0.record.key != match.key }
        return best.score - (runnerUp?.score ?? 0) >= matcher.acceptance.lead
    }

    /// A source's candidate of the same title that is another work: not the work's record, and by another author
    /// (or by none named).
    static func isOther(_ record: CatalogueRecord, than work: LibraryWork, title: String) -> Bool {
        guard TextNormalization.title(record.title) == title else { return false }
        if let match = work.match, record.source == match.source, record.key == match.key { return false }
        return TextNormalization.surname(record.author) != TextNormalization.surname(work.author)
    }

    /// The reading as a sighting of `work`: its title, author, ISBN (the reading's own, when it has one) and record,
    /// verified; `reason` says in its note what made it the work.
    func taken(_ book: Book, as work: LibraryWork, because reason: String) -> Book {
        var book = book
        book.title = work.title; book.author = work.author
        if book.checkedISBN == nil { book.isbn13 = work.isbn13; book.isbn10 = work.isbn10 }
        book.match = work.match
        book.status = .verified
        book.candidates = nil; book.reviewReasons = nil
        book.notes =
            (book.notes ?? []) + [
                "\(LibraryWork.sightingNote): «\(work.title)» (\(work.key)), \(reason)"
            ]
        return book
    }

    /// The works first among the reading's candidates, the ones seen on this shelf first, each scored as the
    /// matcher scores a record; a candidate the sources gave for the same record is not listed twice.
    func offered(_ book: Book, _ works: [LibraryWork], shelf: String?) -> Book {
        var book = book
        let query = Enricher.query(book)
        let here = shelf ?? "" // the top of incoming/ is "" in a work's shelves
        let ordered = works.filter { $0.shelves.contains(here) } + works.filter { !$0.shelves.contains(here) }
        let library = ordered.map { work in
            MatchCandidate(
                record: work.record, score: matcher.decide(query, among: [work.record]).best?.score ?? 0,
                libraryShelf: work.shelves.contains(here) ? here : work.lastShelf)
        }
        let keys = Set(library.map { "\($0.record.source):\($0.record.key)" })
        book.candidates =
            library + (book.candidates ?? []).filter { !keys.contains("\($0.record.source):\($0.record.key)") }
        return book
    }
}
