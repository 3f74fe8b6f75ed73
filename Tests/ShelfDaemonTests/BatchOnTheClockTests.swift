import Foundation
import ShelfCore
import ShelfDaemon
import ShelfPipeline
import ShelfStore
import ShelfRuntimeTesting
import ShelfTesting
import Synchronization
import Testing

/// Gemini's Batch API as it is: Batch API jobs that take many minutes, polled at the configured interval, in the test's
/// process on a manual clock. What only the binary shows (a kill between submitting and saving, `batch list`, `batch
/// cancel`) is in BatchModeTests.
@Suite("Batch mode on the clock: polling and expiry")
struct BatchOnTheClockTests {
    @Test(
        "A Batch API job that runs 25 minutes is polled once a minute; an expired one gives its photos back, no attempt used, and they are done in the next",
        .timeLimit(.minutes(1)))
    func expiredBatchOnTheClock() async throws {
        let clock = ManualClock()
        var script = GeminiEmulator.Script.always(.books([dune]))
        script.batchAPI = BatchAPIScript(
            pendingFor: .seconds(5 * 60), runningFor: .seconds(20 * 60), outcomes: ["BATCH_STATE_EXPIRED"])
        script.clock = clock.time
        try await withGeminiEmulator(script) { gemini in
            let root = try ShelfRoot(
                geminiURL: gemini.baseURL, overrides: ["gemini": ["mode": "\"batch\"", "batch_poll_s": "60"]])
            for n in 1...2 {
                try root.drop(JPEGFactory.shelf(width: 320, height: 240, seed: 7100 + n), as: "IMG_\(n).jpg")
            }
            let shelf = try InProcessShelf(root, clock: clock)
            try shelf.recordIncoming()
            let runner = try #require(try shelf.runtime.batchAPIJobRunner())
            let ended = Mutex<PassSummary.Stop?>(nil)
            let pass = Task {
                let stop = await runner.pass(untilDone: true).stop
                ended.withLock { $0 = stop }
            }
            let took = try await shelf.runClock(until: "the pass ends", within: .seconds(3 * 3600)) {
                ended.withLock { $0 != nil }
            }
            await pass.value
            #expect(ended.withLock { $0 } == .idle)

            #expect(
                gemini.batchAPIJobsCreated.map(\.photos.count) == [2, 2],
                "the expired Batch API job's photos went again, together")
            #expect(took >= .seconds(50 * 60), "two Batch API jobs of 25 minutes each: \(took)")
            for batch in gemini.batchAPIJobsCreated {
                let polls = gemini.requests.filter { $0.method == "GET" && $0.path.hasSuffix(batch.name) }.count
                #expect(
                    (20...27).contains(polls), "\(batch.name) polled \(polls) times in 25 minutes at one poll a minute")
            }
            let status = try shelf.status()
            #expect(status.queue.done == 2 && status.queue.failed == 0 && status.queue.dead == 0)
            let store = try #require(
                try Store.openForReading(path: root.state.appendingPathComponent("shelfd.db").path))
            #expect(
                try store.read { db in try db.query("SELECT attempts FROM job").compactMap { $0.int("attempts") } } == [
                    1, 1,
                ],
                "the expired Batch API job used no attempt")
            #expect(try root.resultDocuments().count == 2)
        }
    }
}
