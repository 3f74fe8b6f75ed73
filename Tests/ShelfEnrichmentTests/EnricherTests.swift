import Foundation
import ShelfCore
import ShelfMatching
@testable import ShelfEnrichment
import Synchronization
import Testing

/// An in-memory source that counts what it is asked and can be told to fail.
final class ListSource: BookSource, @unchecked Sendable {
    let name: String
    let records: [CatalogueRecord]
    let failure: LookupError?
    private let asked = Mutex(0)
    var askedCount: Int { asked.withLock { $0 } }

    init(_ name: String, _ records: [CatalogueRecord], failing failure: LookupError? = nil) {
        self.name = name; self.records = records; self.failure = failure
    }

    func candidates(for query: SpineQuery, limit: Int) async throws(LookupError) -> [CatalogueRecord] {
        asked.withLock { $0 += 1 }
        if let failure { throw failure }
        let words = Set(TextNormalization.fold(query.text).split(separator: " ").map(String.init))
        return records.filter { record in
            !words.isDisjoint(with: TextNormalization.fold(record.title).split(separator: " ").map(String.init))
        }.prefix(limit).map { $0 }
    }

    func record(isbn: ISBN) async throws(LookupError) -> CatalogueRecord? {
        if let failure { throw failure }
        return records.first { $0.isbn13 == isbn.isbn13 }
    }
}

private let duneRecord = CatalogueRecord(
    source: "catalogue", key: "catalogue:1", title: "Dune", author: "Herbert, Frank",
    isbn13: "9780441172719", isbn10: "0441172717", year: 1965)
private let emmaRecord = CatalogueRecord(
    source: "catalogue", key: "catalogue:2", title: "Emma", author: "Austen, Jane",
    isbn13: "9780141439587", isbn10: "0141439580", year: 1815)

private func read(_ title: String, _ author: String?, isbn: String? = nil, confidence: Double = 0.9) -> Book {
    let checked = isbn.flatMap(ISBN.init)
    return Book(
        title: title, author: author, isbn13: checked?.isbn13, isbn10: checked?.isbn10, confidence: confidence,
        box: nil, status: confidence >= 0.6 ? .verified : .needsReview, source: "gemini")
}

@Suite struct EnricherTests {
    @Test func withNothingToConsultTheModelsConfidenceDecides() async {
        let enricher = Enricher(sources: [], reviewThreshold: 0.6)
        let books = [read("Dune", "Frank Herbert"), read("Smudge", nil, confidence: 0.3)]
        #expect(await enricher.enrich(books).books == books)
    }

    @Test func aStrongMatchVerifiesTheBookAndFillsItsEdition() async throws {
        let enricher = Enricher(sources: [ListSource("catalogue", [duneRecord, emmaRecord])], reviewThreshold: 0.6)
        let book = try #require(await enricher.enrich([read("Dune", "Frank Herbert")]).books.first)
        #expect(book.status == .verified)
        #expect(book.match?.key == "catalogue:1" && book.match?.source == "catalogue" && book.match?.year == 1965)
        #expect(book.isbn13 == "9780441172719" && book.isbn10 == "0441172717")
        #expect(book.title == "Dune") // the display title stays as read
        #expect(book.candidates == nil && book.reviewReasons == nil)
    }

