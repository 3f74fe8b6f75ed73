import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("Books matched against the catalogue and OpenLibrary", .serialized)
struct EnrichmentTests {
    func importCatalogue(_ root: ShelfRoot) async throws {
        let file = root.base.appendingPathComponent("mine.csv")
        try sampleCatalogue.write(to: file, atomically: true, encoding: .utf8)
        let imported = try await root.shelfd("catalogue", "import", file.path)
        #expect(imported.status == 0, "\(imported.stderr)")
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
