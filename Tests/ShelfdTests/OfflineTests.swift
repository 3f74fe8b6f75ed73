import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("No key, no network: the offline OCR", .serialized)
struct OfflineTests {
    static let catalogue = """
        Title,Author,ISBN,Year
        Dune,"Herbert, Frank",0441172717,1965
        Emma,Jane Austen,9780141439587,1815
        The Hobbit,"Tolkien, J. R. R.",,1937

        """

    @Test(
        "With no key, auto picks the OCR, and a drawn shelf is catalogued: books, library and export written, nothing kept to send",
        .timeLimit(.minutes(3)))
    func offlineShelfIsCatalogued() async throws {
        // No Gemini key, and the root's Gemini a closed port: nothing may be sent anywhere.
        let root = try ShelfRoot(apiKey: nil)
        let file = root.base.appendingPathComponent("mine.csv")
        try Self.catalogue.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await root.shelfd("catalogue", "import", file.path).status == 0)
        try root.drop(DrawnShelf.jpeg(["DUNE HERBERT", "EMMA AUSTEN"]), as: "shelf.jpg")

        let run = try await root.shelfd("run", timeout: .seconds(150))
        #expect(run.stderr.contains("Provider chosen event=provider_chosen provider=ocr"), "\(run.stderr)")
        let books = try #require(try root.resultDocuments().first).books
        #expect(
            books.map(\.title) == ["Dune", "Emma"],
            "\(books.map { "\($0.title) \($0.confidence) \($0.reviewReasons ?? [])" })")
        #expect(books.first?.author == "Herbert, Frank" || books.first?.author == "Frank Herbert")
        #expect(books.allSatisfy { $0.match?.source == "catalogue" })
        #expect(try root.library().books.count == 2)
        let export = try await root.shelfd("export", "--format", "goodreads", "--include-unverified", "--output", "-")
        #expect(
            export.status == 0 && export.stdout.contains("Dune") && export.stdout.contains("Emma"),
            "\(export.status) \(export.stdout) \(export.stderr)")

        let status = try await root.status()
        #expect(status.provider.name == "ocr")
        #expect(status.provider.chosenBecause?.contains("auto") == true)
        // ONNX Runtime for Linux keeps a device id and usage events under ~/.cache/Microsoft to send them to Microsoft.
        let telemetry = root.base.appendingPathComponent(".cache/Microsoft")
        #expect(!FileManager.default.fileExists(atPath: telemetry.path), "ONNX Runtime's telemetry is on")
    }
}
