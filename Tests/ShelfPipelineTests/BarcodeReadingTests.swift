import Foundation
import Logging
import ShelfCore
import ShelfEnrichment
import ShelfImaging
import ShelfStore
import ShelfTesting
import Testing
@testable import ShelfPipeline

/// `[pipeline] barcodes`: a photo's ISBN barcodes read with the real libzbar, beside a scripted provider and the local
/// catalogue.
@Suite struct BarcodeReadingTests {
    /// Three backs: Pride and Prejudice on the left, The Great Gatsby in the middle, upside down, and on the right a
    /// 979 ISBN that no catalogue holds.
    static let backs = BookBacks.photo(
        [
            .init(digits: "9780141439518", centre: (0.2, 0.5), module: 3),
            .init(digits: "9780743273565", centre: (0.5, 0.5), module: 3, quarterTurns: 2),
            .init(digits: "9791032305690", centre: (0.8, 0.5), module: 3),
        ], width: 1800, height: 1000)
    static let catalogue = [
        CatalogueRow(title: "Pride and Prejudice", author: "Jane Austen", isbn: ISBN("9780141439518"), year: 1813),
        CatalogueRow(title: "The Great Gatsby", author: "F. Scott Fitzgerald", isbn: ISBN("9780743273565"), year: 1925),
        CatalogueRow(title: "Dune", author: "Frank Herbert", isbn: ISBN("9780441172719"), year: 1965),
    ]

    /// A reader with `barcodes`, the provider `provider` and, unless `offline`, the catalogue above as its source.
    static func reading(
        _ photo: [UInt8], barcodes: BarcodeMode, provider: ScriptedProvider, offline: Bool = false,
        meter: CountingMeter = CountingMeter()
    ) async throws -> ReadPhoto {
        try await withTemporaryDirectory { folder in
            let store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
            _ = try store.catalogue.addRows(catalogue, importID: nil)
            let sources: [any BookSource] = offline ? [] : [try CatalogueSource(catalogue: store.catalogue)]
            var reader = PhotoReader(
                lineup: .single(channel(provider)), enricher: Enricher(sources: sources, reviewThreshold: 0.6),
                reviewThreshold: 0.6, maxPixels: 64_000_000, health: UntrackedProviderHealth(), time: .system)
            reader.barcodes = barcodes
            return try PhotoReaderTests.books(
                await reader.read(
                    photo, journal: MemoryJournal(), meter: meter,
                    logger: PhotoReaderTests.logger))
        }
    }

