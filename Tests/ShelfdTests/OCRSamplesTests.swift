import Foundation
import ShelfCore
import ShelfRuntimeTesting
import Testing

/// The offline provider's accuracy on the shipped samples, measured by `shelfd eval` as a person would run it.
/// The floors sit a little under what it measures (recall 0.85, precision 0.88 on Tesseract 5.3 with `eng`),
/// so a change that makes it read or match worse fails here.
@Suite("The ocr provider on the sample shelves", .serialized)
struct OCRSamplesTests {
    static let recallFloor = 0.78
    static let precisionFloor = 0.82

    @Test(
        "shelfd eval --provider ocr on samples/: recall and precision above their floors, no wrong ISBN",
        .timeLimit(.minutes(5)))
    func samplesAboveFloors() async throws {
        let root = try ShelfRoot(apiKey: nil)
        let samples = SamplesTests.folder
        let result = try await root.shelfd(
            "eval", "--truth", samples.path, "--provider", "ocr",
            "--catalogue", samples.appendingPathComponent("catalogue.csv").path, "--json",
            timeout: .seconds(240)) // six photos read on this machine's two cores
        #expect(result.status == 0, "\(result.stderr)")
        let document = try JSONStyle.decoder().decode(EvalDocument.self, from: Data(result.stdout.utf8))
        let overall = document.overall
        #expect(overall.photos == 6)
        #expect((overall.recall ?? 0) >= Self.recallFloor, "recall \(overall.recall ?? 0)")
        #expect((overall.precision ?? 0) >= Self.precisionFloor, "precision \(overall.precision ?? 0)")
        #expect(overall.wrongISBNs == 0)
    }
}

@Suite("The README's first commands, offline", .serialized)
struct OfflineSamplesTests {
    @Test(
        "No key and no network: the sample shelves are catalogued, the library and an export are written",
        .timeLimit(.minutes(5)))
    func samplesOffline() async throws {
        // Every remote service points at a closed port: the machine has no network as far as shelfd can tell.
        let closed = "\"http://127.0.0.1:9\""
        let root = try ShelfRoot(
            apiKey: nil,
            overrides: [
                "enrich": [
                    "sources": "[\"catalogue\", \"openlibrary\", \"googlebooks\"]",
                    "openlibrary_base_url": closed, "googlebooks_base_url": closed,
                ],
                "cloudflare": ["base_url": closed],
            ])
        let samples = SamplesTests.folder
        let imported = try await root.shelfd(
            "catalogue", "import", samples.appendingPathComponent("catalogue.csv").path)
        #expect(imported.status == 0, "\(imported.stderr)")
        // six photos through Tesseract: minutes on a busy 2-core machine
        let scan = try await root.shelfd(["scan", samples.path], timeout: .seconds(240))
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(scan.stderr.contains("reading photos with ocr"))
        #expect(scan.stdout.contains("Pride and Prejudice — Jane Austen"))

        let library = try root.library()
        let verified = library.books.filter { $0.status == .verified }
        #expect(library.books.count >= 45, "\(library.books.count) books")
        #expect(verified.count >= 25, "\(verified.count) verified")
        #expect(try root.resultDocuments().count == 6)

        let export = try await root.shelfd("export", "--format", "goodreads")
        #expect(export.status == 0, "\(export.stderr)")
        let rows = try root.exported("goodreads").split(separator: "\n")
        #expect(rows.count == verified.count + 1)
    }
}
