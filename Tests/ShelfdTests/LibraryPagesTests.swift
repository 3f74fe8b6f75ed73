import Foundation
import ShelfCore
import ShelfDigest
import ShelfHTTP
import ShelfRuntimeTesting
import ShelfStore
import ShelfTesting
import Testing

extension ShelfRoot {
    /// A page of the running web server, as text.
    func page(_ url: String, _ path: String) async throws -> (status: Int, text: String, headers: [String: String]) {
        let response = try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(url: url + path))
        return (response.status, String(decoding: response.body, as: UTF8.self), response.headers)
    }

    /// The session a browser gets from a page: its cookie and the CSRF token its forms carry.
    func session(_ url: String, _ path: String = "/library") async throws -> (cookie: String, token: String) {
        let response = try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(url: url + path))
        let cookie = try #require(
            response.header("Set-Cookie")?.split(separator: ";").first.map(String.init), "a session cookie")
        return (cookie, String(decoding: response.body, as: UTF8.self).csrfToken)
    }

    /// Posts a form the way a browser does: urlencoded, with the session's cookie and the form's CSRF field.
    func post(_ url: String, _ path: String, _ fields: [String: String]) async throws -> (
        status: Int, location: String?, text: String
    ) {
        let (cookie, token) = try await session(url)
        let body = (fields.merging(["csrf": token]) { a, _ in a }).map { "\($0.key)=\(formEncoded($0.value))" }.joined(
            separator: "&")
        let response = try await HTTPClient(maxConcurrent: 1).send(
            HTTPRequest(
                method: "POST", url: url + path,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", cookie)],
                body: Array(body.utf8)))
        let location = response.header("Location")
        return (response.status, location, String(decoding: response.body, as: UTF8.self))
    }
}

@Suite("The library page", .serialized)
struct LibraryPagesTests {
    @Test(
        "Edit, remove and merge through the page and through the command line change library.json and the exports alike, and a rescan keeps them",
        .timeLimit(.minutes(4)))
    func editsThroughPageAndCommandLineAgree() async throws {
        let smudged = GeminiEmulator.Book(
            title: "Dune Deluxe", author: "F. Herbert", confidence: 0.9, box2D: [150, 600, 850, 630])
        try await withGeminiEmulator(.always(.books([dune, hobbit, smudged, blurry]))) { gemini in
            let photo = JPEGFactory.shelf(seed: 71)
            var shelves: [ShelfRoot] = []
            for _ in 0..<2 {
                let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
                try shelf.drop(photo, as: "den/IMG_71.jpg")
                #expect(try await shelf.shelfd("run").status == 0)
                #expect(try await shelf.shelfd("export", "--format", "goodreads").status == 0)
                shelves.append(shelf)
            }
            func key(_ shelf: ShelfRoot, _ title: String) throws -> String {
                try #require(try shelf.library().books.first { $0.title == title }?.work)
            }

            // By the command line.
            let cli = shelves[0]
            let edit = try await cli.shelfd(
                "library", "edit", try key(cli, "The Hobbit"), "--title", "The Hobbit, or There and Back Again",
                "--isbn", "0-261-10221-4", "--json")
            #expect(edit.status == 0, "\(edit.stderr)")
            #expect(try JSONStyle.decoder().decode(LibraryChange.self, from: Data(edit.stdout.utf8)).action == "edited")
            let merge = try await cli.shelfd("library", "merge", try key(cli, "Dune Deluxe"), try key(cli, "Dune"))
            #expect(merge.status == 0, "\(merge.stderr)")
            let remove = try await cli.shelfd("library", "remove", try key(cli, "Smudged Spine"))
            #expect(remove.status == 0, "\(remove.stderr)")
            #expect(try await cli.shelfd("library", "remove", "title:no such|work").status == 1)
            #expect(
                try await cli.shelfd("library", "edit", try key(cli, "Dune"), "--isbn", "9780441172718").status == 2)

            // By the page.
            let page = shelves[1]
            let web = try page.startWeb()
            let url = try await page.webURL()
            // Without the session's token a removal is refused and nothing changes.
            let (cookie, _) = try await page.session(url)
            let forged = try await HTTPClient(maxConcurrent: 1).send(
                HTTPRequest(
                    method: "POST", url: url + workPath(try key(page, "Dune")) + "/remove",
                    headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", cookie)],
                    body: Array("csrf=guess".utf8)))
            #expect(forged.status == 403)
            #expect(try page.library().books.count == 4)
            let badISBN = try await page.post(
                url, workPath(try key(page, "The Hobbit")) + "/edit",
                ["title": "The Hobbit", "author": "J. R. R. Tolkien", "isbn": "9780261102218"])
            #expect(badISBN.status == 422 && badISBN.text.contains("checksum"))
            #expect(badISBN.text.contains("value=\"9780261102218\""), "what was typed is kept to be corrected")
            let unchanged = try await page.post(
                url, workPath(try key(page, "Dune")) + "/edit",
                ["title": "Dune", "author": "Frank Herbert", "isbn": "9780441172719"])
            #expect(unchanged.status == 422 && unchanged.text.contains("nothing to change"))
            let edited = try await page.post(
                url, workPath(try key(page, "The Hobbit")) + "/edit",
                [
                    "title": "The Hobbit, or There and Back Again", "author": "J. R. R. Tolkien",
                    "isbn": "0-261-10221-4",
                ])
            #expect(edited.status == 303, "\(edited.text)")
            #expect(edited.location?.hasPrefix("/library/") == true)
            let merged = try await page.post(
                url, "/library/merge", ["from": try key(page, "Dune Deluxe"), "into": try key(page, "Dune")])
            let duneKey = try key(page, "Dune")
            #expect(merged.status == 303 && merged.location?.hasPrefix(workPath(duneKey)) == true)
            let removed = try await page.post(url, workPath(try key(page, "Smudged Spine")) + "/remove", [:])
            #expect(removed.status == 303 && removed.location?.hasPrefix("/library?") == true)
            #expect(try await web.stop() == 0)

            // The same library and the same exports either way.
            func summary(_ shelf: ShelfRoot) throws -> [String] {
                try shelf.library().books.map {
                    "\($0.work) \($0.title) — \($0.author ?? "") \($0.isbn13 ?? "") \($0.status) \($0.sightingsCount)"
                }.sorted()
            }
            let expected = try summary(cli)
            #expect(try summary(page) == expected)
            #expect(expected.count == 2, "\(expected)")
            let hobbitEntry = try #require(
                try cli.library().books.first { $0.title == "The Hobbit, or There and Back Again" })
            #expect(hobbitEntry.isbn13 == "9780261102217" && hobbitEntry.status == .verified)
            let duneEntry = try #require(try cli.library().books.first { $0.title == "Dune" })
            #expect(duneEntry.history.contains { $0.action == "merged" && $0.by == "user" })
            func goodreads(_ shelf: ShelfRoot) throws -> String {
                try String(contentsOf: shelf.root.appendingPathComponent("exports/goodreads.csv"), encoding: .utf8)
            }
            #expect(try goodreads(cli) == goodreads(page))
            #expect(try goodreads(cli).contains("There and Back Again") && !goodreads(cli).contains("Smudged"))

