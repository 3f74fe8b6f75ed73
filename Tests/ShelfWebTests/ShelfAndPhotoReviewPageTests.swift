import Foundation
import ShelfApp
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// The shelf page's forms and a photo's review page, through the site's router. (How they behave in a browser, keys
/// and taps, is tested in ShelfdTests.)
@Suite("A shelf's page and a photo's review page, in-process")
struct ShelfAndPhotoReviewPageTests {
    @Test(
        "Closing a shelf's round and answering for a book go through the page's forms, and the page says what happened")
    func shelfForms() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 79), as: "den/IMG_79.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            site.desks.flushFiles()
            let hobbitKey = try #require(try root.library().books.first { $0.title == "The Hobbit" }?.work)
            try await site.web { http in
                let closed = try await http.post("/shelves/den/close", form: [:])
                #expect(closed.status == 303, "\(closed.body)")
                let said = try await http.send("GET", try #require(closed.header("location")))
                #expect(said.body.contains("Round closed: 2 arrived, 0 missing, 0 moved out."), "\(said.body)")
                #expect(
                    try await http.post("/shelves/den/close", form: [:]).header("location")?.contains("No%20round")
                        == true)

                let nameless = try await http.post(
                    "/shelves/den/answer", form: ["work": hobbitKey, "answer": "lent", "lent_to": " "])
                #expect(nameless.status == 422 && nameless.body.contains("Say who has it"))
                let lent = try await http.post(
                    "/shelves/den/answer", form: ["work": hobbitKey, "answer": "lent", "lent_to": "Ann"])
                #expect(lent.status == 303)
                let page = try await http.send("GET", try #require(lent.header("location")))
                #expect(page.body.contains("The Hobbit: lent to Ann."), "\(page.body)")
                #expect(try site.desks.shelves.lent().map(\.title) == ["The Hobbit"])
                #expect(
                    try await http.post("/shelves/den/answer", form: ["work": hobbitKey, "answer": "maybe"]).status
                        == 422)
                #expect(try await http.send("GET", "/shelves/attic").status == 404)
            }
        }
    }

    @Test("A photo's review page lists its open books with their crops and candidates; /review/photo leads to it")
    func photoReviewPage() async throws {
        let misread = GeminiEmulator.Book(
            title: "Dune Mesiah", author: "Frank Herbert", confidence: 0.35, box2D: [120, 300, 880, 340])
        try await withGeminiEmulator(.always(.books([dune, misread, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.importCatalogue(sampleCatalogue)
            let photo = JPEGFactory.shelf(seed: 80)
            try root.drop(photo, as: "den/IMG_80.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            let sha = SHA256.hex(of: photo)
            let open = try site.desks.review.items()
            #expect(open.count == 2)
            try await site.web { http in
                let first = try await http.send("GET", "/review/photo")
                #expect(first.status == 302 && first.header("location") == "/photos/\(sha)/review")
                let page = try await http.send("GET", "/photos/\(sha)/review")
                #expect(page.status == 200)
                for item in open {
                    #expect(page.body.contains(item.id), "each open book: \(item.book.title)")
                }
                #expect(page.body.contains("Dune Mesiah") && page.body.contains("Smudged Spine"))
                #expect(page.body.contains("Dune Messiah"), "the catalogue's candidate is offered")
                #expect(!page.body.contains(">Dune</"), "a verified book is not asked about")
                #expect(try await http.send("GET", "/photos/\(String(repeating: "0", count: 64))/review").status == 404)

                for item in open { _ = try site.desks.review.decide(item.id, .reject) }
                let none = try await http.send("GET", "/review/photo")
                #expect(none.status == 302 && none.header("location") == "/review", "nothing left to review")
            }
        }
    }

    @Test(
        "Edit, merge and remove through the library page's forms: library.json, the exports and the review queue follow"
    )
    func libraryForms() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit, duneDeluxe, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 81), as: "den/IMG_81.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            let goodreads = site.desks.exports.defaultFile(for: .goodreads)
            _ = try site.desks.exports.write(
                .goodreads, exclusiveShelf: nil, includeUnverified: false, to: .file(goodreads))
            @Sendable func key(_ title: String) throws -> String {
                site.desks.flushFiles()
                return try #require(try root.library().books.first { $0.title == title }?.work)
            }
            try await site.web { http in
                // Without the session's token a removal is refused and nothing changes.
                let forged = try await http.send(
                    "POST", workPath(try key("Dune")) + "/remove",
                    headers: [("Content-Type", "application/x-www-form-urlencoded")], body: "csrf=guess")
                #expect(forged.status == 403)
                #expect(try root.library().books.count == 4)
                let badISBN = try await http.post(
                    workPath(try key("The Hobbit")) + "/edit",
                    form: ["title": "The Hobbit", "author": "J. R. R. Tolkien", "isbn": "9780261102218"])
                #expect(badISBN.status == 422 && badISBN.body.contains("checksum"))
                #expect(badISBN.body.contains("value=\"9780261102218\""), "what was typed is kept to be corrected")
                let unchanged = try await http.post(
                    workPath(try key("Dune")) + "/edit",
                    form: ["title": "Dune", "author": "Frank Herbert", "isbn": "9780441172719"])
                #expect(unchanged.status == 422 && unchanged.body.contains("nothing to change"))
                let edited = try await http.post(
                    workPath(try key("The Hobbit")) + "/edit",
                    form: [
                        "title": "The Hobbit, or There and Back Again", "author": "J. R. R. Tolkien",
                        "isbn": "0-261-10221-4",
                    ])
                #expect(edited.status == 303 && edited.header("location")?.hasPrefix("/library/") == true)
                let merged = try await http.post(
                    "/library/merge", form: ["from": try key("Dune Deluxe"), "into": try key("Dune")])
                #expect(merged.status == 303)
                let removed = try await http.post(workPath(try key("Smudged Spine")) + "/remove", form: [:])
                #expect(removed.status == 303 && removed.header("location")?.hasPrefix("/library?") == true)
            }
            site.desks.flushFiles()
            let books = try root.library().books
            #expect(books.map(\.title).sorted() == ["Dune", "The Hobbit, or There and Back Again"])
            #expect(books.first { $0.title.hasPrefix("The Hobbit") }?.isbn13 == "9780261102217")
            #expect(
                books.first { $0.title == "Dune" }?.history.contains { $0.action == "merged" && $0.by == "user" }
                    == true)
            #expect(try site.desks.review.items().isEmpty, "the book that waited was removed")
            let exported = try String(contentsOf: goodreads, encoding: .utf8)
            #expect(exported.contains("There and Back Again") && !exported.contains("Smudged"), "\(exported)")
        }
    }
}
