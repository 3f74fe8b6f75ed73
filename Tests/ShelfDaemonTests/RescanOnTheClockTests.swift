import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// `shelfd rescan` in the test's own process on a manual clock: the job it queues and the result it leaves are dated
/// by the daemon's time, as every other record of the photo is.
@Suite("Reading a photo again, on the daemon's clock")
struct RescanOnTheClockTests {
    @Test("A photo's result says when it was queued, and read again, when it was queued again: on the daemon's clock")
    func queuedAtTheClocksTime() async throws {
        let clock = ManualClock() // months from the wall's date
        var script = GeminiEmulator.Script.always(.books([dune]))
        script.clock = clock.time
        try await withGeminiEmulator(script) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = try root.drop(JPEGFactory.shelf(seed: 920), as: "IMG_20.jpg")
            let site = try InProcessSite(root, time: clock.time)
            try await InProcessSite.onTheClock(clock) { try await site.run() }
            let first = try #require(try root.resultDocuments().first?.timings)
            #expect(first.queuedAt.map { abs($0.timeIntervalSince(clock.start)) < 1 } == true, "queued as run began")

            clock.advance(by: .seconds(3_600))
            let asked = clock.time.now
            try await InProcessSite.onTheClock(clock) { try await site.rescan([photo.path]) }
            let again = try #require(try root.resultDocuments().first?.timings)
            let queued = try #require(again.queuedAt, "a rescanned photo says when it was queued again")
            #expect(abs(queued.timeIntervalSince(asked)) < 1, "queued at \(queued), the clock at \(asked)")
            #expect(again.finishedAt.timeIntervalSince(first.finishedAt) >= 3_600)
        }
    }
}
