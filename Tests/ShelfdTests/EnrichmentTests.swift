import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// A book source's trouble as `status` prints it. How the sources decide, and their cache, are tested in-process, in
/// ShelfDaemonTests' ReadingTests.
@Suite("Books matched against the catalogue and OpenLibrary", .serialized)
struct EnrichmentTests {
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
                #expect(
                    try await root.shelfd("status").stdout.contains("  warning source_rate_limited: openlibrary until ")
                )
            }
        }
    }
}
