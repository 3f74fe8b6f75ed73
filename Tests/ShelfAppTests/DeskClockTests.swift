import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfStore
import ShelfTesting
import Testing

@Suite("The desks act at the time they are given")
struct DeskClockTests {
    @Test("A decision and an edit are dated at the desks' time, and a decision can be undone for a minute of it")
    func decisionsAndUndo() async throws {
        try await withTemporaryDirectory { folder in
            let clock = ManualClock()
            let time = clock.time
            let config = Configuration(
                paths: .init(root: folder.path, state: folder.appendingPathComponent("state").path))
            let store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
            let unsure = ["Qzv Ploth", "Wixen Darr"].map {
                Book(
                    title: $0, author: nil, isbn13: nil, isbn10: nil, confidence: 0.2, box: nil, status: .needsReview,
                    source: "gemini")
            }
            try store.queue.commitReading(photo: String(repeating: "ab", count: 32), shelf: "den", unsure, at: time.now)
            let desks = Desks(
                config: config, secrets: Secrets(), store: store,
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, time: time)
            let items = try desks.review.items().sorted { $0.book.title < $1.book.title }
            #expect(items.map(\.book.title) == ["Qzv Ploth", "Wixen Darr"])

            clock.advance(by: .seconds(3_600))
            _ = try desks.review.decide(items[0].id, .accept)
            let work = try #require(try desks.library.page(search: "Qzv", sort: .title, offset: 0, limit: 5).rows.first)
            #expect(try desks.library.work(work.work).history.last?.at == time.now, "the decision, an hour on")
            clock.advance(by: .seconds(60))
            _ = try desks.library.edit(work.work, title: nil, author: "Ann Author", isbn: nil)
            let edited = try #require(
                try desks.library.page(search: "Qzv", sort: .title, offset: 0, limit: 5).rows.first)
            #expect(edited.author == "Ann Author")
            #expect(try desks.library.work(edited.work).history.last?.at == time.now, "the edit, a minute later")

            let token = desks.review.keepForUndo([try desks.review.decide(items[1].id, .reject)])
            clock.advance(by: .seconds(59))
            #expect(try desks.review.undo(token) == [items[1].id], "within its minute")
            let late = desks.review.keepForUndo([try desks.review.decide(items[1].id, .reject)])
            clock.advance(by: .seconds(61))
            #expect(throws: ReviewError.self, "past its minute") { try desks.review.undo(late) }
            desks.flushFiles()
        }
    }
}
