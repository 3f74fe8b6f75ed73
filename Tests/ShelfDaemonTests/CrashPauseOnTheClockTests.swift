import Foundation
import ShelfCore
import ShelfDaemon
import ShelfPipeline
import ShelfRuntimeTesting
import ShelfStore
import ShelfTesting
import Testing

/// A process killed while a photo's request was out is started again within seconds, and may be killed again. Each
/// request is paid for, so the photo whose request the kill cut off waits out a pause before it is asked again, while
/// the photos that only waited their turn go at once.
@Suite("A crash's pause, on the clock")
struct CrashPauseOnTheClockTests {
    @Test(
        "After a kill, the photo whose request was out is asked again after a pause; the one that waited goes at once",
        .timeLimit(.minutes(2)))
    func cutOffRequestWaitsOutThePause() async throws {
        let clock = ManualClock()
        var script = GeminiEmulator.Script.always(.books([dune]))
        script.clock = clock.time
        try await withGeminiEmulator(script) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photos = (0..<2).map { JPEGFactory.shelf(width: 320, height: 240, seed: 9_300 + $0) }
            for (index, photo) in photos.enumerated() { try root.drop(photo, as: "shelf-\(index).jpg") }

            // The process that is killed: another boot's, so surely gone. It held both photos and had asked about the first.
            let killed = try InProcessShelf(root, clock: clock, owner: "another-boot:4242:1")
            try killed.recordIncoming()
            let held = try killed.runtime.store.queue.claim(
                limit: 2, provider: "gemini", owner: "another-boot:4242:1", lease: killed.pipeline.settings.lease,
                now: clock.time.now)
            #expect(held.map(\.relativePath) == ["shelf-0.jpg", "shelf-1.jpg"])
            _ = try killed.runtime.store.queue.chargeAttempt(jobID: held[0].id, now: clock.time.now)

            let restarted = try InProcessShelf(root, clock: clock)
            let paused = try #require(try restarted.status().problems.first { $0.path == "shelf-0.jpg" })
            #expect(paused.code == PhotoError.Code.processDied.rawValue)
            try await restarted.watching {
                try await restarted.runClock(
                    until: "the photo that waited is done", within: .seconds(20), step: .seconds(1)
                ) { try restarted.queue().done == 1 }
                #expect(try root.resultDocuments().map(\.photo.path) == ["shelf-1.jpg"])
                // Restarts come within seconds of a crash: half a minute later it has still not been asked again.
                try await restarted.runClock(until: "half a minute", within: .seconds(40), step: .seconds(1)) {
                    clock.now.offset >= .seconds(29)
                }
                #expect(gemini.requests.compactMap(\.photoSHA256).count == 1, "the cut-off photo waits out its pause")
                try await restarted.runClock(
                    until: "the photo cut off is done", within: .seconds(60), step: .seconds(1)
                ) {
                    try restarted.queue().done == 2
                }
            }
            let asked = gemini.requests.compactMap(\.photoSHA256)
            #expect(asked.count == 2 && Set(asked).count == 2, "each asked once by the restarted process")
            #expect(try root.resultDocuments().count == 2)
        }
    }
}
