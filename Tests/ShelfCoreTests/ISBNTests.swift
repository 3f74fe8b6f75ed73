import Testing
@testable import ShelfCore

@Suite struct ISBNTests {
    @Test("Accepts every notation of a valid ISBN", arguments: ["9780441172719", "978-0-441-17271-9", "0-441-17271-7", "ISBN 0441172717"])
    func acceptsValidISBN(_ raw: String) throws {
        let isbn = try #require(ISBN(raw))
        #expect(isbn.isbn13 == "9780441172719")
        #expect(isbn.isbn10 == "0441172717")
    }

    @Test("Rejects a wrong checksum, a wrong length and a bad prefix",
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
