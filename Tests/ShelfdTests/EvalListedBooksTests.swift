import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// `shelfd eval` on a person's own photos: a photo beside `<photo>.truth.json` holding a bare list of its books
/// (`[{"title", "authors"}]`, no boxes), as `../shared/data/home-shelf` has.
extension EvalCommandTests {
    /// `shared/data/home-shelf` (`SharedData`); nil when absent, and the test that reads it is skipped.
    static let homeShelf = SharedData.file("data/home-shelf/IMG_9797.jpg")?.deletingLastPathComponent()

    /// The list format of `truthBooks`, the last with two authors (the first is the one scored).
    static let listedBooks = """
        [{"title": "The Hobbit: or There and Back Again", "authors": ["J. R. R. Tolkien"]},
         {"title": "Dune", "authors": ["Frank Herbert"]},
         {"title": "Emma", "authors": ["Jane Austen", "Fiona Stafford"]}]
        """

    @Test(
        "A list-format truth file finds its photo by name and is counted: accepted right, found, wrong among accepted",
        .timeLimit(.minutes(1)))
    func listedBooksCounted() async throws {
        try await withGeminiEmulator(.always(.books(Self.reading))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let folder = root.base.appendingPathComponent("mine")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(JPEGFactory.shelf(seed: 902)).write(to: folder.appendingPathComponent("IMG_1.JPEG"))
            try Data(Self.listedBooks.utf8).write(to: folder.appendingPathComponent("IMG_1.truth.json"))

            let json = try await root.shelfd("eval", "--truth", folder.path, "--json")
            #expect(json.status == 0, "\(json.stderr)")
            let document = try JSONStyle.decoder().decode(EvalDocument.self, from: Data(json.stdout.utf8))
            let photo = try #require(document.providers.first?.photos.first)
            #expect(photo.photo == "IMG_1.JPEG")
            // Hobbit and Dune accepted and listed; Neuromancer left for review with no candidate; Emma not found.
            #expect(photo.score.acceptedRight == 2 && photo.score.found == 2 && photo.score.acceptedWrong == 0)
            #expect(photo.books.map(\.countedAs) == [0, 1, nil])
            #expect(photo.notFound == [2])
            #expect(document.overall.found == 2)

            let text = try await root.shelfd("eval", "--truth", folder.path)
            #expect(text.status == 0, "\(text.stderr)")
            #expect(
                text.stdout.contains("IMG_1.JPEG: recall 2/3")
                    && text.stdout.contains("accepted right 2, found 2/3, wrong among accepted 0"),
                "\(text.stdout)")
        }
    }

    @Test("A list-format truth file without its photo is a clear error")
    func listedBooksWithoutPhoto() async throws {
        let root = try ShelfRoot()
        let folder = root.base.appendingPathComponent("mine")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(Self.listedBooks.utf8).write(to: folder.appendingPathComponent("IMG_2.truth.json"))
        try Data("not a photo".utf8).write(to: folder.appendingPathComponent("IMG_2.txt"))
        let result = try await root.shelfd("eval", "--truth", folder.path)
        #expect(result.status != 0)
        #expect(
            result.stderr.contains("IMG_2.truth.json lists books, but there is no photo IMG_2.jpg"), "\(result.stderr)")
    }

    @Test(
        "On the home-shelf photo, the offline reader with the listed books in a catalogue finds most of them",
        .enabled(if: homeShelf != nil, "shared/data/home-shelf not found beside the repository"),
        .timeLimit(.minutes(5)))
    func homeShelfOffline() async throws {
        let home = try #require(Self.homeShelf)
        let root = try ShelfRoot(apiKey: nil)
        // The first photo alone, with its list: the folder holds the shelf's next photos too.
        let shelf = root.base.appendingPathComponent("IMG_9797")
        try FileManager.default.createDirectory(at: shelf, withIntermediateDirectories: true)
        for name in ["IMG_9797.jpg", "IMG_9797.truth.json"] {
            try FileManager.default.copyItem(
                at: home.appendingPathComponent(name), to: shelf.appendingPathComponent(name))
        }
        // Other books for the listed ones to hide among: the first 300 of the library data set's catalogue.
        let dataset = home.deletingLastPathComponent().appendingPathComponent("library-dataset/catalogue.csv")
        let lines = try String(contentsOf: dataset, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        let catalogue = root.base.appendingPathComponent("catalogue.csv")
        try Data(lines.prefix(301).joined(separator: "\n").utf8).write(to: catalogue)
        let page = root.base.appendingPathComponent("home.html")

        let result = try await root.shelfd(
            "eval", "--truth", shelf.path, "--provider", "ocr", "--catalogue", catalogue.path,
            "--add-listed-books", "--html", page.path, timeout: .seconds(240))
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("IMG_9797.jpg: recall") },
            "\(result.stdout)")
        let counts = try #require(
            line.firstMatch(of: /accepted right (\d+), found (\d+)\/13, wrong among accepted (\d+)/),
            "\(line)")
        let (acceptedRight, found, acceptedWrong) = (Int(counts.1)!, Int(counts.2)!, Int(counts.3)!)
        #expect(acceptedRight <= found && found <= 13, "\(line)")
        #expect(found >= 8, "PP-OCR finds 12 of the 13 (10 accepted, none wrong): \(line)")
        #expect(acceptedWrong <= 2, "\(line)")
        let overall = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("overall") })
        let cells = overall.split(separator: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        // The table's last columns: accepted right, found, wrong among accepted, s/photo.
        #expect(
            Array(cells.suffix(4).prefix(3)) == ["\(acceptedRight)", "\(found)/13", "\(acceptedWrong)"], "\(overall)")

        let html = try String(contentsOf: page, encoding: .utf8)
        let spines = html.components(separatedBy: "<small class=\"decision\">").count - 1
        #expect(spines >= found, "a decision beside each spine")
        #expect(html.contains("read «"), "the words read on a spine whose record took their place")

        // The same reading as JSON: the counts the text showed, and a crop on the page for each book with a box.
        let json = try await root.shelfd(
            "eval", "--truth", shelf.path, "--provider", "ocr", "--catalogue", catalogue.path,
            "--add-listed-books", "--json", timeout: .seconds(240))
        #expect(json.status == 0, "\(json.stderr)")
        let photo = try #require(
            JSONStyle.decoder().decode(EvalDocument.self, from: Data(json.stdout.utf8)).providers.first?.photos.first)
        #expect(
            photo.score.acceptedRight == acceptedRight && photo.score.found == found
                && photo.score.acceptedWrong == acceptedWrong)
        #expect(photo.books.count == spines)
        #expect(
            html.components(separatedBy: "<img alt=\"\" src=\"data:image/jpeg;base64,").count - 1
                == photo.books.filter { $0.box != nil }.count, "each spine's crop beside it")
        let listed = try JSONDecoder().decode(
            [TruthDocument.ListedBook].self,
            from: Data(contentsOf: shelf.appendingPathComponent("IMG_9797.truth.json")))
        #expect(listed.count == 13)
        for book in listed {
            #expect(html.contains(book.title), "\(book.title): counted as, or not found, on the page")
        }
    }
}
