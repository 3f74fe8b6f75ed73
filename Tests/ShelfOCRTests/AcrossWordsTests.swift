import ShelfCore
import ShelfOCR
import Testing

/// A rendered shelf whose thick spines carry their words across, one above another, beside a book whose author's
/// name sits across its head and a pile of books lying flat (Fixtures/across-words.jpg), read by the real models.
@Suite("Reading words set across spines with PP-OCR", .serialized)
struct AcrossWordsTests {
    static let reading = Task { try await RenderedShelf.read("across-words.jpg") }
    /// Left to right, the pile from the bottom, as the fixture shows them (scripts/make-ocr-fixtures.sh).
    static let books: [(title: String, author: String)] = [
        ("Persuasion", "Jane Austen"), ("Siddhartha", "Hermann Hesse"), ("The Grapes of Wrath", "John Steinbeck"),
        ("A Moveable Feast", "Ernest Hemingway"), ("Solaris", "Stanisław Lem"), ("Rebecca", "Daphne du Maurier"),
        ("Cannery Row", "John Steinbeck"), ("Steppenwolf", "Hermann Hesse"),
        ("Dune", "Frank Herbert"), ("Kim", "Rudyard Kipling"), ("Heidi", "Johanna Spyri"),
    ]

    @Test("Words stacked across a thick spine, pictures between them, are one item, read from the top and accepted")
    func stackedWords() async throws {
        let (spines, books) = try await Self.reading.value
        let grapes = spines.filter { RenderedShelf.plain($0.text).contains("grapes") }
        #expect(
            grapes.count == 1 && RenderedShelf.plain(grapes[0].text).hasPrefix("thegrapesofwrath")
                && RenderedShelf.plain(grapes[0].text).contains("steinbeck"), "\(spines.map(\.text))")
        let feast = spines.filter { RenderedShelf.plain($0.text).contains("moveable") }
        #expect(feast.count == 1 && RenderedShelf.plain(feast[0].text).contains("hemingway"), "\(spines.map(\.text))")
        let accepted = RenderedShelf.accepted(Self.books, among: books).map(\.title)
        #expect(accepted.contains("The Grapes of Wrath") && accepted.contains("A Moveable Feast"), "\(accepted)")
    }

    @Test("An author's name across a spine's head joins the title standing below it")
    func nameAtTheHead() async throws {
        let (spines, books) = try await Self.reading.value
        #expect(spines.contains { RenderedShelf.plain($0.text) == "lemsolaris" }, "\(spines.map(\.text))")
        #expect(RenderedShelf.accepted(Self.books, among: books).contains { $0.title == "Solaris" })
    }

    @Test("Books lying in a pile stay one item each, and neighbours' words in one row stay apart")
    func pileAndNeighbours() async throws {
        let (spines, books) = try await Self.reading.value
        for title in ["dune", "kim", "heidi", "wrath", "ernest"] {
            #expect(spines.filter { RenderedShelf.plain($0.text).contains(title) }.count == 1, "\(spines.map(\.text))")
        }
        // No item holds two books' titles.
        let titles = Self.books.map { RenderedShelf.plain($0.title) }
        #expect(
            spines.allSatisfy { spine in titles.filter { RenderedShelf.plain(spine.text).contains($0) }.count <= 1 },
            "\(spines.map(\.text))")
        let accepted = RenderedShelf.accepted(Self.books, among: books)
        #expect(accepted.count == Self.books.count, "accepted: \(accepted.map(\.title))")
        #expect(books.filter { $0.status == .verified }.count == accepted.count)
    }
}