    @Test func aModelsISBNNamingAnotherBookIsReplacedAndNoted() async throws {
        let enricher = Enricher(sources: [ListSource("catalogue", [duneRecord, emmaRecord])], reviewThreshold: 0.6)
        // A valid checksum, but the catalogue says it is Emma.
        let book = try #require(
            await enricher.enrich([read("Dune", "Frank Herbert", isbn: "9780141439587")]).books.first)
        #expect(book.isbn13 == "9780441172719")
        #expect(book.notes?.contains { $0.hasPrefix("isbn_replaced: 9780141439587 names «Emma»") } == true)
        #expect(book.status == .verified)
    }

    @Test func anISBNThatNamesTheBookReadIsKept() async throws {
        let otherEdition = CatalogueRecord(
            source: "catalogue", key: "catalogue:3", title: "Dune", author: "Frank Herbert",
            isbn13: "9780340960196", isbn10: "0340960191")
        let enricher = Enricher(sources: [ListSource("catalogue", [duneRecord, otherEdition])], reviewThreshold: 0.6)
        let book = try #require(
            await enricher.enrich([read("Dune", "Frank Herbert", isbn: "9780340960196")]).books.first)
        #expect(book.isbn13 == "9780340960196")
        #expect(book.notes == nil)
    }

    @Test func aBookNoSourceKnowsGoesToReview() async throws {
        let enricher = Enricher(sources: [ListSource("catalogue", [duneRecord, emmaRecord])], reviewThreshold: 0.6)
        let book = try #require(
            await enricher.enrich([read("The Left Hand of Darkness", "Ursula K. Le Guin")]).books.first)
        #expect(book.status == .needsReview)
        #expect(book.match == nil)
        #expect(book.reviewReasons == ["no_match"] || book.reviewReasons == ["weak_match"])
    }

    @Test func aMatchedBookReadWithLowConfidenceStillAsksAPerson() async throws {
        let enricher = Enricher(sources: [ListSource("catalogue", [duneRecord])], reviewThreshold: 0.6)
        let book = try #require(await enricher.enrich([read("Dune", "Frank Herbert", confidence: 0.4)]).books.first)
        #expect(book.status == .needsReview)
        #expect(book.reviewReasons == ["low_confidence"])
        #expect(book.match?.key == "catalogue:1")
    }

    @Test func laterSourcesAreAskedOnlyAboutBooksStillUnmatched() async throws {
        let catalogue = ListSource("catalogue", [duneRecord])
        let remoteEmma = CatalogueRecord(
            source: "openlibrary", key: "/works/OL66554W", title: "Emma", author: "Jane Austen")
        let openLibrary = ListSource("openlibrary", [remoteEmma])
        let enricher = Enricher(sources: [catalogue, openLibrary], reviewThreshold: 0.6)
        let books = await enricher.enrich([read("Dune", "Frank Herbert"), read("Emma", "Jane Austen")]).books
        #expect(books.map(\.match?.source) == ["catalogue", "openlibrary"])
        #expect(openLibrary.askedCount == 1) // only about Emma
    }

    @Test func aSourceThatIsDownIsNotedAndTheNextOneIsAsked() async throws {
        let down = ListSource("openlibrary", [], failing: .unavailable("connection refused"))
        let enricher = Enricher(sources: [down, ListSource("googlebooks", [duneRecord])], reviewThreshold: 0.6)
        let outcome = await enricher.enrich([read("Dune", "Frank Herbert"), read("Dune Messiah", "Frank Herbert")])
        #expect(outcome.notes == ["enrichment_unavailable: openlibrary: unavailable: connection refused"])
        #expect(down.askedCount == 1) // not asked again for the second book
        #expect(outcome.books[0].status == .verified)
    }

    @Test func whenNoSourceAnswersTheConfidenceDecidesAndItIsNoted() async throws {
        let down = ListSource("openlibrary", [], failing: .unavailable("timeout"))
        let enricher = Enricher(sources: [down], reviewThreshold: 0.6)
        let book = try #require(await enricher.enrich([read("Dune", "Frank Herbert")]).books.first)
        #expect(book.status == .verified)
        #expect(book.notes == ["not_enriched: no source answered"])
    }

    @Test func twoSpinesCannotBothBeTheSameCatalogueEntry() async throws {
        let enricher = Enricher(sources: [ListSource("catalogue", [duneRecord])], reviewThreshold: 0.6)
        let books = await enricher.enrich([read("Dune", "Frank Herbert"), read("Dune", "F. Herbert")]).books
        #expect(books.compactMap(\.match).count <= 1)
    }
}

