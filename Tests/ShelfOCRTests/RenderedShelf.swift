import Foundation
import Logging
import ShelfCore
import ShelfEnrichment
@testable import ShelfOCR
import ShelfProviders
import ShelfStore

/// A rendered shelf of Fixtures/ (scripts/make-ocr-fixtures.sh) read by the real PP-OCR models and matched against
/// a catalogue (samples/catalogue.csv unless told), as `--provider ocr` reads a photo.
enum RenderedShelf {
    /// What the reader and the enrichment made of a fixture.
    struct Reading {
        var spines: [Spine]
        var books: [Book]
        /// The texts left unread, as naming no book.
        var unread: [ResultDocument.UnreadSpine]
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let provider = OCRProvider(
        settings: OCRSettings(engine: .ppocr(PPOCRFiles.locate())),
        logger: Logger(label: "shelfd.test.ocr"))

    /// The spines the offline provider reads on the fixture, and its books once checked and matched.
    static func read(_ fixture: String) async throws -> (spines: [Spine], books: [Book]) {
        let reading = try await reading(fixture)
        return (reading.spines, reading.books)
    }

    /// The fixture read and matched against `catalogue` (a path in the repository).
    static func reading(_ fixture: String, catalogue: String = "samples/catalogue.csv") async throws -> Reading {
        let bytes = try [UInt8](
            Data(contentsOf: repository.appendingPathComponent("Tests/ShelfOCRTests/Fixtures/\(fixture)")))
        let raw = try await provider.send(PhotoUpload(bytes: bytes))
        let spines = try JSONStyle.decoder().decode(OCRResponse.self, from: Data(raw.body)).spines.map(\.spine)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shelfd-rendered-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
        _ = try CatalogueImporter(catalogue: store.catalogue).importFile(
            repository.appendingPathComponent(catalogue).path)
        let enricher = Enricher(sources: [try CatalogueSource(catalogue: store.catalogue)], reviewThreshold: 0.6)
        let checked = BookChecker(reviewThreshold: 0.6).check(try provider.parse(raw).books, source: provider.name)
        let outcome = await enricher.enrich(checked)
        return Reading(spines: spines, books: outcome.books, unread: outcome.unread)
    }

    /// Letters and digits only, lower case: how a test finds a title in a spine's text.
    static func plain(_ text: String) -> String {
        String(String.UnicodeScalarView(text.lowercased().unicodeScalars.filter(Character.isLetterOrDigit)))
    }

    /// The `books` (title, author) accepted as themselves among `read`.
    static func accepted(_ books: [(title: String, author: String)], among read: [Book]) -> [(
        title: String, author: String
    )] {
        books.filter { truth in
            read.contains {
                $0.status == .verified && TextNormalization.title($0.title) == TextNormalization.title(truth.title)
                    && $0.author == truth.author
            }
        }
    }
}
