import Foundation
import ShelfApp
import ShelfCore
import ShelfStore
import ShelfTesting
import Testing

@testable import ShelfWeb

@Suite("The live page's progress, on the clock it is given")
struct ProgressFeedTests {
    @Test("The queue is read once a tick while a page listens, and never while none does")
    func readsOnlyWhileListened() async throws {
        try await withTemporaryDirectory { folder in
            let clock = ManualClock()
            let time = clock.time
            let store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
            let feed = ProgressFeed(queue: QueueDesk(store: store, time: time), time: time)
            let ticking = Task { try await feed.run() }
            defer { ticking.cancel() }
            func tick() async throws {
                try await waitUntil("the feed waits for its next tick") { clock.sleepers == 1 }
                clock.advance(by: LiveProgress.interval)
                try await waitUntil("the tick is over") { clock.sleepers == 1 }
            }
            func photoDone(_ number: Int) throws {
                let book = Book(
                    title: "Dune", author: "Frank Herbert", isbn13: nil, isbn10: nil, confidence: 0.9, box: nil,
                    status: .verified, source: "gemini")
                try store.queue.commitReading(
                    photo: String(repeating: "\(number)", count: 64), shelf: nil, [book], at: time.now)
            }

            try await tick()
            #expect(feed.latest == nil, "nobody listens: nothing is read")

            var slot: ProgressFeed.Slot? = {
                if case .joined(let slot) = feed.join(client: "192.168.1.9") { return slot }
                return nil
            }()
            #expect(slot != nil && feed.openStreams == 1, "a page listens")
            try await tick()
            #expect(feed.latest?.number == 1 && feed.latest?.event.counts.done == 0)
            try photoDone(1)
            try await tick()
            #expect(feed.latest?.number == 2 && feed.latest?.event.counts.done == 1, "the change, a tick later")
            try await tick()
            #expect(feed.latest?.number == 2, "nothing changed: the same reading")

            slot = nil
            #expect(feed.openStreams == 0)
            try photoDone(2)
            try await tick()
            #expect(feed.latest?.event.counts.done == 1, "the page left: the queue is not read")
        }
    }
}
