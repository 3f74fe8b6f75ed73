import Foundation
import ShelfApp
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// The review queue a run leaves and the decisions taken on it, in the test's own process (`InProcessSite.run` is
/// `shelfd run`, `rescan` is `shelfd rescan`): review/'s files, the library, and a rescan that remembers every
/// decision. The command line's words for them (`review list` and `show`, exit codes, the walk at a terminal) are
/// tested on the binary, in ShelfdTests.
@Suite("The review queue, in-process")
struct ReviewQueueTests {
    @Test(
        "A book below the threshold waits in review/ with its spine cut out; files lost after the commit come back, without a crop once the photo is gone"
    )
    func uncertainBooksWaitInReview() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(seed: 40)
            try root.drop(photo, as: "den/IMG_1.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            site.desks.flushFiles()

            let sha = SHA256.hex(of: photo)
            let review = site.desks.review
            let items = try review.items().map(review.document)
            let item = try #require(items.first)
            #expect(items.count == 1)
            #expect(item.book.title == "Smudged Spine" && item.reasons == ["low_confidence"])
            #expect(item.photo == ReviewDocument.Photo(path: "den/IMG_1.jpg", sha256: sha))
            #expect(item.crop == "\(item.id).jpg")
            #expect(root.reviewFiles() == ["\(item.id).json", "\(item.id).jpg", "photos/\(sha).jpg"])

            // The file on disk is the same document, and the result names it.
            let file = try JSONStyle.decoder().decode(
                ReviewDocument.self,
                from: Data(contentsOf: root.review.appendingPathComponent("\(item.id).json")))
            #expect(file.id == item.id && file.book == item.book)
            let result = try #require(try root.resultDocuments().first)
            #expect(result.books.map(\.reviewID) == [nil, item.id])

            // The crop is the boxed spine (x 0.60–0.63, y 0.15–0.85 of 640×480) with a small margin, turned to read across.
            let crop = try #require(
                JPEGFactory.decode(Array(try Data(contentsOf: root.review.appendingPathComponent("\(item.id).jpg")))))
            #expect((330...380).contains(crop.width) && (30...60).contains(crop.height), "\(crop.width)×\(crop.height)")

            let library = try root.library()
            let smudged = try #require(library.books.first { $0.title == "Smudged Spine" })
            #expect(smudged.status == .needsReview && smudged.reviewID == item.id)
            #expect(smudged.history.map(\.action) == ["detected", "needs_review"])
            #expect(library.books.first { $0.title == "Dune" }?.shelves == ["den"])

            // Files lost after the commit (a crash before they were written, a person tidying up) come back.
            try FileManager.default.removeItem(at: root.review)
            try await InProcessSite(root).run()
            #expect(root.reviewFiles() == ["\(item.id).json", "\(item.id).jpg", "photos/\(sha).jpg"])
            #expect(gemini.requests.count == 1)

            // With the original gone as well there is nothing to cut from: the item stays, without a crop.
            try FileManager.default.removeItem(at: root.review)
            try FileManager.default.removeItem(at: root.incoming.appendingPathComponent("den/IMG_1.jpg"))
            let again = try InProcessSite(root)
            try await again.run()
            #expect(root.reviewFiles() == ["\(item.id).json"])
            #expect(try again.desks.review.items().map(again.desks.review.document).first?.crop == nil)
        }
    }

    @Test(
        "A candidate taken, an edit and a rejection each change library.json and clear their files; a rescan reopens nothing"
    )
    func decisionsUpdateTheLibrary() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry, shadow, typo]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(seed: 41)
            let path = try root.drop(photo, as: "IMG_2.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            try root.seedCandidates("Smudged Spine", [MatchCandidate(record: hobbitRecord, score: 0.71)])
            let review = site.desks.review
            func id(_ title: String) throws -> String {
                try #require(try review.items().first { $0.book.title == title }?.id)
            }
            let smudged = try id("Smudged Spine"), ghost = try id("Shadow"), misread = try id("Dnue")
            let sha = SHA256.hex(of: photo)
            func library() throws -> LibraryDocument {
                site.desks.flushFiles()
                return try root.library()
            }

            #expect(throws: (any Error).self, "an item without candidates has no first") {
                try review.decide(ghost, .pick(1))
            }
            #expect(try review.decide(smudged, .pick(1)).book?.title == "The Hobbit")
            var books = try library().books
            let hobbit = try #require(books.first { $0.title == "The Hobbit" })
            #expect(
                hobbit.status == .verified && hobbit.work == "openlibrary:/works/OL27482W"
                    && hobbit.isbn13 == "9780261102217")
            #expect(hobbit.history.last.map { [$0.action, $0.by] } == ["reviewed_by_user", "user"])
            #expect(!books.contains { $0.title == "Smudged Spine" })
            #expect(!root.reviewFiles().contains("\(smudged).json") && !root.reviewFiles().contains("\(smudged).jpg"))
            #expect(root.reviewFiles().contains("photos/\(sha).jpg"), "kept while other books of the photo are open")

            _ = try review.decide(misread, .edit(title: "Dune", author: "Frank Herbert", isbn: nil))
            books = try library().books
            #expect(books.filter { $0.title == "Dune" }.count == 1, "the edit names a book already read: one work")
            #expect(!books.contains { $0.title == "Dnue" })
            #expect(books.first { $0.title == "Dune" }?.history.last?.detail == "edited title, author in IMG_2.jpg")

            _ = try review.decide(ghost, .reject)
            books = try library().books
            #expect(books.map(\.title).sorted() == ["Dune", "The Hobbit"])
            #expect(books.allSatisfy { $0.status == .verified && $0.reviewID == nil })
            #expect(root.reviewFiles().isEmpty, "the photo's copy goes with its last open book")
            #expect(try site.desks.status().queue.review == 0)

            // Reading the photo again applies every decision again instead of asking.
            try await site.rescan([path.path])
            #expect(gemini.requests.count == 2)
            #expect(try review.items().isEmpty)
            books = try library().books
            #expect(root.reviewFiles().isEmpty)
            #expect(books.map(\.title).sorted() == ["Dune", "The Hobbit"])
            #expect(
                books.first { $0.title == "The Hobbit" }?.history.filter { $0.action == "reviewed_by_user" }.count == 1)
            #expect(try site.desks.status().queue.review == 0)
        }
    }
}
