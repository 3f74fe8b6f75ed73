import Foundation
import ShelfCore
import ShelfImaging
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("shelfd run, as cron runs it", .serialized)
struct RunCommandTests {
    @Test("Each photo gets one result, the library lists each book once, status is healthy", .timeLimit(.minutes(2)))
    func runCataloguesDroppedPhotos() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 1), as: "IMG_0001.jpg")
            try root.drop(JPEGFactory.shelf(seed: 2), as: "living-room/IMG_0002.jpg")

            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")

            let results = try root.resultDocuments()
            #expect(results.map(\.photo.path) == ["IMG_0001.jpg", "living-room/IMG_0002.jpg"])
            let first = try #require(results.first)
            #expect(first.schema == "shelfd.result/1")
            #expect(first.provider == "gemini")
            #expect(first.photo.width == 640 && first.photo.height == 480)
            #expect(first.books.map(\.title) == ["Dune", "The Hobbit", "Smudged Spine"])
            #expect(first.books[0].isbn13 == "9780441172719" && first.books[0].isbn10 == "0441172717")
            #expect(first.books[0].box == Box(x1: 0.41, y1: 0.12, x2: 0.45, y2: 0.88))
            #expect(first.books[2].status == .needsReview)

            let library = try root.library()
            #expect(library.books.count == 3)
            #expect(library.books.first { $0.title == "Dune" }?.sightingsCount == 2)
            #expect(
                library.books.first { $0.title == "Dune" }?.sightings.contains { $0.shelf == "living-room" } == true)

            let status = try await root.status()
            #expect(status.queue.review == 2) // both photos hold a book below the threshold
            #expect(status.queue.pending == 0 && status.queue.dead == 0)
            #expect(gemini.requests.count == 2)
        }
    }
}

@Suite("Advice for the next photo", .serialized)
struct SuggestionTests {
    @Test(
        "With no advice from the model, the app's rules speak, and status shows the tip for the recent photo",
        .timeLimit(.minutes(1)))
    func fallbackRulesReachResultsAndStatus() async throws {
        let nameless = GeminiEmulator.Book(title: "Spine", author: nil, confidence: 0.4, box2D: [100, 100, 900, 140])
        let smudged = GeminiEmulator.Book(title: "Smudge", author: nil, confidence: 0.35, box2D: [100, 200, 900, 240])
        try await withGeminiEmulator(.always(.books([dune, nameless, smudged]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 31), as: "hall.jpg")
            #expect(try await root.shelfd("run").status == 0)

            let result = try #require(try root.resultDocuments().first)
            #expect(result.suggestions.map(\.type).contains(.unreadableBooks))

            let status = try await root.status()
            let recent = try #require(status.recent.first)
            #expect(recent.photo == "hall.jpg" && recent.books == 3)
            #expect(recent.suggestions.map(\.type).contains(.unreadableBooks))
            let text = try await root.shelfd("status")
            #expect(text.stdout.contains("tips for recent photos:"))
            #expect(text.stdout.contains("hall.jpg (warning, unreadable_books): 2 books could not be read in full"))
        }
    }
}
