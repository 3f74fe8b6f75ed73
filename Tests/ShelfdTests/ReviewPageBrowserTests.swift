import Foundation
import ShelfCore
import ShelfHTTP
import ShelfTesting
import Testing

/// A spine read badly and unsure: the catalogue offers Dune Messiah (and Dune) for it.
private let misread = GeminiEmulator.Book(
    title: "Dune Mesiah", author: "Frank Herbert", confidence: 0.35,
    box2D: [120, 300, 880, 340])

@Suite("The review page", .serialized)
struct ReviewPageTests {
    /// Two books waiting: "Dune Mesiah" with catalogue candidates and "Smudged Spine" with none, an export made
    /// once (so decisions rewrite it), and `shelfd web` serving the page.
    func withReviewPage(_ body: (ShelfRoot, String) async throws -> Void) async throws {
        try await withGeminiEmulator(.always(.books([dune, misread, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try await EnrichmentTests().importCatalogue(root)
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

    func get(_ url: String) async throws -> HTTPResponse {
        try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(url: url))
    }

    /// Posts a form as the browser does: with the session cookie a page gave and that session's CSRF token in
    /// the `csrf` field.
    func post(_ url: String, _ fields: [(String, String)]) async throws -> HTTPResponse {
        let site = try #require(URL(string: url)).siteRoot
        let page = try await get(site)
        let cookie = try #require(
            page.header("Set-Cookie")?.split(separator: ";").first.map(String.init), "a session cookie")
        let token = try #require(
            String(decoding: page.body, as: UTF8.self).firstMatch(of: /name="csrf-token" content="([^"]*)"/)?.1)
        let body = fields.map { ($0.0, $0.0 == "csrf" ? String(token) : $0.1) }
            .map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
            .joined(separator: "&")
        return try await HTTPClient(maxConcurrent: 1).send(
            HTTPRequest(
                method: "POST", url: url,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", cookie)],
                body: Array(body.utf8)))
    }

    func exported(_ root: ShelfRoot) throws -> String {
        try String(contentsOf: root.root.appendingPathComponent("exports/goodreads.csv"), encoding: .utf8)
    }

    @Test(
        "/review leads to the first open book: its reading, candidates, count and crop; other ids are 404",
        .timeLimit(.minutes(3)))
    func oneBookAtATime() async throws {
        try await withReviewPage { root, url in
            let items = try await root.reviewList()
            let first = try await get(url + "/review")
            #expect(first.status == 302)
            #expect(first.header("location") == "/review/\(items[0].id)")

            let id = try await root.reviewID("Dune Mesiah")
            let page = try await get(url + "/review/\(id)")
            #expect(page.status == 200)
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(html.contains("Dune Mesiah") && html.contains("Frank Herbert"))
            #expect(html.contains("Dune Messiah"), "the catalogue's candidate is offered")
            #expect(html.contains(" of <b>2</b>"))
            #expect(html.contains("src=\"/review/\(id)/crop\""))
            #expect(html.contains("src=\"/photos/\(items[0].photo.sha256)/image\""))
            #expect(html.contains("data-review"))

            let crop = try await get(url + "/review/\(id)/crop")
            #expect(crop.status == 200 && crop.header("content-type") == "image/jpeg")
            #expect(crop.body == Array(try Data(contentsOf: root.review.appendingPathComponent("\(id).jpg"))))

            for bad in [
                "/review/abcdef0123ff", "/review/NOT-AN-ID", "/review/..%2F..%2Fetc%2Fpasswd",
                "/review/abcdef0123ff/crop", "/review/..%2Fshelfd.db/crop", "/review/\(id.uppercased())/crop",
            ] {
                #expect(try await get(url + bad).status == 404, "\(bad)")
            }
        }
    }

    @Test("A title and author read as markup are shown as the characters they are", .timeLimit(.minutes(2)))
    func markupIsText() async throws {
        let markup = GeminiEmulator.Book(
            title: "<img src=x onerror=alert(1)>", author: "\"><script>alert(2)</script>",
            confidence: 0.3, box2D: [100, 500, 900, 540])
        try await withGeminiEmulator(.always(.books([markup]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 61), as: "IMG_10.jpg")
            #expect(try await root.shelfd("run").status == 0)
            let id = try #require(try await root.reviewList().first?.id)
            let web = try root.startWeb()
            defer { web.process.terminate() }
            let page = try await get(try await root.webURL() + "/review/\(id)")
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(page.status == 200)
            #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
            #expect(!html.contains("<img src=x") && !html.contains("<script>alert"))
            #expect(
                html.contains("value=\"&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;\""), "the edit form's field too")
        }
    }

    @Test(
        "An edit with a bad ISBN is refused (422) keeping what was typed and the book open; decisions go on to the next book",
        .timeLimit(.minutes(3)))
    func editsAreChecked() async throws {
        try await withReviewPage { root, url in
            let id = try await root.reviewID("Dune Mesiah")
            let refused = try await post(
                url + "/review/\(id)",
                [
                    ("csrf", ""), ("action", "edit"), ("title", "Dune Messiah"),
                    ("author", "Frank Herbert"), ("isbn", "978-0-441-17271-8"),
                ])
            #expect(refused.status == 422)
            let html = String(decoding: refused.body, as: UTF8.self)
            #expect(html.contains("not a valid ISBN"))
            #expect(html.contains("value=\"978-0-441-17271-8\""), "what was typed is kept")
            #expect(html.contains("aria-invalid=\"true\""))
            #expect(try await root.reviewList().contains { $0.id == id })
            #expect(!(try root.library().books.contains { $0.title == "Dune Messiah" }))

            let saved = try await post(
                url + "/review/\(id)",
                [
                    ("csrf", ""), ("action", "edit"), ("title", "Dune Messiah"),
                    ("author", "Frank Herbert"), ("isbn", "9780441172696"),
                ])
            #expect(saved.status == 303)
            let smudged = try await root.reviewID("Smudged Spine")
            #expect(saved.header("location") == "/review/\(smudged)")
            try await waitUntil("library.json and the export follow the decision", timeout: .seconds(10)) {
                try root.library().books.contains { $0.title == "Dune Messiah" }
                    && exported(root).contains("Dune Messiah")
            }
            let messiah = try #require(try root.library().books.first { $0.title == "Dune Messiah" })
            #expect(messiah.status == .verified && messiah.isbn13 == "9780441172696")
            #expect(messiah.history.last.map { [$0.action, $0.by] } == ["reviewed_by_user", "user"])
            #expect(try exported(root).contains("Dune Messiah"))

            let noCandidate = try await post(
                url + "/review/\(smudged)", [("csrf", ""), ("action", "candidate"), ("number", "1")])
            #expect(noCandidate.status == 422)
            #expect(String(decoding: noCandidate.body, as: UTF8.self).contains("no candidates"))

            let skipped = try await post(url + "/review/\(smudged)", [("csrf", ""), ("action", "skip")])
            #expect(skipped.status == 303 && skipped.header("location") == "/review/\(smudged)", "the only one left")
            let rejected = try await post(url + "/review/\(smudged)", [("csrf", ""), ("action", "reject")])
            #expect(rejected.status == 303 && rejected.header("location") == "/review")
            #expect(try await root.reviewList().isEmpty)
            try await waitUntil("library.json follows the rejection", timeout: .seconds(10)) {
                !(try root.library().books.contains { $0.title == "Smudged Spine" })
            }
            let empty = try await get(url + "/review")
            #expect(empty.status == 200)
            #expect(String(decoding: empty.body, as: UTF8.self).contains("Nothing to review"))
            #expect(try await get(url + "/review/\(smudged)").status == 404, "a decided book is not open any more")
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
                        && exported(root).contains(candidate.title)
                }
                let library = try root.library()
                #expect(library.books.contains { $0.title == candidate.title && $0.status == .verified })
                #expect(!library.books.contains { $0.title == "Dune Mesiah" })
                #expect(try exported(root).contains(candidate.title))
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
