import Foundation
import ShelfCore
import Testing

@Suite("library.json written a page at a time")
struct LibraryDocumentTests {
    private func entry(_ index: Int, sightings: Int) -> LibraryDocument.Entry {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        return LibraryDocument.Entry(
            work: "title:book \(index)|author", title: "Book \(index) \"quoted\"\nwith a line",
            author: index % 2 == 0 ? "Ann Author" : nil,
            isbn13: nil, isbn10: nil, confidence: 0.9, status: .verified, source: "gemini", firstSeen: start,
            shelves: ["den"],
            sightings: (0..<sightings).map { s in
                LibraryDocument.Sighting(
                    photo: "den/\(s).jpg", photoSHA256: "\(index)-\(s)", box: Box(x1: 0.1, y1: 0.1, x2: 0.2, y2: 0.9),
                    confidence: 0.9, shelf: s % 3 == 0 ? nil : "shelf \(s % 3)",
                    seenAt: start.addingTimeInterval(Double(s)))
            },
            history: [LibraryDocument.Decision(action: "detected", by: "gemini", at: start, detail: "den/0.jpg")])
    }

    @Test(
        "Streamed in pages, the document is the bytes the encoder makes of it whole, each work bounded; an empty library too"
    )
    func streamIsTheWholeDocument() throws {
        let generatedAt = Date(timeIntervalSince1970: 1_700_000_500)
        for books in [[], (0..<7).map { entry($0, sightings: $0 * 5) }] {
            var streamed = Data()
            try LibraryDocument.stream(
                generatedAt: generatedAt,
                pages: { page in
                    for start in stride(from: 0, to: books.count, by: 3) {
                        try page(Array(books[start..<min(books.count, start + 3)]))
                    }
                }, to: { streamed += $0 })
            let whole = try JSONStyle.encoder().encode(
                LibraryDocument(generatedAt: generatedAt, books: books.map { $0.bounded() }))
            #expect(String(decoding: streamed, as: UTF8.self) == String(decoding: whole, as: UTF8.self))
        }
    }
}
