import Foundation
import Logging
import ShelfCore
import ShelfEnrichment
@testable import ShelfOCR
import ShelfProviders
import ShelfStore
import Testing

/// A rendered shelf of twelve standing books, each title at its spine's head and its author at the foot, read by the
/// real PP-OCR models and matched against samples/catalogue.csv, as `--provider ocr` reads a photo.
@Suite("Reading tall spines with PP-OCR", .serialized)
struct TallSpinesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// Left to right, as Fixtures/tall-spines.jpg shows them (scripts/make-ocr-fixtures.sh).
    static let books: [(title: String, author: String)] = [
        ("Middlemarch", "George Eliot"), ("The Trial", "Franz Kafka"), ("Persuasion", "Jane Austen"),
        ("Siddhartha", "Hermann Hesse"), ("The Bell Jar", "Sylvia Plath"), ("Emma", "Jane Austen"),
        ("Lolita", "Vladimir Nabokov"), ("Rebecca", "Daphne du Maurier"), ("Dune Messiah", "Frank Herbert"),
        ("Ulysses", "James Joyce"), ("Cannery Row", "John Steinbeck"), ("Catch-22", "Joseph Heller"),
    ]
    static let provider = OCRProvider(settings: OCRSettings(engine: .ppocr(PPOCRFiles.locate())),
                                      logger: Logger(label: "shelfd.test.ocr"))

    /// Read once for the suite's tests.
    static let reading = Task { try await read() }

    /// The spines the offline provider reads on the fixture, and its books once checked and matched.
    static func read() async throws -> (spines: [Spine], books: [Book]) {
        let bytes = try [UInt8](Data(contentsOf: repository.appendingPathComponent("Tests/ShelfOCRTests/Fixtures/tall-spines.jpg")))
        let raw = try await provider.send(PhotoUpload(bytes: bytes))
        let spines = try JSONStyle.decoder().decode(OCRResponse.self, from: Data(raw.body)).spines.map(\.spine)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-tall-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
        _ = try CatalogueImporter(catalogue: store.catalogue).importFile(repository.appendingPathComponent("samples/catalogue.csv").path)
        let enricher = Enricher(sources: [try CatalogueSource(catalogue: store.catalogue)], reviewThreshold: 0.6)
        let checked = BookChecker(reviewThreshold: 0.6).check(try provider.parse(raw).books, source: provider.name)
        return (spines, await enricher.enrich(checked).books)
    }

    static func plain(_ text: String) -> String {
        String(String.UnicodeScalarView(text.lowercased().unicodeScalars.filter(Character.isLetterOrDigit)))
    }

    @Test("A title at a spine's head and its author at the foot are one item, accepted as that book")
    func titleAndAuthorFarApart() async throws {
        let (spines, books) = try await Self.reading.value
        let read = spines.map { Self.plain($0.text) }
        for book in Self.books {
            let holding = read.filter { $0.contains(Self.plain(book.title)) }
            #expect(holding.count == 1 && holding[0].contains(Self.plain(book.author)), "\(book.title) — \(book.author) is in \(holding)")
        }
        #expect(spines.count == Self.books.count, "\(spines.map(\.text))")
        let accepted = books.filter { $0.status == .verified }
        let right = Self.books.filter { truth in
            accepted.contains { TextNormalization.title($0.title) == TextNormalization.title(truth.title) && $0.author == truth.author }
        }
        #expect(right.count >= 11, "accepted: \(accepted.map { "\($0.title) — \($0.author ?? "?")" })")
        #expect(accepted.count == right.count, "accepted: \(accepted.map { "\($0.title) — \($0.author ?? "?")" })")
    }

    @Test("Two thin books side by side stay two spines")
    func thinNeighbours() async throws {
        let spines = try await Self.reading.value.spines.map { Self.plain($0.text) }
        let emma = spines.filter { $0.contains("emma") }, lolita = spines.filter { $0.contains("lolita") }
        #expect(emma.count == 1 && lolita.count == 1 && emma != lolita, "\(spines)")
        #expect(emma.allSatisfy { !$0.contains("nabokov") } && lolita.allSatisfy { !$0.contains("austen") }, "\(spines)")
    }
}
