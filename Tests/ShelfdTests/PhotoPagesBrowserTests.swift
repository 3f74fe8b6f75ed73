import Foundation
import ShelfCore
import ShelfDigest
import ShelfHTTP
import ShelfRuntimeTesting
import ShelfTesting
import Testing

private let markup = "<img src=x onerror=alert(1)>"

extension ShelfRoot {
    /// The open review item of the book read as `title`.
    fileprivate func openItem(_ title: String) async throws -> String {
        let list = try await shelfd("review", "list", "--json")
        let items = try JSONStyle.decoder().decode([ReviewDocument].self, from: Data(list.stdout.utf8))
        return try #require(items.first { $0.book.title == title }?.id)
    }
}

/// A GET through the test client, as text.
private func page(_ url: String, _ http: HTTPClient = HTTPClient(maxConcurrent: 2)) async throws -> (
    status: Int, html: String
) {
    let response = try await http.send(HTTPRequest(url: url))
    return (response.status, String(decoding: response.body, as: UTF8.self))
}

/// The photo pages in a browser (the rest is tested in-process, in ShelfWebTests).
@Suite("Photo pages in a browser", .serialized)
struct PhotoPagesBrowserTests {
    @Test(
        "In a browser: the photo with its boxes over it, inside the picture; a screenshot for docs/photos.md",
        .timeLimit(.minutes(3)))
    func browserShowsBoxes() async throws {
        let tip = GeminiEmulator.Suggestion(
            type: "distance_too_far", severity: "info",
            message: "Step closer: the spines on the right are small.")
        try await withGeminiEmulator(.always(.books([dune, hobbit, blurry, typo, shadow], suggestions: [tip]))) {
            gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(width: 1200, height: 900, seed: 920)
            let sha = SHA256.hex(of: photo)
            try root.drop(photo, as: "living-room/IMG_3.jpg")
            #expect(try await root.shelfd("run").status == 0)
            // Every state on the page (and in docs/photos.md's screenshot): one rejected, one edited, one left to review.
            #expect(try await root.shelfd("review", "reject", try await root.openItem("Smudged Spine")).status == 0)
            #expect(
                try await root.shelfd(
                    "review", "edit", try await root.openItem("Dnue"), "--title", "Dune Messiah",
                    "--author", "Frank Herbert"
                ).status == 0)
            let web = try root.startWeb()
            let url = try await root.webURL()
            try await withBrowser { browser in
                try await browser.navigate(to: url + "/photos")
                let thumb = try await browser.find("a[href='/photos/\(sha)'] img")
                try await browser.waitUntil("the thumbnail to load") { try await thumb.property("complete") == true }
                #expect(try await thumb.property("naturalWidth").int == 320)
                try await browser.screenshot("photos")
                try await thumb.click()

                let image = try await browser.waitForElement(".photo-image")
                try await browser.waitUntil("the photo to load") { try await image.property("complete") == true }
                #expect(try await image.property("naturalWidth").int == 1200)
                let geometry = try await browser.execute(
                    """
                    const image = document.querySelector('.photo-image').getBoundingClientRect();
                    const boxes = [...document.querySelectorAll('.photo-box rect')].map((r) => r.getBoundingClientRect());
                    return { image: [image.left, image.top, image.right, image.bottom],
                             boxes: boxes.map((b) => [b.left, b.top, b.right, b.bottom]) };
                    """)
                let frame = (geometry["image"]?.array ?? []).compactMap { $0.number }
                let rects = (geometry["boxes"]?.array ?? []).map { ($0.array ?? []).compactMap { $0.number } }
                try #require(frame.count == 4, "\(geometry)")
                #expect(rects.count == 5)
                #expect(frame[2] - frame[0] > 300, "the photo is shown large: \(frame)")
                for rect in rects {
                    #expect(
                        rect.count == 4 && rect[0] >= frame[0] - 1 && rect[1] >= frame[1] - 1
                            && rect[2] <= frame[2] + 1 && rect[3] <= frame[3] + 1,
                        "box \(rect) inside the photo \(frame)")
                    #expect(rect[2] - rect[0] > 5 && rect[3] - rect[1] > 100, "a spine-shaped box: \(rect)")
                }
                // Dune's box starts 41% across the photo and 12% down.
                let dune = rects[0]
                #expect(abs((dune[0] - frame[0]) / (frame[2] - frame[0]) - 0.41) < 0.01)
                #expect(abs((dune[1] - frame[1]) / (frame[3] - frame[1]) - 0.12) < 0.01)
                let review = try await browser.find("a.photo-box-review")
                #expect(try await review.attribute("href")?.hasPrefix("/review/") == true)
                #expect(try await browser.findAll("a.photo-box-verified").count == 2)
                #expect(try await browser.findAll("a.photo-box-edited").count == 1)
                #expect(try await browser.findAll("g.photo-box-rejected").count == 1)
                try await browser.screenshot("photo")

                try await browser.setViewport(.phone)
                try await browser.navigate(to: url + "/photos/\(sha)")
                let width = try await browser.pageWidth()
                #expect(!width.overflows, "\(width)")
                try await browser.screenshot("photo-phone")
                try await browser.navigate(to: url + "/photos")
                let listWidth = try await browser.pageWidth()
                #expect(!listWidth.overflows, "the list: \(listWidth)")
            }
            #expect(try await web.stop() == 0)
        }
    }

    @Test("A title that is markup shows its characters on the photo page and runs nothing", .timeLimit(.minutes(3)))
    func markupTitleIsText() async throws {
        let trap = GeminiEmulator.Book(
            title: markup, author: "<b>Nobody</b>", confidence: 0.95, box2D: [100, 200, 900, 260])
        try await withGeminiEmulator(.always(.books([trap]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(seed: 930)
            let sha = SHA256.hex(of: photo)
            try root.drop(photo, as: "IMG_4.jpg")
            #expect(try await root.shelfd("run").status == 0)
            let web = try root.startWeb()
            let url = try await root.webURL()
            let html = try await page(url + "/photos/\(sha)").html
            #expect(!html.contains(markup) && !html.contains("<b>Nobody"))
            #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
            try await withBrowser { browser in
                try await browser.navigate(to: url + "/photos/\(sha)")
                let title = try await browser.waitForElement(".photo-book-title")
                #expect(try await title.text() == markup, "the characters, shown")
                #expect(try await browser.execute("return document.querySelectorAll('.photo-books img').length") == 0)
                #expect(try await browser.alertText() == nil, "no alert opened")
            }
            #expect(try await web.stop() == 0)
        }
    }
}
