import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// A person's list as many keep it, titles without authors: the home shelf's photos read offline by `shelfd scan`
/// with the real models, the list imported among the library data set's 15,229 books.
extension EvalCommandTests {
    @Test(
        "With a list of titles only, scan accepts most of the home shelf's books, and none wrongly",
        .enabled(if: homeShelf != nil, "shared/data/home-shelf not found beside the repository"),
        .timeLimit(.minutes(5)))
    func titlesOnlyScan() async throws {
        let shelf = try #require(Self.homeShelf)
        let root = try ShelfRoot(apiKey: nil)
        let photos = root.base.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        var listed: [String: [String]] = [:] // photo → its books' titles
        var rows = ["title,author"]
        for name in ["IMG_9797", "IMG_9798", "IMG_9799"] {
            try FileManager.default.copyItem(
                at: shelf.appendingPathComponent("\(name).jpg"), to: photos.appendingPathComponent("\(name).jpg"))
            let books = try JSONDecoder().decode(
                [TruthDocument.ListedBook].self,
                from: Data(contentsOf: shelf.appendingPathComponent("\(name).truth.json")))
            listed["\(name).jpg"] = books.map(\.title)
            rows += books.map { "\"\($0.title.replacingOccurrences(of: "\"", with: "\"\""))\"," }
        }
        let titles = root.base.appendingPathComponent("titles.csv")
        try Data(rows.joined(separator: "\n").utf8).write(to: titles)
        let library = shelf.deletingLastPathComponent().appendingPathComponent("library-dataset/catalogue.csv")
        #expect(try await root.shelfd("catalogue", "import", library.path, timeout: .seconds(120)).status == 0)
        #expect(try await root.shelfd("catalogue", "import", titles.path).status == 0)

        let scan = try await root.shelfd("scan", "--provider", "ocr", "--json", photos.path, timeout: .seconds(240))
        #expect(scan.status == 0, "\(scan.stderr)")
        let results = try JSONStyle.decoder().decode([ResultDocument].self, from: Data(scan.stdout.utf8))
        #expect(results.count == 3)
        /// A title as the evaluation compares it: before its colon, folded.
        func key(_ title: String) -> String {
            TextNormalization.fold(String(title.split(separator: ":").first ?? ""))
        }
        var right = 0, wrong: [String] = []
        for result in results {
            let name = URL(fileURLWithPath: result.photo.path).lastPathComponent
            let expected = Set((listed[name] ?? []).map(key))
            let accepted = Set(result.books.filter { $0.status == .verified }.map { key($0.title) })
            right += accepted.intersection(expected).count
            wrong += accepted.subtracting(expected).map { "\(name): \($0)" }
        }
        // `scripts/bench-reading.sh --titles-only` measures 27 of the 35 on these photos (5 before titles alone
        // were weighed by their rarity); the exact count moves with the reader's lines, the floor does not.
        #expect(right >= 26, "accepted right \(right) of 35")
        #expect(wrong.isEmpty, "accepted wrongly: \(wrong)")
    }
}