/// A spine's text as the offline OCR gives it: everything read, in reading order, as the title.
/// A spine's text as the OCR provider reads it.
func spine(_ text: String, confidence: Double = 0.8) -> Book {
    var book = Book(
        title: text, author: nil, isbn13: nil, isbn10: nil, confidence: confidence, box: nil,
        status: confidence >= 0.6 ? .verified : .needsReview, source: "ocr")
    book.form = .spineText
    return book
}

@Suite struct SpineTextEnrichmentTests {
    @Test func aSpinesTextMatchedBecomesItsRecordWithTheMatchAndTheReadingMixed() async throws {
        let enricher = Enricher(sources: [ListSource("catalogue", [duneRecord, emmaRecord])], reviewThreshold: 0.6)
        let book = try #require(await enricher.enrich([spine("HERBERT DUNE", confidence: 0.8)]).books.first)
        let score = try #require(book.match?.score)
        #expect(book.title == "Dune" && book.author == "Herbert, Frank")
        #expect(book.isbn13 == "9780441172719")
        #expect(book.status == .verified)
        // The OCR's own confidence counts for a third, the match score for the rest.
        #expect(abs(book.confidence - (Enricher.matchWeight * score + (1 - Enricher.matchWeight) * 0.8)) < 0.002)
    }

    @Test func aSpineShowingTooLittleToAcceptTakesItsRecordAndAsksAPerson() async throws {
        let enricher = Enricher(sources: [ListSource("catalogue", [duneRecord, emmaRecord])], reviewThreshold: 0.6)
        let book = try #require(await enricher.enrich([spine("DUNE", confidence: 0.95)]).books.first)
        #expect(book.title == "Dune" && book.match?.key == "catalogue:1")
        #expect(book.spineText == "DUNE", "the spine's own words, shown beside the candidates")
        #expect(book.status == .needsReview)
        #expect(book.reviewReasons?.contains("weak_match") == true)
        #expect(book.confidence < SpineMatcher().acceptThreshold)
    }

    @Test("A record sharing next to nothing with the reading is not offered to a person; the author's books are")
    func noStrayCandidates() {
        let enricher = Enricher(sources: [], reviewThreshold: 0.6)
        // As the matcher ranks "HERBERT PENGUIN": the author's book, and a record sharing one stray word.
        let ranked = [MatchCandidate(record: duneRecord, score: 0.22), MatchCandidate(record: emmaRecord, score: 0.03)]
        let book = enricher.decide(
            spine("HERBERT PENGUIN", confidence: 0.9), query: SpineQuery(text: "HERBERT PENGUIN"),
            result: MatchResult(best: nil, candidates: ranked, decision: .none), isbnRecord: nil,
            authorRecord: nil)
        #expect(book.status == .needsReview)
        #expect(book.candidates?.map(\.record.key) == [duneRecord.key])
        // Nothing worth offering: no candidates at all, so the item says it matched nothing.
        let stray = enricher.decide(
            spine("PENGUIN", confidence: 0.9), query: SpineQuery(text: "PENGUIN"),
            result: MatchResult(best: nil, candidates: Array(ranked.suffix(1)), decision: .none), isbnRecord: nil,
            authorRecord: nil)
        #expect(stray.candidates == nil && stray.reviewReasons?.contains("no_match") == true)
    }

    @Test func aSpinesTextNoSourceKnowsKeepsTheTextUnsure() async throws {
        let enricher = Enricher(sources: [ListSource("catalogue", [duneRecord, emmaRecord])], reviewThreshold: 0.6)
        // A title of three words or more is readable: a person may know it, or add it by hand.
        let book = try #require(await enricher.enrich([spine("XQZT WRRBL PLONK", confidence: 0.9)]).books.first)
        #expect(book.title == "XQZT WRRBL PLONK" && book.match == nil)
        #expect(book.status == .needsReview)
        #expect(book.confidence < 0.6)
    }

