import Foundation
import ShelfCore
import ShelfMatching
import ShelfEnrichment
import Testing

/// The library as a source, on values: which readings become a sighting of a work, and which are only offered it.
@Suite struct LibraryEvidenceTests {
    let evidence = LibraryEvidence(matcher: SpineMatcher())

    static let herbert = LibraryWork(
        key: "title:dune|herbert", title: "Dune", author: "Frank Herbert", isbn13: "9780441172719",
        isbn10: "0441172717", match: nil, shelves: ["living"], lastShelf: "living")
    static let anderson = LibraryWork(
        key: "openlibrary:/works/OL1W", title: "Dune", author: "Poul Anderson", isbn13: nil,
        isbn10: nil, match: BookMatch(source: "openlibrary", key: "/works/OL1W", score: 0.9, year: 1990),
        shelves: ["study"], lastShelf: "study")

    func reading(
        _ title: String, _ author: String?, form: ReadingForm = .structured, candidates: [MatchCandidate]? = nil
    ) -> Book {
        var book = Book(
            title: title, author: author, isbn13: nil, isbn10: nil, confidence: 0.4, box: nil,
            status: .needsReview, source: "gemini")
        book.form = form
        book.candidates = candidates
        book.reviewReasons = ["low_confidence"]
        return book
    }

