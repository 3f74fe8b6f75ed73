import Foundation
import ShelfCore
import ShelfHTTP
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// A shelf photo as a phone reads it badly: 40 spines left for review, left to right. Ten are misreadings of books
/// the catalogue has (their first candidate is the book); thirty are scraps no source knows, read with little
/// confidence. The model answers the same for both photos of the shelf "den".
private enum FortySpines {
    static let words = [
        "Harvest", "Lantern", "Meridian", "Orchard", "Quarry", "Saffron", "Tundra", "Willow", "Copper", "Falcon",
    ]
    static let catalogue =
        "Title,Author,ISBN,Year\n"
        + words.enumerated().map { index, word in
            "The \(word) Road,Ann \(word)son,,\(1950 + index)"
        }.joined(separator: "\n") + "\n"

    static var books: [GeminiEmulator.Book] {
        (0..<40).map { index in
            let x = 10 + index * 24
            let box = [100, x, 900, x + 18]
            guard index % 4 == 1 else {
                return GeminiEmulator.Book(
                    title: "Qzv Wrt \(Self.scrap(index))", author: nil, confidence: 0.2, box2D: box)
            }
            let word = words[index / 4]
            return GeminiEmulator.Book(
                title: "The \(word) Raod", author: "Ann \(word)son", confidence: 0.35, box2D: box)
        }
    }

    /// A different scrap of letters for each spine (a reading's title is its identity within a photo).
    static func scrap(_ index: Int) -> String {
        let letters = Array("bcdfghjklmnpqrstvwxz")
        return String([letters[index % 20], letters[(index * 7 + 3) % 20], letters[(index / 20) + 5]])
    }
}

@Suite("A photo's review on one page", .serialized)
struct PhotoReviewPageTests {
    /// Two photos of the shelf "den", 40 open items each, an export made once, and `shelfd web` serving the pages.
    func withShelf(_ body: (ShelfRoot, String, [String]) async throws -> Void) async throws {
        try await withGeminiEmulator(.always(.books(FortySpines.books))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let file = root.base.appendingPathComponent("shop.csv")
            try FortySpines.catalogue.write(to: file, atomically: true, encoding: .utf8)
            #expect(try await root.shelfd("catalogue", "import", file.path).status == 0)
            try root.drop(JPEGFactory.shelf(width: 960, height: 640, seed: 71), as: "den/IMG_1.jpg")
            try root.drop(JPEGFactory.shelf(width: 960, height: 640, seed: 72), as: "den/IMG_2.jpg")
            #expect(try await root.shelfd("run").status == 0)
            #expect(try await root.shelfd("export", "--format", "goodreads").status == 0)
            let items = try await root.reviewList()
            #expect(items.count == 80)
            let photos = Array(Set(items.map(\.photo))).sorted { $0.path < $1.path }.map(\.sha256)
            let web = try root.startWeb()
            defer { web.process.terminate() }
            try await body(root, try await root.webURL(), photos)
        }
    }