    /// The Spanish and the English edition of one work, and a spine that shows the English one's words.
    let homoDeusEditions = [
        CatalogueRecord(
            source: "catalogue", key: "catalogue:31", title: "Homo deus : breve historia del mañana",
            author: "Harari, Yuval N.", isbn13: "9788499926711"),
        CatalogueRecord(
            source: "catalogue", key: "catalogue:32", title: "Homo Deus: A Brief History of Tomorrow", author: nil,
            isbn13: "9781784703936"),
    ]
    let homoDeusSpine = "Yuval Noah Harari Homo Deus A Brief History of Tomorrow VINTAGE"

    @Test("Two editions of the work a spine shows: the one it reads is taken, the other's ISBN named, nothing asked")
    func editionsOfOneWorkAreOneAnswer() async throws {
        let enricher = Enricher(sources: [ListSource("catalogue", homoDeusEditions)], reviewThreshold: 0.6)
        let book = try #require(await enricher.enrich([spine(homoDeusSpine, confidence: 0.9)]).books.first)
        #expect(book.status == .verified)
        #expect(book.match?.key == "catalogue:32" && book.isbn13 == "9781784703936")
        #expect(book.notes?.contains { $0.hasPrefix("edition_uncertain:") && $0.contains("9788499926711") } == true)
    }

