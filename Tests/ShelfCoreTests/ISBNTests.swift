import Testing
@testable import ShelfCore

@Suite struct ISBNTests {
    @Test(
        "Accepts every notation of a valid ISBN",
        arguments: ["9780441172719", "978-0-441-17271-9", "0-441-17271-7", "ISBN 0441172717"])
    func acceptsValidISBN(_ raw: String) throws {
        let isbn = try #require(ISBN(raw))
        #expect(isbn.isbn13 == "9780441172719")
        #expect(isbn.isbn10 == "0441172717")
    }

    @Test(
        "Rejects a wrong checksum, a wrong length and a bad prefix",
        arguments: ["9780441172718", "0441172718", "044117271", "9770441172719", "", "abcdefghij"])
    func rejectsInvalidISBN(_ raw: String) {
        #expect(ISBN(raw) == nil)
    }

    @Test("Keeps an X check digit and gives no ISBN-10 for 979")
    func checkDigitXAnd979() throws {
        let withX = try #require(ISBN("0-8044-2957-X"))
        #expect(withX.isbn13 == "9780804429573")
        #expect(withX.isbn10 == "080442957X")
        let nine79 = try #require(ISBN("979-10-90636-07-1"))
        #expect(nine79.isbn10 == nil)
    }
}

@Suite struct BookCheckerTests {
    @Test(
        "The same book read twice in one photo, once with its ISBN, is one book with the ISBN and the higher confidence"
    )
    func dedupesAcrossISBNAndTitle() {
        let books = BookChecker().check(
            [
                Detection(title: "Dune", author: "Frank Herbert", confidence: 0.7),
                Detection(title: "DUNE", author: "Herbert, Frank", isbn: "0441172717", confidence: 0.9),
                Detection(title: "Emma", author: "Jane Austen", isbn: "9780441172718", confidence: 0.5),
            ], source: "gemini")
        #expect(books.count == 2)
        #expect(books[0].isbn13 == "9780441172719" && books[0].confidence == 0.9)
        #expect(books[1].isbn13 == nil, "a bad checksum is dropped")
        #expect(books[1].notes == ["isbn_checksum_failed: 9780441172718"])
        #expect(books[1].status == .needsReview)
    }

    @Test(
        "Matching folds case, accents, articles, brackets and subtitles",
        arguments: [
            ("The Lord of the Rings: The Fellowship of the Ring", "lord of the rings"),
            ("Cien años de soledad (Edición conmemorativa)", "cien anos de soledad"),
            ("L'Étranger", "letranger"),
            ("A", "a"),
        ])
    func titleNormalisation(title: String, expected: String) {
        #expect(TextNormalization.title(title) == expected)
    }

    @Test(
        "An ISBN printed alone is one, as the digits under a barcode read it",
        arguments: ["9 780441 172719", "ISBN 978-0-441-17271-9", "isbn: 0-441-17271-7", "9780441172719"])
    func printedAlone(_ text: String) {
        #expect(ISBN.printed(text)?.isbn13 == "9780441172719")
    }

    @Test(
        "A text with words besides an ISBN, or digits that fail the check, is no printed ISBN",
        arguments: ["Dune 9780441172719", "9780441172718", "ISBN", "978 0441", "Catch-22"])
    func notPrintedAlone(_ text: String) {
        #expect(ISBN.printed(text) == nil)
    }
}
