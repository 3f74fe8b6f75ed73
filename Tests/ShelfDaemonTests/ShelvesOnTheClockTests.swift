import Foundation
import ShelfCore
import ShelfDaemon
import ShelfPipeline
import ShelfStore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// A shelf's round ends after `[shelves] round_minutes` of quiet, by itself, in the daemon: on a manual clock, half an
/// hour in a moment.
@Suite("Shelves' rounds on the clock")
struct ShelvesOnTheClockTests {
    @Test(
        "Two shots of the den ten minutes apart are one round, compared by the daemon 30 minutes after the last, not before",
        .timeLimit(.minutes(1)))
    func roundClosesAfterTheQuietTime() async throws {
        let clock = ManualClock()
        var script = GeminiEmulator.Script.always(
            .books([
                GeminiEmulator.Book(
                    title: "Dune", author: "Frank Herbert", isbn: nil, confidence: 0.95, box2D: [100, 300, 900, 340]),
                GeminiEmulator.Book(
                    title: "Emma", author: "Jane Austen", isbn: nil, confidence: 0.95, box2D: [100, 600, 900, 640]),
            ]))
        script.clock = clock.time
        try await withGeminiEmulator(script) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["enrich": ["sources": "[]"]])
            let shelf = try InProcessShelf(root, clock: clock)
            let den = root.incoming.appendingPathComponent("den")
            try FileManager.default.createDirectory(at: den, withIntermediateDirectories: true)
            func shoot(_ name: String, seed: Int) throws {
                try Data(JPEGFactory.shelf(width: 320, height: 240, seed: seed)).write(
                    to: den.appendingPathComponent(name))
                shelf.pipeline.ingest([Pipeline.IncomingFile(path: den.appendingPathComponent(name).path)])
            }
            let closed: @Sendable () throws -> Bool = { try shelf.runtime.store.shelves.shelf("den")?.lastRound != nil }

            // The two shots arrive ten minutes apart and are read.
            try shoot("IMG_1.jpg", seed: 7_001)
            clock.advance(by: .seconds(600))
            try shoot("IMG_2.jpg", seed: 7_002)
            let last = clock.now, lastShotAt = clock.time.now
            try await shelf.watching {
                try await shelf.runClock(until: "both photos are read", within: .seconds(300)) {
                    try shelf.queue().done == 2
                }
            }
            // The daemon's look at the rounds, alone on the clock from here.
            let rounds = Task { await shelf.pipeline.keepClosingRounds() }
            defer { rounds.cancel() }
            try await shelf.runClock(until: "29 minutes after the last photo", within: .seconds(1_800)) {
                clock.now.offset >= last.offset + .seconds(29 * 60)
            }
            #expect(try !closed(), "the den is not quiet long enough yet")
            try await shelf.runClock(until: "the round closes", within: .seconds(300)) { try closed() }
            // When the daemon closed it, as the shelf's document says: the clock may have moved on since, while this
            // test looked.
            let round = try #require(try shelf.runtime.store.shelves.shelf("den"))
            let closedAt = try #require(round.lastRound?.closedAt)
            let sinceLast = closedAt.timeIntervalSince(lastShotAt)
            #expect(
                sinceLast >= 30 * 60 && sinceLast <= 30 * 60 + 30,
                "closed within a look (30 s) of the quiet time's end: \(sinceLast) s")
            #expect(round.lastRound?.photos == 2)
            #expect(round.books.map(\.title) == ["Dune", "Emma"])
            #expect(round.changes.arrived.map(\.title).sorted() == ["Dune", "Emma"])
        }
    }
}
