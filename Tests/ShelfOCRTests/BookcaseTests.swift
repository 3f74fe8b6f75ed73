import ShelfCore
import ShelfOCR
import Testing

/// A whole bookcase of three rows (Fixtures/bookcase.jpg): thin boards the brown of some of its books, each row's books
/// standing in the columns of the rows above and below; a wide spine with its authors across its head above its title,
/// its subtitle beside the title; two thin neighbours of one colour; a publisher's mark and a lone letter at the foot
/// of every spine of the bottom row. Read by the real models, matched against the books it shows
/// (Fixtures/bookcase.csv).
@Suite("Reading a whole bookcase with PP-OCR", .serialized)
struct BookcaseTests {
    static let reading = Task {
        try await RenderedShelf.reading("bookcase.jpg", catalogue: "Tests/ShelfOCRTests/Fixtures/bookcase.csv")
    }
    /// Each row's titles, left to right, top row first (scripts/make-ocr-fixtures.sh).
    static let rows = [
        ["Middlemarch", "The Trial", "The Ancestor's Tale", "Persuasion", "Siddhartha", "Rebecca", "Cannery Row"],
        ["The Bell Jar", "Ulysses", "Emma", "Lolita", "Dune Messiah", "Catch-22", "Beloved", "Walden"],
        ["Dracula", "Frankenstein", "Candide", "Moby-Dick", "Solaris", "Kindred", "The Stranger"],
    ]
    /// Where the boards are, in the photo's height: each row stands on one.
    static let boards = [660.0 / 2000, 1310.0 / 2000]

    @Test("No item joins two rows, though their books stand in one another's columns and the boards are their brown")
    func rowsStayApart() async throws {
        let spines = try await Self.reading.value.spines
        for spine in spines {
            let text = RenderedShelf.plain(spine.text)
            let rows = Self.rows.indices.filter { row in
                Self.rows[row].contains { text.contains(RenderedShelf.plain($0)) }
            }
            #expect(rows.count <= 1, "«\(spine.text)» holds books of rows \(rows)")
            #expect(
                Self.boards.allSatisfy { !(spine.box.y1 < $0 && spine.box.y2 > $0) },
                "«\(spine.text)» crosses a board: \(spine.box)")
        }
        for title in Self.rows.joined() {
            #expect(
                spines.filter { RenderedShelf.plain($0.text).contains(RenderedShelf.plain(title)) }.count == 1,
                "\(title): \(spines.map(\.text))")
        }
    }

    @Test("A wide spine's authors across its head and its subtitle beside its title are one item, accepted")
    func oneItemForTheWideSpine() async throws {
        let books = try await Self.reading.value.books
        let tale = books.filter { RenderedShelf.plain($0.title).contains("ancestorstale") }
        #expect(tale.count == 1 && tale.first?.status == .verified, "\(books.map(\.title))")
        let text = RenderedShelf.plain(tale.first?.spineText ?? "")
        #expect(text.contains("pilgrimage") && text.contains("dawkins"), "\(tale.first?.spineText ?? "")")
        // No other item holds any piece of it.
        for piece in ["pilgrimage", "dawkins"] {
            #expect(books.filter { RenderedShelf.plain($0.spineText ?? $0.title).contains(piece) }.count == 1)
        }
    }

    @Test("Two thin neighbours of one colour are two items, each accepted")
    func thinNeighboursOfOneColour() async throws {
        let (spines, books) = try await (Self.reading.value.spines, Self.reading.value.books)
        let emma = spines.filter { RenderedShelf.plain($0.text).contains("emma") }
        let lolita = spines.filter { RenderedShelf.plain($0.text).contains("lolita") }
        #expect(emma.count == 1 && lolita.count == 1 && emma != lolita, "\(spines.map(\.text))")
        let emmaText = RenderedShelf.plain(emma.first?.text ?? "")
        #expect(!emmaText.contains("nabokov"), "\(emmaText)")
        let accepted = Set(books.filter { $0.status == .verified }.map(\.title))
        #expect(accepted.contains("Emma") && accepted.contains("Lolita"), "\(accepted)")
    }

    @Test("A publisher's mark and a lone letter on each spine are no question: every book accepted, none to review")
    func marksAreNoQuestions() async throws {
        let reading = try await Self.reading.value
        let toReview = reading.books.filter { $0.status == .needsReview }
        #expect(toReview.isEmpty, "asked about: \(toReview.map { $0.spineText ?? $0.title })")
        #expect(reading.books.count == Self.rows.joined().count, "\(reading.books.map(\.title))")
        #expect(reading.books.allSatisfy { $0.status == .verified })
    }
}
