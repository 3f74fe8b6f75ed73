import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// A spine read badly and unsure: the catalogue offers Dune Messiah (and Dune) for it.
private let misread = GeminiEmulator.Book(
    title: "Dune Mesiah", author: "Frank Herbert", confidence: 0.35,
    box2D: [120, 300, 880, 340])

/// The review page in a browser (the rest is tested in-process, in ShelfWebTests).
@Suite("The review page in a browser", .serialized)
struct ReviewPageBrowserTests {
    /// Two books waiting: "Dune Mesiah" with catalogue candidates and "Smudged Spine" with none, an export made
    /// once (so decisions rewrite it), and `shelfd web` serving the page.
    func withReviewPage(_ body: (ShelfRoot, String) async throws -> Void) async throws {
        try await withGeminiEmulator(.always(.books([dune, misread, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.importCatalogue(sampleCatalogue)
            try root.drop(JPEGFactory.shelf(seed: 60), as: "den/IMG_9.jpg")
            #expect(try await root.shelfd("run").status == 0)
            #expect(try await root.reviewList().map(\.book.title).sorted() == ["Dune Mesiah", "Smudged Spine"])
            let export = try await root.shelfd("export", "--format", "goodreads")
            #expect(export.status == 0, "\(export.stderr)")
            let web = try root.startWeb()
            defer { web.process.terminate() }
            try await body(root, try await root.webURL())
        }
    }

    @Test(
        "In a browser the crop loads, 1 takes the first candidate into library.json and the exports, the page goes on",
        .timeLimit(.minutes(3)))
    func keysDecide() async throws {
        try await withReviewPage { root, url in
            let id = try await root.reviewID("Dune Mesiah")
            let smudged = try await root.reviewID("Smudged Spine")
            let candidate = try #require(try await root.reviewList().first { $0.id == id }?.candidates.first?.record)
            try await withBrowser { browser in
                try await browser.navigate(to: url + "/review/\(id)")
                let crop = try await browser.find(".review-crop img")
                try await browser.waitUntil("the crop to load") { try await crop.property("complete") == true }
                #expect(try await crop.property("naturalWidth").int ?? 0 > 0)
                // The crop reads across, drawn as wide as the photo below it (it was once a narrow column's width).
                let drawn = try await browser.execute(
                    """
                    const img = document.querySelector('.review-crop img'), box = img.getBoundingClientRect();
                    return Math.round(img.naturalWidth * Math.min(box.width / img.naturalWidth, box.height / img.naturalHeight));
                    """)
                #expect(drawn.int ?? 0 >= 500, "the crop is drawn \(drawn) px wide")
                #expect(try await browser.find(".review-title").text() == "Dune Mesiah")
                try await browser.screenshot("review")

                try await browser.pressKeys("7") // no such candidate: said, nothing decided
                try await browser.waitUntil("the page to say so") {
                    try await browser.find("[data-review-note]").text() == "No candidate 7."
                }
                #expect(try await root.reviewList().count == 2)

                try await browser.pressKeys("1")
                try await browser.waitUntil("the next book's page") {
                    try await browser.currentURL() == url + "/review/\(smudged)"
                }
                try await waitUntil("library.json and the export follow the decision", timeout: .seconds(10)) {
                    try root.library().books.contains { $0.title == candidate.title && $0.status == .verified }
                        && root.exported("goodreads").contains(candidate.title)
                }
                let library = try root.library()
                #expect(library.books.contains { $0.title == candidate.title && $0.status == .verified })
                #expect(!library.books.contains { $0.title == "Dune Mesiah" })
                #expect(try root.exported("goodreads").contains(candidate.title))
                #expect(try await browser.find(".review-title").text() == "Smudged Spine")

                // Keys typed into the edit form are the form's: "r" there rejects nothing.
                try await browser.pressKeys("e")
                try await browser.pressKeys("r")
                #expect(try await browser.find("input[name=title]").property("value") == "Smudged Spiner")
                try await browser.pressKeys(Browser.Key.escape + "r")
                try await browser.waitUntil("nothing left to review") {
                    try await browser.find(".review-empty").text().contains("Nothing to review")
                }
                #expect(try await root.reviewList().isEmpty)
                // The whole photo is served by the photo pages; the page's own script and crop raise no error.
                let errors = try await browser.consoleMessages().filter {
                    $0.level == "SEVERE" && !$0.message.contains("/photos/") && !$0.message.contains("favicon")
                }
                #expect(errors.isEmpty, "\(errors)")
            }
        }
    }

    @Test(
        "On a phone the review fits the screen: crop, reading and buttons stacked, no horizontal scroll",
        .timeLimit(.minutes(3)))
    func phone() async throws {
        try await withReviewPage { root, url in
            let id = try await root.reviewID("Dune Mesiah")
            try await withBrowser(viewport: .phone) { browser in
                try await browser.navigate(to: url + "/review/\(id)")
                let crop = try await browser.find(".review-crop img")
                try await browser.waitUntil("the crop to load") { try await crop.property("complete") == true }
                let width = try await browser.pageWidth()
                #expect(!width.overflows, "\(width)")
                let buttons = try await browser.execute(
                    """
                    return [...document.querySelectorAll('.review button')].map((b) => b.getBoundingClientRect())
                        .filter((r) => r.height < 44 || r.right > innerWidth).length
                    """)
                #expect(buttons == 0, "every button at least 44 px high and inside the screen")
                try await browser.screenshot("review-phone")
            }
        }
    }
}

private extension URL {
    /// `http://host:port/` of this URL.
    var siteRoot: String {
        "\(scheme ?? "http")://\(host ?? "127.0.0.1")\(port.map { ":\($0)" } ?? "")/"
    }
}
