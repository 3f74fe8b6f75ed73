import ShelfCore
import ShelfOCR
import Testing

/// A rendered shelf of twelve standing books, each title at its spine's head and its author at the foot, read by the
/// real PP-OCR models and matched against samples/catalogue.csv, as `--provider ocr` reads a photo.
@Suite("Reading tall spines with PP-OCR", .serialized)
struct TallSpinesTests {
    /// Left to right, as Fixtures/tall-spines.jpg shows them (scripts/make-ocr-fixtures.sh).
    static let books: [(title: String, author: String)] = [
        ("Middlemarch", "George Eliot"), ("The Trial", "Franz Kafka"), ("Persuasion", "Jane Austen"),
        ("Siddhartha", "Hermann Hesse"), ("The Bell Jar", "Sylvia Plath"), ("Emma", "Jane Austen"),
        ("Lolita", "Vladimir Nabokov"), ("Rebecca", "Daphne du Maurier"), ("Dune Messiah", "Frank Herbert"),
        ("Ulysses", "James Joyce"), ("Cannery Row", "John Steinbeck"), ("Catch-22", "Joseph Heller"),
    ]
    /// Read once for the suite's tests.
    static let reading = Task { try await RenderedShelf.read("tall-spines.jpg") }

    @Test("A title at a spine's head and its author at the foot are one item, accepted as that book")
    func titleAndAuthorFarApart() async throws {
        let (spines, books) = try await Self.reading.value
        let read = spines.map { RenderedShelf.plain($0.text) }
        for book in Self.books {
            let holding = read.filter { $0.contains(RenderedShelf.plain(book.title)) }
            #expect(
                holding.count == 1 && holding[0].contains(RenderedShelf.plain(book.author)),
                "\(book.title) — \(book.author) is in \(holding)")
        }
        #expect(spines.count == Self.books.count, "\(spines.map(\.text))")
        let accepted = books.filter { $0.status == .verified }
        let right = RenderedShelf.accepted(Self.books, among: books)
        #expect(right.count >= 11, "accepted: \(accepted.map { "\($0.title) — \($0.author ?? "?")" })")
        #expect(accepted.count == right.count, "accepted: \(accepted.map { "\($0.title) — \($0.author ?? "?")" })")
    }

    @Test("Two thin books side by side stay two spines")
    func thinNeighbours() async throws {
        let spines = try await Self.reading.value.spines.map { RenderedShelf.plain($0.text) }
        let emma = spines.filter { $0.contains("emma") }, lolita = spines.filter { $0.contains("lolita") }
        #expect(emma.count == 1 && lolita.count == 1 && emma != lolita, "\(spines)")
        #expect(
            emma.allSatisfy { !$0.contains("nabokov") } && lolita.allSatisfy { !$0.contains("austen") }, "\(spines)")
    }
}