    @Test("A title read alone, on the shelf where the one work of that title stands, is that work")
    func takenOnItsShelf() throws {
        let book = try #require(
            evidence.apply(to: [reading("Dune", nil)], shelf: "living", works: ["dune": [Self.herbert]]).first)
        #expect(book.status == .verified && book.author == "Frank Herbert" && book.isbn13 == "9780441172719")
        #expect(book.candidates == nil && book.reviewReasons == nil && book.match == nil)
        #expect(book.notes == ["library_sighting: «Dune» (title:dune|herbert), seen on shelf living before"])
        #expect(
            book.titleKey
                == Book(
                    title: "Dune", author: "Frank Herbert", isbn13: nil, isbn10: nil, confidence: 1, box: nil,
                    status: .verified, source: "x"
                ).titleKey, "it joins the work by its title and author")
    }

    @Test("A matched work gives the reading its record, so the reading joins it by that record")
    func takenWithItsRecord() throws {
        let book = try #require(
            evidence.apply(to: [reading("Dune", "Anderson")], shelf: "study", works: ["dune": [Self.anderson]]).first)
        #expect(book.status == .verified && book.matchKey == "openlibrary:/works/OL1W")
    }

    @Test("On another shelf the work is offered first, labelled with its shelf, and nothing is taken")
    func offeredElsewhere() throws {
        let other = MatchCandidate(
            record: CatalogueRecord(
                source: "catalogue", key: "catalogue:9", title: "Dune Messiah",
                author: "Frank Herbert"), score: 0.5)
        let book = try #require(
            evidence.apply(
                to: [reading("Dune", nil, candidates: [other])], shelf: "study",
                works: ["dune": [Self.herbert]]
            ).first)
        #expect(book.status == .needsReview)
        #expect(book.candidates?.map(\.record.title) == ["Dune", "Dune Messiah"])
        let first = try #require(book.candidates?.first)
        #expect(first.libraryShelf == "living" && first.libraryLabel == "in your library, on shelf living")
        #expect(first.record.source == LibraryWork.source && first.record.key == "title:dune|herbert")
        #expect(first.score > 0.5, "scored as the matcher scores a record")
    }

    @Test("Two works share the title: both are offered, the one on this shelf first, and neither is taken")
    func twoWorksOfOneTitle() throws {
        let book = try #require(
            evidence.apply(
                to: [reading("Dune", nil)], shelf: "study",
                works: ["dune": [Self.herbert, Self.anderson]]
            ).first)
        #expect(book.status == .needsReview)
        #expect(book.candidates?.map { $0.record.author } == ["Poul Anderson", "Frank Herbert"])
    }

    @Test("Another surname is another book; a source's other work of that title, or a spine's raw text, is not taken")
    func notTaken() throws {
        let works = ["dune": [Self.herbert]]
        let byOther = try #require(
            evidence.apply(to: [reading("Dune", "Anderson")], shelf: "living", works: works).first)
        #expect(byOther == reading("Dune", "Anderson"), "nothing offered, nothing taken")

        let rival = MatchCandidate(
            record: CatalogueRecord(
                source: "catalogue", key: "catalogue:3", title: "Dune",
                author: "Poul Anderson"), score: 0.7)
        let contested = try #require(
            evidence.apply(to: [reading("Dune", nil, candidates: [rival])], shelf: "living", works: works).first)
        #expect(contested.status == .needsReview && contested.candidates?.count == 2)

        let spine = try #require(
            evidence.apply(to: [reading("Dune", nil, form: .spineText)], shelf: "living", works: works).first)
        #expect(spine.status == .needsReview && spine.candidates?.first?.libraryShelf == "living")

        // A photo at the top of incoming/ has no shelf: a work seen there too is offered, not taken.
        let topWork = LibraryWork(
            key: "title:dune|herbert", title: "Dune", author: "Frank Herbert", isbn13: nil, isbn10: nil,
            match: nil, shelves: [""], lastShelf: "")
        let top = try #require(evidence.apply(to: [reading("Dune", nil)], shelf: nil, works: ["dune": [topWork]]).first)
        #expect(top.status == .needsReview && top.candidates?.first?.libraryLabel == "in your library")
    }

    @Test(
        "A spine's text read as the record of the work on this shelf, clearly ahead, is that work; elsewhere, or close behind another record, it is offered"
    )
    func spineReadAsTheWorksRecord() throws {
        let record = CatalogueRecord(source: "openlibrary", key: "/works/OL1W", title: "Dune", author: "Poul Anderson")
        let rival = CatalogueRecord(source: "catalogue", key: "catalogue:7", title: "Dune Road", author: "Ann Other")
        func spine(runnerUp: Double) -> Book {
            var book = reading(
                "Dune", "Poul Anderson", form: .spineText,
                candidates: [
                    MatchCandidate(record: record, score: 0.45), MatchCandidate(record: rival, score: runnerUp),
                ])
            book.match = BookMatch(source: "openlibrary", key: "/works/OL1W", score: 0.45, year: nil)
            book.reviewReasons = ["low_confidence", "weak_match"]
            return book
        }
        let works = ["dune": [Self.anderson]]
        let taken = try #require(evidence.apply(to: [spine(runnerUp: 0.2)], shelf: "study", works: works).first)
        #expect(taken.status == .verified && taken.matchKey == "openlibrary:/works/OL1W" && taken.reviewReasons == nil)
        #expect(taken.notes?.first?.hasPrefix("library_sighting: «Dune»") == true)

        let elsewhere = try #require(evidence.apply(to: [spine(runnerUp: 0.2)], shelf: "living", works: works).first)
        #expect(elsewhere.status == .needsReview && elsewhere.candidates?.first?.libraryShelf == "study")
        let close = try #require(evidence.apply(to: [spine(runnerUp: 0.4)], shelf: "study", works: works).first)
        #expect(close.status == .needsReview, "another record nearly as good: the shelf does not say which")
        var another = spine(runnerUp: 0.2)
        another.match = BookMatch(source: "catalogue", key: "catalogue:7", score: 0.45, year: nil)
        #expect(try #require(evidence.apply(to: [another], shelf: "study", works: works).first).status == .needsReview)
    }

    @Test("Only the readings waiting for review are looked up: by their normalised titles, and by their ISBNs")
    func keysLookedUp() {
        var verified = reading("Emma", "Jane Austen")
        verified.status = .verified
        verified.isbn13 = "9780141439587"
        #expect(LibraryEvidence.keys(of: [verified, reading("The Hobbit (Illustrated)", nil)]) == ["hobbit"])
        #expect(LibraryEvidence.keys(of: [barcode("9780441172719")]) == ["isbn:9780441172719"])
        #expect(LibraryEvidence.keys(naming: verified) == ["emma", "isbn:9780141439587"])
    }

    /// A barcode's book no source knew: its ISBN exact, titled by it, waiting for its name.
    func barcode(_ isbn: String) -> Book {
        var book = Book(
            title: "ISBN \(isbn)", author: nil, isbn13: isbn, isbn10: nil, confidence: 1, box: nil,
            status: .needsReview, source: "barcode")
        book.form = .barcode
        book.reviewReasons = [Enricher.Reason.isbnUnresolved]
        return book
    }

    @Test("A barcode no source knew is the library's work of that ISBN, on any shelf: named once, never asked again")
    func barcodeOfAKnownEdition() throws {
        let works = [LibraryWork.isbnKey("9780441172719"): [Self.herbert]]
        let book = try #require(evidence.apply(to: [barcode("9780441172719")], shelf: "attic", works: works).first)
        #expect(book.status == .verified && book.title == "Dune" && book.author == "Frank Herbert")
        #expect(book.isbn13 == "9780441172719" && book.reviewReasons == nil)
        #expect(book.notes == ["library_sighting: «Dune» (title:dune|herbert), its ISBN 9780441172719"])
        let unknown = try #require(evidence.apply(to: [barcode("9780593099322")], shelf: "attic", works: works).first)
        #expect(unknown == barcode("9780593099322"), "another ISBN waits for its name")
    }

    @Test(
        "A spine's weak match to an edition the library holds is that work when the spine shows its title; a name alone is not"
    )
    func spineOfAKnownEdition() throws {
        let record = CatalogueRecord(
            source: "catalogue", key: "catalogue:1", title: "Dune", author: "Frank Herbert", isbn13: "9780441172719")
        func spine(_ text: String) -> Book {
            var book = reading(
                "Dune", "Frank Herbert", form: .spineText, candidates: [MatchCandidate(record: record, score: 0.5)])
            book.spineText = text
            book.isbn13 = "9780441172719"
            book.match = BookMatch(source: "catalogue", key: "catalogue:1", score: 0.5, year: nil)
            book.reviewReasons = ["weak_match"]
            return book
        }
        let works = [LibraryWork.isbnKey("9780441172719"): [Self.herbert]]
        let shown = try #require(evidence.apply(to: [spine("DUNE HERB")], shelf: nil, works: works).first)
        #expect(shown.status == .verified && shown.notes?.first?.hasSuffix("its ISBN 9780441172719") == true)
        let name = try #require(evidence.apply(to: [spine("FRANK HERBERT ACE")], shelf: nil, works: works).first)
        #expect(name.status == .needsReview && name.reviewReasons == ["weak_match"])
        var twoWorks = works
        twoWorks[LibraryWork.isbnKey("9780441172719")]?.append(Self.anderson)
        let doubtful = try #require(evidence.apply(to: [spine("DUNE HERB")], shelf: nil, works: twoWorks).first)
        #expect(doubtful.status == .needsReview, "two works with one ISBN: the library does not say which")
    }
}