            // Nothing is left to review once the book that waited is removed.
            #expect(try await cli.status().queue.review == 0)
            #expect(try await page.status().queue.review == 0)

            // Reading the photo again keeps the edits: the removed book stays out, the merged ones stay one.
            #expect(
                try await cli.shelfd("rescan", cli.incoming.appendingPathComponent("den/IMG_71.jpg").path).status == 0)
            #expect(try summary(cli) == expected)
        }
    }

    @Test(
        "An ISBN another work has joins the two; a removed book comes back only when its photo is read as something new",
        .timeLimit(.minutes(3)))
    func identityAndRemoval() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit]))) { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = try shelf.drop(JPEGFactory.shelf(seed: 72), as: "IMG_72.jpg")
            #expect(try await shelf.shelfd("run").status == 0)
            let hobbitKey = try #require(try shelf.library().books.first { $0.title == "The Hobbit" }?.work)
            let joined = try await shelf.shelfd("library", "edit", hobbitKey, "--isbn", "9780441172719")
            #expect(joined.status == 0, "\(joined.stderr)")
            let one = try #require(try shelf.library().books.first)
            #expect(try shelf.library().books.count == 1)
            #expect(one.history.contains { $0.action == "merged" } && one.isbn13 == "9780441172719")

            #expect(try await shelf.shelfd("library", "remove", one.work).status == 0)
            #expect(try shelf.library().books.isEmpty)
            #expect(try await shelf.shelfd("rescan", photo.path).status == 0)
            #expect(try shelf.library().books.isEmpty, "the same readings of the same photo stay out")

            try await withGeminiEmulator(
                .always(
                    .books([
                        GeminiEmulator.Book(
                            title: "Dune Messiah", author: "Frank Herbert",
                            confidence: 0.9, box2D: [120, 410, 880, 450])
                    ]))
            ) { other in
                try shelf.writeConfig(geminiURL: other.baseURL)
                #expect(try await shelf.shelfd("rescan", photo.path).status == 0)
            }
            #expect(try shelf.library().books.map(\.title) == ["Dune Messiah"])
        }
    }
}
