import Foundation
import ShelfCore
import Testing

/// The offline provider's accuracy on the shipped samples, measured by `shelfd eval` as a person would run it.
/// The floors sit a little under what it measures (recall 0.85, precision 0.88 on Tesseract 5.3 with `eng`),
/// so a change that makes it read or match worse fails here.
@Suite("The ocr provider on the sample shelves", .serialized)
struct OCRSamplesTests {
    static let recallFloor = 0.78
    static let precisionFloor = 0.82

    @Test("shelfd eval --provider ocr on samples/: recall and precision above their floors, no wrong ISBN",
          .timeLimit(.minutes(5)))
    func samplesAboveFloors() async throws {
        let root = try ShelfRoot(apiKey: nil)
        let samples = SamplesTests.folder
        let result = try await root.shelfd("eval", "--truth", samples.path, "--provider", "ocr",
                                           "--catalogue", samples.appendingPathComponent("catalogue.csv").path, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let document = try JSONStyle.decoder().decode(EvalDocument.self, from: Data(result.stdout.utf8))
        let overall = document.overall
        #expect(overall.photos == 6)
        #expect((overall.recall ?? 0) >= Self.recallFloor, "recall \(overall.recall ?? 0)")
        #expect((overall.precision ?? 0) >= Self.precisionFloor, "precision \(overall.precision ?? 0)")
        #expect(overall.wrongISBNs == 0)
    }
}
