import Foundation
@testable import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("shelfd eval: providers measured on photos whose books are known", .serialized)
struct EvalCommandTests {
    /// Three books on the shelf, left to right; the last one is the one the emulated model misses.
    static let truthBooks = [
        TruthDocument.Book(
            title: "The Hobbit", author: "J. R. R. Tolkien", box: Box(x1: 0.05, y1: 0.1, x2: 0.2, y2: 0.9)),
        TruthDocument.Book(
            title: "Dune", author: "Frank Herbert", isbn13: "9780441172719",
            box: Box(x1: 0.3, y1: 0.1, x2: 0.45, y2: 0.9)),
        TruthDocument.Book(title: "Emma", author: "Jane Austen", box: Box(x1: 0.8, y1: 0.1, x2: 0.95, y2: 0.9)),
    ]
    /// Two right (one in another spelling, one with another edition's ISBN), one wrong and unsure; Emma missed.
    static let reading: [GeminiEmulator.Book] = [
        .init(title: "Hobbit", author: "J.R.R. Tolkien", confidence: 0.9, box2D: [100, 50, 900, 200]),
        .init(
            title: "Dune: Deluxe Edition", author: "Herbert, Frank", isbn: "9780340960196", confidence: 0.85,
            box2D: [100, 300, 900, 450]),
        .init(title: "Neuromancer", author: "William Gibson", confidence: 0.4, box2D: [100, 550, 900, 700]),
    ]

    /// The same photo twice (two names, one content), each with its truth file.
    static func truthFolder(in root: ShelfRoot) throws -> URL {
        let folder = root.base.appendingPathComponent("truth")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let photo = JPEGFactory.shelf(seed: 900)
        for name in ["left.jpg", "again.jpg"] {
            try Data(photo).write(to: folder.appendingPathComponent(name))
            try JSONStyle.encoder().encode(TruthDocument(photo: name, books: truthBooks))
                .write(to: folder.appendingPathComponent("\(name).truth.json"))
        }
        return folder
    }

    @Test("Counts are exact, the photo is sent once, and nothing enters the library", .timeLimit(.minutes(1)))
    func countsThroughTheBinary() async throws {
        try await withGeminiEmulator(.always(.books(Self.reading))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let truth = try Self.truthFolder(in: root)

            let json = try await root.shelfd("eval", "--truth", truth.path, "--json")
            #expect(json.status == 0, "\(json.stderr)")
            let document = try JSONStyle.decoder().decode(EvalDocument.self, from: Data(json.stdout.utf8))
            #expect(document.schema == "shelfd.eval/1")
            let provider = try #require(document.providers.first)
            #expect(document.providers.map(\.provider) == ["gemini"])
            #expect(provider.score.photos == 2 && provider.score.expected == 6 && provider.score.reported == 6)
            #expect(provider.score.right == 4 && provider.score.wrongISBNs == 2 && provider.score.needsReview == 2)
            #expect(provider.score.recall == 4.0 / 6 && provider.score.precision == 4.0 / 6)
            #expect(document.overall == provider.score)
            let photo = try #require(provider.photos.first { $0.photo == "left.jpg" })
            #expect(photo.books.map(\.truth) == [0, 1, nil])
            #expect(photo.books.map(\.wrongISBN) == [false, true, false])
            #expect(photo.missed == [2])
            #expect(gemini.requests.count == 1, "one content, one request")

            let text = try await root.shelfd("eval", "--truth", truth.path)
            #expect(text.status == 0, "\(text.stderr)")
            let row = try #require(text.stdout.split(separator: "\n").first { $0.hasPrefix("gemini ") })
            #expect(row.contains("4/6") && row.contains("66.7%") && row.contains("33.3%"), "\(row)")
            #expect(text.stdout.contains("missed: Emma — Jane Austen"))
            #expect(text.stdout.contains("wrong:  Neuromancer — William Gibson"))

            #expect(!FileManager.default.fileExists(atPath: root.root.appendingPathComponent("library.json").path))
            #expect(try root.resultDocuments().isEmpty)
        }
    }

    @Test(
        "The HTML page embeds each photo and draws right, wrong and missed boxes in their colours",
        .timeLimit(.minutes(1)))
    func htmlPage() async throws {
        try await withGeminiEmulator(.always(.books(Self.reading))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let truth = try Self.truthFolder(in: root)
            let page = root.base.appendingPathComponent("eval.html")
            let result = try await root.shelfd("eval", "--truth", truth.path, "--html", page.path)
            #expect(result.status == 0, "\(result.stderr)")
            let html = try String(contentsOf: page, encoding: .utf8)
            #expect(html.components(separatedBy: "url(data:image/jpeg;base64,").count == 3, "each photo embedded once")
            #expect(
                html.components(separatedBy: "<img alt=\"\" src=\"data:image/jpeg;base64,").count - 1 == 6,
                "each reported book's spine beside its title")
            #expect(html.components(separatedBy: "<rect class=\"right\"").count - 1 == 4)
            #expect(html.components(separatedBy: "<rect class=\"wrong\"").count - 1 == 2)
            #expect(html.components(separatedBy: "<rect class=\"missed\"").count - 1 == 2)
            #expect(html.contains("<title>missed: Emma — Jane Austen</title>"))
            #expect(!html.contains("src=\"/") && !html.contains("href=\"http"), "nothing outside the page")
        }
    }

    @Test(
        "On a photo whose truth lists no books, each book is shown accepted or for review beside its spine",
        .timeLimit(.minutes(1)))
    func unlabelledPhoto() async throws {
        try await withGeminiEmulator(.always(.books(Self.reading))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let folder = root.base.appendingPathComponent("unlabelled")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(JPEGFactory.shelf(seed: 901)).write(to: folder.appendingPathComponent("shelf.jpg"))
            try JSONStyle.encoder().encode(TruthDocument(photo: "shelf.jpg", books: []))
                .write(to: folder.appendingPathComponent("shelf.jpg.truth.json"))
            let page = root.base.appendingPathComponent("eval.html")
            let result = try await root.shelfd("eval", "--truth", folder.path, "--html", page.path)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(
                result.stdout.contains("accepted: Dune") && result.stdout.contains("review: Neuromancer"),
                "\(result.stdout)")
            let html = try String(contentsOf: page, encoding: .utf8)
            #expect(html.components(separatedBy: "<rect class=\"accepted\"").count - 1 == 2)
            #expect(html.components(separatedBy: "<rect class=\"review\"").count - 1 == 1)
            #expect(!html.contains("<rect class=\"wrong\""))
            #expect(
                html.contains("src=\"data:image/jpeg;base64,")
                    && html.contains("<span>review: Neuromancer — William Gibson</span>"))
        }
    }

    @Test("No truth files, or an unknown provider, is a usage error")
    func usageErrors() async throws {
        let root = try ShelfRoot()
        let empty = root.base.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let none = try await root.shelfd("eval", "--truth", empty.path)
        #expect(none.status == 2 && none.stderr.contains("truth.json"), "\(none.stderr)")

        let truth = try Self.truthFolder(in: root)
        let unknown = try await root.shelfd("eval", "--truth", truth.path, "--provider", "tesseract-9000")
        #expect(unknown.status == 2, "\(unknown.stderr)")
    }
}
