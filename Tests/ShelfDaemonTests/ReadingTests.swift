import Foundation
import ShelfApp
import ShelfCore
import ShelfImaging
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// What a run of the daemon's machinery makes of a photo, in the test's own process (`InProcessSite.run`, which is
/// `shelfd run`): what is sent, how the catalogue decides, a provider's "too large". How `run` behaves as a command is
/// tested on the binary, in ShelfdTests.
@Suite("Reading a photo, in-process")
struct ReadingTests {
    @Test("A sideways phone photo is sent upright, resized for Gemini, and without its EXIF")
    func sentImageIsUprightAndClean() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            // Stored 4000×3000 with EXIF orientation 6: a person sees it 3000 wide, 4000 tall.
            let photo = JPEGFactory.withOrientation(JPEGFactory.shelf(width: 4000, height: 3000, seed: 900), 6)
            try root.drop(photo, as: "sideways.jpg")
            try await InProcessSite(root).run()

            let request = try #require(gemini.requests.first)
            let parts = try #require(
                ((request.json?["contents"] as? [[String: Any]])?.first?["parts"]) as? [[String: Any]])
            let inline = try #require(parts.first?["inline_data"] as? [String: Any])
            let sent = try #require(Data(base64Encoded: inline["data"] as? String ?? "")).map { $0 }
            let info = try PhotoInspector.inspect(sent)
            #expect(info.width == 2304 && info.height == 3072, "upright, long side at Gemini's 3072 px")
            #expect(info.orientation == 1)
            #expect(sent.firstRange(of: Array("Exif".utf8)) == nil, "no EXIF (no GPS, no device) leaves the machine")

            let result = try #require(try root.resultDocuments().first)
            #expect(result.photo.width == 3000 && result.photo.height == 4000 && result.photo.orientation == 6)
            let run = try #require(result.runs.first?.sent)
            #expect(run.width == 2304 && run.height == 3072 && run.bytes == sent.count && run.quality != nil)
            #expect(result.signals?.longSide == 4000)
        }
    }

    @Test("A book the catalogue knows is verified with its match; one it does not know waits for review")
    func catalogueDecides() async throws {
        let leGuin = GeminiEmulator.Book(
            title: "The Left Hand of Darkness", author: "Ursula K. Le Guin", confidence: 0.9,
            box2D: [100, 700, 900, 740])
        try await withGeminiEmulator(.always(.books([dune, hobbit, leGuin]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.importCatalogue(sampleCatalogue)
            try root.drop(JPEGFactory.shelf(seed: 41), as: "study/shelf.jpg")
            let site = try InProcessSite(root)
            try await site.run()

            let books = try #require(try root.resultDocuments().first).books
            #expect(books.map(\.title) == ["Dune", "The Hobbit", "The Left Hand of Darkness"])
            #expect(
                books[0].status == .verified && books[0].match?.source == "catalogue" && books[0].match?.year == 1965)
            #expect(books[1].status == .verified && books[1].match?.year == 1937)
            #expect(books[2].status == .needsReview && books[2].match == nil)
            #expect(books[2].reviewReasons?.contains { $0 == "no_match" || $0 == "weak_match" } == true)

            site.desks.flushFiles()
            let entry = try #require(try root.library().books.first { $0.title == "Dune" })
            #expect(entry.work == books[0].match?.key)
            #expect(entry.editions.map(\.isbn13) == ["9780441172719"])
            #expect(entry.history.contains { $0.action == "matched" && $0.by == "catalogue" })
            #expect(try site.desks.review.items().map(\.book.title) == ["The Left Hand of Darkness"])
        }
    }

    @Test("OpenLibrary is asked once per book: a rescan uses the cache, one with --refresh asks again")
    func openLibraryCached() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            try await withOpenLibraryEmulator { openLibrary in
                // An empty catalogue cannot help: OpenLibrary decides.
                let root = try ShelfRoot(
                    geminiURL: gemini.baseURL,
                    overrides: [
                        "enrich": [
                            "sources": "[\"catalogue\", \"openlibrary\"]",
                            "openlibrary_base_url": "\"\(openLibrary.baseURL)\"",
                            "contact": "\"reader@example.org\"",
                        ]
                    ])
                let photo = try root.drop(JPEGFactory.shelf(seed: 43), as: "shelf.jpg").path
                try await InProcessSite(root).run()
                let book = try #require(try root.resultDocuments().first?.books.first)
                #expect(book.status == .verified)
                #expect(
                    book.match
                        == BookMatch(
                            source: "openlibrary", key: "/works/OL893415W", score: book.match?.score ?? 0, year: 1965))
                let asked = openLibrary.requests.count
                #expect(asked > 0)
                #expect(
                    openLibrary.requests.allSatisfy {
                        $0.headers["user-agent"]?.contains("(reader@example.org)") == true
                    })

                try await InProcessSite(root).rescan([photo])
                #expect(openLibrary.requests.count == asked)
                let refreshed = try InProcessSite(root, refreshLookups: true)
                try await refreshed.rescan([photo])
                #expect(openLibrary.requests.count > asked)
                refreshed.desks.flushFiles()
                #expect(try root.library().books.map(\.work) == ["openlibrary:/works/OL893415W"])
            }
        }
    }

    @Test(
        "A list of titles: a spine matched to an entry takes its author from OpenLibrary, into the result and the library",
        .timeLimit(.minutes(2)))
    func listOfTitlesTakesItsAuthors() async throws {
        let drums = OpenLibraryEmulator.Book(
            work: "OL1001W", edition: "OL1001M", title: "Desert Drums",
            authors: [OpenLibraryEmulator.Author(id: "OL1001A", name: "Anna Hunter")], firstPublishYear: 1988)
        try await withOpenLibraryEmulator(.init(books: OpenLibraryEmulator.sampleBooks + [drums])) { openLibrary in
            let root = try ShelfRoot(
                apiKey: nil,
                overrides: [
                    "pipeline": ["provider": "\"ocr\""],
                    "enrich": [
                        "sources": "[\"catalogue\", \"openlibrary\"]",
                        "openlibrary_base_url": "\"\(openLibrary.baseURL)\"", "contact": "\"reader@example.org\"",
                    ],
                ])
            try root.importCatalogue("Title\nDune\nDesert Drums\nEmma\n")
            try root.drop(DrawnShelf.jpeg(["DESERT DRUMS HUNTER"]), as: "shelf.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            let book = try #require(try root.resultDocuments().first?.books.first)
            #expect(book.status == .verified && book.match?.source == "catalogue", "the list's entry is the match")
            #expect(book.author == "Anna Hunter" && book.notes?.contains("author_from: openlibrary") == true)
            site.desks.flushFiles()
            #expect(try root.library().books.map(\.author) == ["Anna Hunter"])
        }
    }

    @Test("A model's ISBN that names another book is replaced by the matched record's, and the result says so")
    func wrongISBNReplaced() async throws {
        let duneWithEmmasISBN = GeminiEmulator.Book(
            title: "Dune", author: "Frank Herbert", isbn: "9780141439587",
            confidence: 0.93, box2D: [120, 410, 880, 450])
        try await withGeminiEmulator(.always(.books([duneWithEmmasISBN]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.importCatalogue(sampleCatalogue)
            try root.drop(JPEGFactory.shelf(seed: 42), as: "shelf.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            let result = try #require(try root.resultDocuments().first)
            #expect(result.books.first?.isbn13 == "9780441172719")
            #expect(result.notes.contains { $0.hasPrefix("isbn_replaced: 9780141439587 names «Emma»") })
            site.desks.flushFiles()
            #expect(try root.library().books.map(\.title) == ["Dune"])
        }
    }

    @Test("A photo Cloudflare finds too large is sent once more, smaller, and then read")
    func tooLargeIsShrunkOnce() async throws {
        let emma = CloudflareEmulator.Book(title: "Emma", author: "Jane Austen", confidence: 0.8)
        let script = CloudflareEmulator.Script(
            licenseAgreed: true,
            rules: [.init(photo: .any, replies: [.tooLarge, .books([emma])])])
        try await withCloudflareEmulator(script) { cloudflare in
            let root = try ShelfRoot(
                cloudflareURL: cloudflare.baseURL, overrides: ["pipeline": ["provider": "\"cloudflare\""]])
            try root.drop(JPEGFactory.shelf(width: 3000, height: 2000, seed: 810), as: "big.jpg")
            try await InProcessSite(root).run()
            let sizes = cloudflare.requests.filter { !$0.isAgreement }.map(\.body.count)
            #expect(sizes.count == 2)
            #expect(sizes[1] < sizes[0], "the second request carries a smaller photo")
            let result = try #require(try root.resultDocuments().first)
            #expect(result.books.map(\.title) == ["Emma"])
            #expect((result.runs.first?.sent?.width ?? 0) < 1536, "the result records the smaller copy that was read")
        }
    }
}
