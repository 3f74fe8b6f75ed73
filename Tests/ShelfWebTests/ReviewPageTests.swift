import Foundation
import ShelfApp
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// A spine read badly and unsure: the catalogue offers Dune Messiah (and Dune) for it.
private let misread = GeminiEmulator.Book(
    title: "Dune Mesiah", author: "Frank Herbert", confidence: 0.35,
    box2D: [120, 300, 880, 340])

@Suite("The review page")
struct ReviewPageTests {
    /// Two books waiting: "Dune Mesiah" with catalogue candidates and "Smudged Spine" with none, and an export made
    /// once (so decisions rewrite it).
    func withReviewPage(_ body: (InProcessSite) async throws -> Void) async throws {
        try await withGeminiEmulator(.always(.books([dune, misread, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.importCatalogue(sampleCatalogue)
            try root.drop(JPEGFactory.shelf(seed: 60), as: "den/IMG_9.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            #expect(try site.desks.review.items().map(\.book.title).sorted() == ["Dune Mesiah", "Smudged Spine"])
            _ = try site.desks.exports.write(
                .goodreads, exclusiveShelf: nil, includeUnverified: false,
                to: .file(site.desks.exports.defaultFile(for: .goodreads)))
            try await body(site)
        }
    }

    func exported(_ site: InProcessSite) throws -> String {
        try String(contentsOf: site.desks.exports.defaultFile(for: .goodreads), encoding: .utf8)
    }

    func openItem(_ site: InProcessSite, _ title: String) throws -> String {
        try #require(try site.desks.review.items().first { $0.book.title == title }?.id)
    }

    @Test("/review leads to the first open book: its reading, candidates, count and crop; other ids are 404")
    func oneBookAtATime() async throws {
        try await withReviewPage { site in
            let items = try site.desks.review.items()
            let id = try openItem(site, "Dune Mesiah")
            try await site.web { http in
                let first = try await http.send("GET", "/review")
                #expect(first.status == 302)
                #expect(first.header("location") == "/review/\(items[0].id)")

                let page = try await http.send("GET", "/review/\(id)")
                #expect(page.status == 200)
                #expect(page.body.contains("Dune Mesiah") && page.body.contains("Frank Herbert"))
                #expect(page.body.contains("Dune Messiah"), "the catalogue's candidate is offered")
                #expect(page.body.contains(" of <b>2</b>"))
                #expect(page.body.contains("src=\"/review/\(id)/crop\""))
                #expect(page.body.contains("src=\"/photos/\(items[0].photo.sha256)/image\""))
                #expect(page.body.contains("data-review"))

                let crop = try await http.send("GET", "/review/\(id)/crop")
                #expect(crop.status == 200 && crop.header("content-type") == "image/jpeg")
                let kept = site.root.root.appendingPathComponent("review/\(id).jpg")
                #expect(crop.bytes == Array(try Data(contentsOf: kept)))

                for bad in [
                    "/review/abcdef0123ff", "/review/NOT-AN-ID", "/review/..%2F..%2Fetc%2Fpasswd",
                    "/review/abcdef0123ff/crop", "/review/..%2Fshelfd.db/crop", "/review/\(id.uppercased())/crop",
                ] {
                    #expect(try await http.send("GET", bad).status == 404, "\(bad)")
                }
            }
        }
    }

    @Test("A title and author read as markup are shown as the characters they are")
    func markupIsText() async throws {
        let markup = GeminiEmulator.Book(
            title: "<img src=x onerror=alert(1)>", author: "\"><script>alert(2)</script>",
            confidence: 0.3, box2D: [100, 500, 900, 540])
        try await withGeminiEmulator(.always(.books([markup]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 61), as: "IMG_10.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            let id = try #require(try site.desks.review.items().first?.id)
            try await site.web { http in
                let page = try await http.send("GET", "/review/\(id)")
                #expect(page.status == 200)
                #expect(page.body.contains("&lt;img src=x onerror=alert(1)&gt;"))
                #expect(!page.body.contains("<img src=x") && !page.body.contains("<script>alert"))
                #expect(
                    page.body.contains("value=\"&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;\""),
                    "the edit form's field too")
            }
        }
    }

    @Test(
        "An edit with a bad ISBN is refused (422) keeping what was typed and the book open; decisions go on to the next book"
    )
    func editsAreChecked() async throws {
        try await withReviewPage { site in
            let root = site.root
            let id = try openItem(site, "Dune Mesiah")
            let smudged = try openItem(site, "Smudged Spine")
            try await site.web { http in
                let refused = try await http.post(
                    "/review/\(id)",
                    form: [
                        "action": "edit", "title": "Dune Messiah", "author": "Frank Herbert",
                        "isbn": "978-0-441-17271-8",
                    ])
                #expect(refused.status == 422)
                #expect(refused.body.contains("not a valid ISBN"))
                #expect(refused.body.contains("value=\"978-0-441-17271-8\""), "what was typed is kept")
                #expect(refused.body.contains("aria-invalid=\"true\""))
                #expect(try site.desks.review.items().contains { $0.id == id })
                site.desks.flushFiles()
                #expect(!(try root.library().books.contains { $0.title == "Dune Messiah" }))

                let saved = try await http.post(
                    "/review/\(id)",
                    form: [
                        "action": "edit", "title": "Dune Messiah", "author": "Frank Herbert", "isbn": "9780441172696",
                    ])
                #expect(saved.status == 303)
                #expect(saved.header("location") == "/review/\(smudged)")
                try await waitUntil("library.json and the export follow the decision", timeout: .seconds(10)) {
                    try root.library().books.contains { $0.title == "Dune Messiah" }
                        && exported(site).contains("Dune Messiah")
                }
                let messiah = try #require(try root.library().books.first { $0.title == "Dune Messiah" })
                #expect(messiah.status == .verified && messiah.isbn13 == "9780441172696")
                #expect(messiah.history.last.map { [$0.action, $0.by] } == ["reviewed_by_user", "user"])

                let noCandidate = try await http.post(
                    "/review/\(smudged)", form: ["action": "candidate", "number": "1"])
                #expect(noCandidate.status == 422)
                #expect(noCandidate.body.contains("no candidates"))

                let skipped = try await http.post("/review/\(smudged)", form: ["action": "skip"])
                #expect(
                    skipped.status == 303 && skipped.header("location") == "/review/\(smudged)", "the only one left")
                let rejected = try await http.post("/review/\(smudged)", form: ["action": "reject"])
                #expect(rejected.status == 303 && rejected.header("location") == "/review")
                #expect(try site.desks.review.items().isEmpty)
                try await waitUntil("library.json follows the rejection", timeout: .seconds(10)) {
                    !(try root.library().books.contains { $0.title == "Smudged Spine" })
                }
                let empty = try await http.send("GET", "/review")
                #expect(empty.status == 200)
                #expect(empty.body.contains("Nothing to review"))
                #expect(
                    try await http.send("GET", "/review/\(smudged)").status == 404,
                    "a decided book is not open any more")
            }
        }
    }
}
