import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("The library through the command line", .serialized)
struct LibraryPagesTests {
    @Test(
        "Edit, remove and merge through the command line change library.json and the exports, and a rescan keeps them",
        .timeLimit(.minutes(4)))
    func editsThroughTheCommandLine() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit, duneDeluxe, blurry]))) { gemini in
            let cli = try ShelfRoot(geminiURL: gemini.baseURL)
            try cli.drop(JPEGFactory.shelf(seed: 71), as: "den/IMG_71.jpg")
            #expect(try await cli.shelfd("run").status == 0)
            #expect(try await cli.shelfd("export", "--format", "goodreads").status == 0)
            func key(_ title: String) throws -> String {
                try #require(try cli.library().books.first { $0.title == title }?.work)
            }

            let edit = try await cli.shelfd(
                "library", "edit", try key("The Hobbit"), "--title", "The Hobbit, or There and Back Again",
                "--isbn", "0-261-10221-4", "--json")
            #expect(edit.status == 0, "\(edit.stderr)")
            #expect(try JSONStyle.decoder().decode(LibraryChange.self, from: Data(edit.stdout.utf8)).action == "edited")
            let merge = try await cli.shelfd("library", "merge", try key("Dune Deluxe"), try key("Dune"))
            #expect(merge.status == 0, "\(merge.stderr)")
            let remove = try await cli.shelfd("library", "remove", try key("Smudged Spine"))
            #expect(remove.status == 0, "\(remove.stderr)")
            #expect(try await cli.shelfd("library", "remove", "title:no such|work").status == 1)
            #expect(try await cli.shelfd("library", "edit", try key("Dune"), "--isbn", "9780441172718").status == 2)

            // The library and the exports as the page's forms leave them (ShelfWebTests' libraryForms).
            func summary() throws -> [String] {
                try cli.library().books.map {
                    "\($0.title) — \($0.author ?? "") \($0.isbn13 ?? "") \($0.status) \($0.sightingsCount)"
                }.sorted()
            }
            let expected = try summary()
            #expect(
                expected == [
                    "Dune — Frank Herbert 9780441172719 verified 1",
                    "The Hobbit, or There and Back Again — J. R. R. Tolkien 9780261102217 verified 1",
                ], "\(expected)")
            let duneEntry = try #require(try cli.library().books.first { $0.title == "Dune" })
            #expect(duneEntry.history.contains { $0.action == "merged" && $0.by == "user" })
            let goodreads = try cli.exported("goodreads")
            #expect(goodreads.contains("There and Back Again") && !goodreads.contains("Smudged"))
            // Nothing is left to review once the book that waited is removed.
            #expect(try await cli.status().queue.review == 0)

            // Reading the photo again keeps the edits: the removed book stays out, the merged ones stay one.
            #expect(
                try await cli.shelfd("rescan", cli.incoming.appendingPathComponent("den/IMG_71.jpg").path).status == 0)
            #expect(try summary() == expected)
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