    @Test("A barcode and the model's reading of the same book are one book, with the barcode's exact ISBN")
    func alsoMergesWithTheModel() async throws {
        // The model reads Pride and Prejudice where its back lies, with a wrong ISBN, and a book the photo does not
        // show as barcodes (Dune, on the far left).
        let model = ScriptedProvider(
            "gemini",
            [
                .success(
                    ModelAnswer(books: [
                        Detection(
                            title: "Pride & Prejudice", author: "Austen", isbn: "9780141439501", confidence: 0.7,
                            box: Box(x1: 0.1, y1: 0.2, x2: 0.3, y2: 0.8)),
                        Detection(
                            title: "Dune", author: "Frank Herbert", confidence: 0.9,
                            box: Box(x1: 0.0, y1: 0.0, x2: 0.05, y2: 1)),
                    ]))
            ])
        let read = try await Self.reading(Self.backs, barcodes: .also, provider: model)
        #expect(model.uploads.count == 1, "the provider is asked too")
        let byISBN = Dictionary(grouping: read.books, by: { $0.isbn13 ?? "none" })
        #expect(read.books.count == 4, "\(read.books.map { "\($0.title) \($0.isbn13 ?? "-")" })")
        let pride = try #require(byISBN["9780141439518"]?.first)
        #expect(
            pride.title == "Pride and Prejudice" && pride.status == .verified && pride.source == BarcodeBooks.source)
        #expect(pride.spineText == nil, "a barcode is no spine's words: \(pride.spineText ?? "")")
        #expect(
            pride.box.map { $0.x1 > 0.1 && $0.x2 < 0.3 } == true,
            "its box is the symbol's: \(String(describing: pride.box))")
        let gatsby = try #require(byISBN["9780743273565"]?.first)
        #expect(
            gatsby.title == "The Great Gatsby" && gatsby.author == "F. Scott Fitzgerald" && gatsby.status == .verified)
        #expect(gatsby.match?.source == "catalogue")
        let unknown = try #require(byISBN["9791032305690"]?.first)
        #expect(unknown.status == .needsReview && unknown.reviewReasons == [Enricher.Reason.isbnUnresolved])
        #expect(unknown.title == "ISBN 9791032305690" && unknown.isbn10 == nil)
        #expect(read.books.contains { $0.title == "Dune" && $0.source == "gemini" })
        #expect(!read.books.contains { $0.isbn13 == "9780141439501" }, "the model's misread ISBN is not a second book")
    }

    @Test("The offline reader's title above each symbol and the digits under it are that barcode's book, not items")
    func titlesAndDigitsReadAsTextAreTheBarcodesBooks() async throws {
        // As the offline reader reads the backs: each title above its symbol, the digits printed under it, and on a
        // back without bars (Dune's copyright page) its ISBN printed alone.
        func text(_ words: String, _ box: Box) -> Detection {
            Detection(title: words, confidence: 0.95, box: box, form: .spineText, textRun: .across)
        }
        let reader = ScriptedProvider(
            "ocr",
            [
                .success(
                    ModelAnswer(books: [
                        text("Pride and Prejudice Jane Austen", Box(x1: 0.12, y1: 0.22, x2: 0.28, y2: 0.28)),
                        text("9 780141 439518", Box(x1: 0.13, y1: 0.72, x2: 0.27, y2: 0.76)),
                        text("THE GREAT GATSBY", Box(x1: 0.42, y1: 0.72, x2: 0.58, y2: 0.78)),
                        text("9791032305690", Box(x1: 0.73, y1: 0.72, x2: 0.87, y2: 0.76)),
                        text("ISBN 0-441-17271-7", Box(x1: 0.0, y1: 0.0, x2: 0.06, y2: 0.05)),
                    ]))
            ])
        let read = try await Self.reading(Self.backs, barcodes: .also, provider: reader)
        let isbns = read.books.compactMap(\.isbn13)
        #expect(
            isbns.sorted() == ["9780141439518", "9780441172719", "9780743273565", "9791032305690"],
            "one book per ISBN: \(read.books.map { "\($0.title) \($0.isbn13 ?? "-") \($0.status)" })")
        #expect(read.books.filter { $0.status == .needsReview }.map(\.isbn13) == ["9791032305690"])
        let pride = try #require(read.books.first { $0.isbn13 == "9780141439518" })
        #expect(pride.title == "Pride and Prejudice" && pride.source == BarcodeBooks.source)
        #expect(pride.box.map { $0.y1 > 0.3 } == true, "the symbol's box, not the title's")
        #expect(pride.notes?.contains { $0.hasPrefix("also_read: «Pride and Prejudice Jane Austen»") } == true)
        let dune = try #require(read.books.first { $0.isbn13 == "9780441172719" })
        #expect(dune.title == "Dune" && dune.status == .verified, "an ISBN printed alone is exact: \(dune)")
    }

    @Test("With barcodes = only a photo of backs costs no request; a photo without barcodes is sent as usual")
    func onlySparesTheProvider() async throws {
        let unused = ScriptedProvider("gemini", [])
        let meter = CountingMeter()
        let read = try await Self.reading(Self.backs, barcodes: .only, provider: unused, meter: meter)
        #expect(unused.uploads.isEmpty && meter.charges == 0)
        #expect(Set(read.books.compactMap(\.isbn13)) == ["9780141439518", "9780743273565", "9791032305690"])
        #expect(
            read.books.filter { $0.status == .verified }.map(\.title).sorted() == [
                "Pride and Prejudice", "The Great Gatsby",
            ])
        #expect(read.decided.provider == BarcodeBooks.source && read.runs.count == 1)

        let shelf = ScriptedProvider(
            "gemini",
            [.success(ModelAnswer(books: [Detection(title: "Dune", author: "Frank Herbert", confidence: 0.9)]))])
        let spines = try await Self.reading(
            JPEGFactory.shelf(width: 640, height: 480, seed: 2), barcodes: .only, provider: shelf)
        #expect(shelf.uploads.count == 1 && spines.books.map(\.title) == ["Dune"])
    }

    @Test("With barcodes = off no barcode is read")
    func offReadsNone() async throws {
        let model = ScriptedProvider(
            "gemini",
            [.success(ModelAnswer(books: [Detection(title: "Dune", author: "Frank Herbert", confidence: 0.9)]))])
        let read = try await Self.reading(Self.backs, barcodes: .off, provider: model)
        #expect(read.books.map(\.title) == ["Dune"])
    }

    @Test("Offline, a barcode's book keeps its exact ISBN and waits for a person to name it")
    func offlineKeepsTheISBN() async throws {
        let unused = ScriptedProvider("gemini", [])
        let read = try await Self.reading(Self.backs, barcodes: .only, provider: unused, offline: true)
        #expect(read.books.count == 3)
        #expect(
            read.books.allSatisfy { $0.status == .needsReview && $0.reviewReasons == [Enricher.Reason.isbnUnresolved] })
        #expect(read.books.contains { $0.title == "ISBN 9780141439518" && $0.isbn10 == "0141439513" })
    }
}