    @Test("Of two editions of the work a spine shows, the one already in the library is taken")
    func theEditionInTheLibraryIsPreferred() async throws {
        let asked = Mutex<[Set<String>]>([])
        var enricher = Enricher(sources: [ListSource("catalogue", homoDeusEditions)], reviewThreshold: 0.6)
        enricher.libraryHolds = { isbns in
            asked.withLock { $0.append(isbns) }
            return isbns.intersection(["9788499926711"])
        }
        let books = await enricher.enrich([spine(homoDeusSpine, confidence: 0.9), spine("XQZT WRRBL", confidence: 0.9)])
            .books
        let book = try #require(books.first)
        #expect(book.status == .verified)
        #expect(book.match?.key == "catalogue:31" && book.isbn13 == "9788499926711")
        #expect(book.title == "Homo deus : breve historia del mañana" && book.author == "Harari, Yuval N.")
        #expect(
            book.notes?.contains {
                $0.hasPrefix("edition_uncertain: 9788499926711, the edition already in the library")
                    && $0.contains("9781784703936")
            } == true)
        // One question for the photo, about the accepted work's editions only.
        #expect(asked.withLock { $0 } == [["9788499926711", "9781784703936"]])
    }

    @Test("Scraps are not questions: texts that name no book are kept unread, with their place, not for review")
    func scrapsAreLeftUnread() async throws {
        let vintage = CatalogueRecord(
            source: "catalogue", key: "catalogue:41",
            title: "Diseño vintage moderno : industrial, gráfico y de interiores",
            author: nil)
        let bostrom = CatalogueRecord(
            source: "catalogue", key: "catalogue:42", title: "Superintelligence: Paths, Dangers, Strategies",
            author: "Bostrom, Nick")
        let enricher = Enricher(
            sources: [ListSource("catalogue", [vintage, bostrom, duneRecord, emmaRecord])], reviewThreshold: 0.6)
        var scrap = spine("HH", confidence: 0.9)
        scrap.box = Box(x1: 0.1, y1: 0.2, x2: 0.15, y2: 0.3)
        let texts = [
            scrap, spine("VINTAGE", confidence: 0.95), spine("ANCHOR BOOKS", confidence: 0.9),
            spine("SUPERINTELLIGENCE", confidence: 0.9), spine("THE POSSIBILITY OF LIFE JAIME GREEN", confidence: 0.9),
            spine("9780441172719", confidence: 0.9),
        ]
        let outcome = await enricher.enrich(texts)
        #expect(outcome.unread.map(\.text) == ["HH", "VINTAGE", "ANCHOR BOOKS"])
        #expect(outcome.unread.first?.box == scrap.box && outcome.unread.first?.confidence == 0.9)
        // A one-word title, a readable title nothing matched, and an ISBN read as text stay books.
        #expect(outcome.books.count == 3)
        #expect(outcome.books[0].match?.key == "catalogue:42")
        #expect(
            outcome.books[1].title == "THE POSSIBILITY OF LIFE JAIME GREEN" && outcome.books[1].status == .needsReview)
        #expect(outcome.books[2].title == "9780441172719")
    }

    @Test("A subtitle read apart beside its title joins that book: one item, its text and box the spine's")
    func aSubtitleReadApartJoinsItsSpine() async throws {
        let tale = CatalogueRecord(
            source: "catalogue", key: "catalogue:51", title: "The Ancestor’s Tale: A Pilgrimage to the Dawn of Life",
            author: "Richard Dawkins; Yan Wong")
        let possibility = CatalogueRecord(
            source: "catalogue", key: "catalogue:52",
            title: "The Possibility of Life: Science, Imagination, and Our Quest for Kinship in the Cosmos", author: nil
        )
        let enricher = Enricher(sources: [ListSource("catalogue", [tale, possibility])], reviewThreshold: 0.6)
        var title = spine("Guardian The Ancestor's Tale WEN", confidence: 0.98)
        title.box = Box(x1: 0.378, y1: 0.45, x2: 0.442, y2: 0.89)
        var subtitle = spine("A Pilgrimage to the Dawn of Life", confidence: 0.98)
        subtitle.box = Box(x1: 0.375, y1: 0.49, x2: 0.41, y2: 0.86)
        let outcome = await enricher.enrich([title, subtitle])
        let book = try #require(outcome.books.first)
        #expect(outcome.books.count == 1 && outcome.unread.isEmpty)
        #expect(book.match?.key == "catalogue:51")
        #expect(book.spineText == "Guardian The Ancestor's Tale WEN A Pilgrimage to the Dawn of Life")
        #expect(book.box == Box(x1: 0.375, y1: 0.45, x2: 0.442, y2: 0.89))
        #expect(outcome.notes.contains("spine_fragments_joined: 1"))
    }

    @Test(
        "One book per ISBN on a photo: its title, its digits read as text, a second copy are the exact book's evidence")
    func readingsOfABookShownExactlyAreItsEvidence() async throws {
        let messiah = CatalogueRecord(
            source: "catalogue", key: "catalogue:61", title: "Dune Messiah", author: "Frank Herbert",
            isbn13: "9780593098233")
        let enricher = Enricher(
            sources: [ListSource("catalogue", [duneRecord, emmaRecord, messiah])], reviewThreshold: 0.6)
        let isbn = try #require(duneRecord.isbn13.flatMap(ISBN.init))
        var barcode = Book(
            title: "ISBN \(isbn.isbn13)", author: nil, isbn13: isbn.isbn13, isbn10: isbn.isbn10, confidence: 1,
            box: Box(x1: 0.1, y1: 0.7, x2: 0.2, y2: 0.8), status: .needsReview, source: "barcode")
        barcode.form = .barcode
        let outcome = await enricher.enrich([
            barcode, spine("DUNE", confidence: 0.5), spine(isbn.isbn13, confidence: 0.9),
            spine("Dune Messiah Frank Herbert", confidence: 0.9),
        ])
        #expect(outcome.books.count == 2, "\(outcome.books.map(\.title))")
        let dune = try #require(outcome.books.first)
        #expect(dune.isbn13 == isbn.isbn13 && dune.status == .verified && dune.box == barcode.box)
        #expect(dune.notes?.filter { $0.hasPrefix("also_read:") }.count == 2, "\(dune.notes ?? [])")
        // A neighbour whose candidates hold the barcode's record is a book of its own.
        #expect(outcome.books.last?.match?.key == "catalogue:61")
    }

    @Test func withNothingToConsultASpinesTextStaysForReview() async throws {
        let enricher = Enricher(sources: [], reviewThreshold: 0.6)
        let book = try #require(await enricher.enrich([spine("DUNE HERBERT", confidence: 0.9)]).books.first)
        #expect(book.title == "DUNE HERBERT")
        #expect(book.status == .needsReview)
    }
}
