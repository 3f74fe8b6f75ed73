import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("Books matched against the catalogue and OpenLibrary", .serialized)
struct EnrichmentTests {
    static let catalogue = sampleCatalogue
    static let leGuin = GeminiEmulator.Book(
        title: "The Left Hand of Darkness", author: "Ursula K. Le Guin", confidence: 0.9,
        box2D: [100, 700, 900, 740])

    func importCatalogue(_ root: ShelfRoot) async throws {
        let file = root.base.appendingPathComponent("mine.csv")
        try Self.catalogue.write(to: file, atomically: true, encoding: .utf8)
        let imported = try await root.shelfd("catalogue", "import", file.path)
        #expect(imported.status == 0, "\(imported.stderr)")
    }

    @Test(
        "A book the catalogue knows is verified with its match; one it does not know waits for review",
        .timeLimit(.minutes(2)))
    func catalogueDecides() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit, Self.leGuin]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try await importCatalogue(root)
            try root.drop(JPEGFactory.shelf(seed: 41), as: "study/shelf.jpg")
            #expect(try await root.shelfd("run").status == 0)

            let books = try #require(try root.resultDocuments().first).books
            #expect(books.map(\.title) == ["Dune", "The Hobbit", "The Left Hand of Darkness"])
            #expect(
                books[0].status == .verified && books[0].match?.source == "catalogue" && books[0].match?.year == 1965)
            #expect(books[1].status == .verified && books[1].match?.year == 1937)
            #expect(books[2].status == .needsReview && books[2].match == nil)
            #expect(books[2].reviewReasons?.contains { $0 == "no_match" || $0 == "weak_match" } == true)

            let library = try root.library()
            let entry = try #require(library.books.first { $0.title == "Dune" })
            #expect(entry.work == books[0].match?.key)
            #expect(entry.editions.map(\.isbn13) == ["9780441172719"])
            #expect(entry.history.contains { $0.action == "matched" && $0.by == "catalogue" })

            let review = try await root.shelfd("review", "list", "--json")
            #expect(review.stdout.contains("The Left Hand of Darkness"))
            #expect(!review.stdout.contains("\"title\" : \"Dune\""))
        }
    }

    @Test(
        "A model's ISBN that names another book is replaced by the matched record's, and the result says so",
        .timeLimit(.minutes(2)))
    func wrongISBNReplaced() async throws {
        let duneWithEmmasISBN = GeminiEmulator.Book(
            title: "Dune", author: "Frank Herbert", isbn: "9780141439587",
            confidence: 0.93, box2D: [120, 410, 880, 450])
        try await withGeminiEmulator(.always(.books([duneWithEmmasISBN]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try await importCatalogue(root)
            try root.drop(JPEGFactory.shelf(seed: 42), as: "shelf.jpg")
            #expect(try await root.shelfd("run").status == 0)
            let result = try #require(try root.resultDocuments().first)
            #expect(result.books.first?.isbn13 == "9780441172719")
            #expect(result.notes.contains { $0.hasPrefix("isbn_replaced: 9780141439587 names «Emma»") })
            #expect(try root.library().books.map(\.title) == ["Dune"])
        }
    }

    @Test("OpenLibrary is asked once per book: a rescan uses the cache, --refresh asks again", .timeLimit(.minutes(2)))
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
                #expect(try await root.shelfd("run").status == 0)
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

                let rescan = try await root.shelfd("rescan", photo)
                #expect(rescan.status == 0, "\(rescan.stdout) \(rescan.stderr)")
                #expect(openLibrary.requests.count == asked)
                #expect(try await root.shelfd("rescan", "--refresh", photo).status == 0)
                #expect(openLibrary.requests.count > asked)
                #expect(try root.library().books.map(\.work) == ["openlibrary:/works/OL893415W"])
            }
        }
    }

    @Test(
        "A rate-limited OpenLibrary shows in status until its wait ends; the photo is done without it",
        .timeLimit(.minutes(2)))
    func rateLimitedSourceInStatus() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            try await withOpenLibraryEmulator(.init(then: .rateLimited(retryAfter: 3600))) { openLibrary in
                let root = try ShelfRoot(
                    geminiURL: gemini.baseURL,
                    overrides: [
                        "enrich": [
                            "sources": "[\"openlibrary\"]", "openlibrary_base_url": "\"\(openLibrary.baseURL)\"",
                            "contact": "\"reader@example.org\"",
                        ]
                    ])
                try root.drop(JPEGFactory.shelf(seed: 44), as: "shelf.jpg")
                #expect(try await root.shelfd("run").status == 0)
                let book = try #require(try root.resultDocuments().first?.books.first)
                #expect(book.status == .verified && book.notes == ["not_enriched: no source answered"])

                let status = try await root.status()
                let problem = try #require(status.problems.first { $0.code == "source_rate_limited" })
                #expect(problem.severity == "warning" && problem.message.hasPrefix("openlibrary until "))
                #expect(try await root.shelfd("status").stdout.contains("warning source_rate_limited"))
            }
        }
    }
}