    @Test(
        "Forty spines cleared with keys alone, at most 60 presses; the library, exports and review/ follow",
        .timeLimit(.minutes(4)))
    func clearedByKeys() async throws {
        try await withShelf { root, url, photos in
            try await withBrowser { browser in
                try await browser.navigate(to: url + "/photos/\(photos[0])/review")
                #expect(
                    try await browser.find(".shelf-where").text().hasPrefix(
                        "80 of 80 left on shelf den · 40 on this photo"))
                #expect(try await browser.find("[data-photo-left]").text() == "40")
                #expect(try await browser.find("[data-next]").attribute("href") == "/photos/\(photos[1])/review?of=80")
                let boxes = try await browser.findAll("[data-box]")
                #expect(boxes.count == 40)
                try await browser.screenshot("photo-review")
                // Each spine's candidates, in the order the spines stand: the first candidate where there is one, else
                // not a book, and one scrap taken as read.
                let candidates = try await browser.execute(
                    "return [...document.querySelectorAll('[data-item]')].map((item) => Number(item.dataset.candidates))"
                )
                let counts = (candidates.array ?? []).compactMap { $0.int }
                #expect(counts.count == 40)
                #expect(counts.filter { $0 > 0 }.count == 10, "\(counts)")
                var keys = "jk" // look at the second spine, and back
                for (index, count) in counts.enumerated() { keys += count > 0 ? "1" : index == 0 ? "a" : "r" }
                #expect(keys.count <= 60)
                try await browser.pressKeys(keys)

                try await browser.waitUntil("the photo to be cleared", timeout: .seconds(60)) {
                    try await browser.find("[data-done]").isDisplayed()
                }
                try await waitUntil("the decisions to be stored", timeout: .seconds(30)) {
                    try await root.reviewList().count == 40
                }
                #expect(try await browser.find("[data-left]").text() == "40")
                #expect(try await root.reviewList().allSatisfy { $0.photo.sha256 == photos[1] })
                try await waitUntil("library.json, the export and review/ to follow", timeout: .seconds(20)) {
                    let library = try root.library()
                    let files = try FileManager.default.contentsOfDirectory(atPath: root.review.path).filter {
                        $0.hasSuffix(".json")
                    }
                    let export = try root.exported("goodreads")
                    return FortySpines.words.allSatisfy { word in
                        library.books.contains { $0.title == "The \(word) Road" && $0.status == .verified }
                    } && files.count == 40 && export.contains("The Falcon Road")
                }
                let library = try root.library()
                let asRead = "Qzv Wrt \(FortySpines.scrap(0))"
                #expect(library.books.contains { $0.title == asRead && $0.status == .verified })
                #expect(
                    !library.books.contains {
                        $0.title.hasPrefix("Qzv Wrt") && $0.status == .verified && $0.title != asRead
                    })
                let errors = try await browser.severeErrors()
                #expect(errors.isEmpty, "\(errors)")
            }
        }
    }

    @Test(
        "A bulk “not books” is shown, applied and undone; the scraps' threshold plan can be cancelled",
        .timeLimit(.minutes(4)))
    func bulkAndUndo() async throws {
        try await withShelf { root, url, photos in
            try await withBrowser { browser in
                try await browser.navigate(to: url + "/photos/\(photos[1])/review")
                #expect(try await browser.find("[data-undo]").isDisplayed() == false, "nothing to undo yet")
                #expect(try await browser.find("[data-plan]").isDisplayed() == false)
                try await browser.pressKeys("xxx") // the first three spines marked
                try await browser.find("[data-bulk=not_books][data-bulk-scope=marked]").click()
                try await browser.waitUntil("the plan to be shown") {
                    try await browser.find("[data-plan]").isDisplayed()
                }
                #expect(try await browser.findAll("[data-plan-items] li").count == 3)
                #expect(try await root.reviewList().count == 80, "nothing is decided before it is applied")

                try await browser.pressKeys(Browser.Key.enter)
                try await waitUntil("the three to be rejected", timeout: .seconds(20)) {
                    try await root.reviewList().count == 77
                }
                try await browser.waitUntil("the undo to be offered") {
                    try await browser.find("[data-undo]").isDisplayed()
                }
                #expect(try await browser.find("[data-photo-left]").text() == "37")
                #expect(try await browser.findAll(".shelf-item:not([hidden])").count == 37)

                try await browser.find("[data-undo-button]").click()
                try await waitUntil("the three to be open again", timeout: .seconds(20)) {
                    try await root.reviewList().count == 80
                }
                try await browser.waitUntil("the page to show them") {
                    try await browser.find("[data-photo-left]").text() == "40"
                }
                #expect(try await browser.findAll(".shelf-item:not([hidden])").count == 40)
                #expect(try await browser.find("[data-undo]").isDisplayed() == false, "an undo is taken once")
                try await waitUntil("review/ to follow the undo", timeout: .seconds(20)) {
                    try FileManager.default.contentsOfDirectory(atPath: root.review.path).filter {
                        $0.hasSuffix(".json")
                    }.count == 80
                }

                // Every spine with no candidate and a confidence under 0.50: the thirty scraps, planned, then cancelled.
                try await browser.find("[data-bulk=not_books][data-bulk-scope=scraps]").click()
                try await browser.waitUntil("the plan to be shown") {
                    try await browser.find("[data-plan]").isDisplayed()
                }
                #expect(try await browser.findAll("[data-plan-items] li").count == 30)
                try await browser.pressKeys(Browser.Key.escape)
                #expect(try await browser.find("[data-plan]").isDisplayed() == false)
                #expect(try await root.reviewList().count == 80)
                let errors = try await browser.severeErrors()
                #expect(errors.isEmpty, "\(errors)")
            }
        }
    }

    @Test(
        "On a phone a tap on a box selects its spine; the page fits the screen; the crop of a standing spine is turned",
        .timeLimit(.minutes(4)))
    func phoneTapAndCrop() async throws {
        try await withShelf { root, url, photos in
            let items = try await root.reviewList().filter { $0.photo.sha256 == photos[0] }
                .sorted { ($0.book.box?.x1 ?? 0) < ($1.book.box?.x1 ?? 0) }
            let fifth = items[4].id
            let crop = try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(url: url + "/review/\(fifth)/crop"))
            let decoded = try #require(JPEGFactory.decode(crop.body))
            #expect(
                decoded.width > 4 * decoded.height,
                "a standing spine's crop reads across: \(decoded.width)×\(decoded.height)")

            try await withBrowser(viewport: .phone) { browser in
                try await browser.navigate(to: url + "/photos/\(photos[0])/review")
                let image = try await browser.find(".shelf-frame img")
                try await browser.waitUntil("the photo to load") { try await image.property("complete") == true }
                try await browser.find("[data-box=\"\(fifth)\"] rect").click()
                try await browser.waitUntil("the fifth spine to be selected") {
                    try await browser.find("#item-\(fifth)").attribute("class")?.contains("selected") == true
                }
                #expect(
                    try await browser.find("[data-box=\"\(fifth)\"]").attribute("class")?.contains("selected") == true)
                let width = try await browser.pageWidth()
                #expect(!width.overflows, "\(width)")
                try await browser.pressKeys("r")
                try await waitUntil("the tapped spine to be rejected", timeout: .seconds(20)) {
                    try await !root.reviewList().contains { $0.id == fifth }
                }
                try await browser.screenshot("photo-review-phone")
                let errors = try await browser.severeErrors()
                #expect(errors.isEmpty, "\(errors)")
            }
        }
    }
}
