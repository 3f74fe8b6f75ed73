import Foundation
import ShelfCore
import ShelfPipeline
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Requests "in any 60 s" on a manual clock, in this process (`InProcessShelf`): several workers on one database, as
/// `watch` and `run` beside it, or three machines on PostgreSQL, and the emulator's quota on the same clock.
@Suite("Rate limits shared by every worker, on the clock")
struct RateLimitsOnTheClockTests {
    @Test(
        "watch and a run started beside it keep one requests_per_minute together in any 60 s, and ask about each photo once",
        .timeLimit(.minutes(1)))
    func watchAndRunShareOneLimit() async throws {
        // More than a minute's worth, so that `limit + 1` requests meet in six windows.
        let limit = 20, photos = 26
        let clock = ManualClock()
        // The emulator keeps Gemini's per-minute quota too, on the same clock: a request beyond the limit would be
        // refused (429).
        var script = GeminiEmulator.Script(reply: .books([dune]), requestsPerMinute: limit)
        // Requests reach the provider up to a second after they leave, unevenly: a request `limit` turns after another
        // can arrive half a second or a second sooner after its turn than that one did.
        script.travel = [.zero, .milliseconds(500), .seconds(1)]
        script.clock = clock.time
        try await withGeminiEmulator(script) { gemini in
            let root = try ShelfRoot(
                geminiURL: gemini.baseURL, overrides: ["gemini": ["requests_per_minute": "\(limit)"]])
            for seed in 0..<photos {
                try root.drop(JPEGFactory.shelf(width: 320, height: 240, seed: 700 + seed), as: "shelf-\(seed).jpg")
            }
            // The daemon and the nightly `run` beside it: two workers on one database, each with its own leases.
            let watch = try InProcessShelf(root, clock: clock)
            let run = try InProcessShelf(root, clock: clock, owner: "run-beside-watch")
            try watch.recordIncoming()
            try await watch.watching {
                try await watch.runClock(until: "the daemon sends its first request", within: .seconds(60)) {
                    !gemini.requests.isEmpty
                }
                let pass = Task { await run.pipeline.processQueue(untilIdle: true) }
                try await watch.runClock(until: "every photo is done", within: .seconds(300)) {
                    try watch.queue().done == photos
                }
                #expect(await pass.value.stop == .idle)
            }

            let sent = gemini.requests.filter { $0.photoSHA256 != nil }
            #expect(sent.count == photos, "one request per photo")
            #expect(Set(sent.compactMap(\.photoSHA256)).count == photos, "each photo asked once")
            #expect(sent.allSatisfy { $0.status == 200 }, "the provider refused none for its per-minute quota")
            // No `limit + 1` requests within any 60 s, as the provider's clock saw them arrive.
            let arrivals = sent.map(\.arrivedAt).sorted()
            let spans = zip(arrivals, arrivals.dropFirst(limit)).map { $1.timeIntervalSince($0) }
            let crowded = spans.filter { $0 < 60 }
            #expect(!spans.isEmpty)
            #expect(crowded.isEmpty, "\(crowded.count) windows of 60 s held more than \(limit) requests: \(spans)")
            #expect(try root.resultDocuments().map(\.photo.path).count == photos)
            #expect(run.logText.contains("Scan started"), "run sent some of the requests itself")
            #expect(watch.logText.contains("Scan started"), "the daemon sent some of the requests itself")
        }
    }

    @Test(
        "Three workers on one PostgreSQL keep one requests_per_minute together in any 60 s; each photo is asked about once",
        .timeLimit(.minutes(2)))
    func threeWorkersShareOneLimit() async throws {
        let limit = 20, photos = 45
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            let clock = ManualClock()
            var script = GeminiEmulator.Script(reply: .books([dune]), requestsPerMinute: limit)
            script.clock = clock.time
            try await withGeminiEmulator(script) { gemini in
                // Each worker its own root and state, as on three machines: only the first sees the photos.
                let roots = try (0..<3).map { index in
                    try ShelfRoot(
                        geminiURL: gemini.baseURL,
                        overrides: [
                            "store": ["url": "\"\(url)\""].merging(index > 0 ? ["writes_files": "false"] : [:]) { $1 },
                            "gemini": ["requests_per_minute": "\(limit)"],
                        ])
                }
                for seed in 0..<photos {
                    try roots[0].drop(
                        JPEGFactory.shelf(width: 320, height: 240, seed: 5_000 + seed), as: "shelf-\(seed).jpg")
                }
                let workers = try roots.enumerated().map { index, root in
                    try InProcessShelf(root, clock: clock, owner: "another-boot:\(100 + index):1")
                }
                try workers[0].recordIncoming()
                let passes = workers.dropFirst().map { worker in
                    Task { await worker.pipeline.processQueue(untilIdle: false) }
                }
                try await workers[0].watching {
                    try await workers[0].runClock(until: "every photo is done", within: .seconds(600)) {
                        try workers[0].queue().done == photos
                    }
                }
                for (worker, pass) in zip(workers.dropFirst(), passes) { worker.pipeline.stop(); _ = await pass.value }

                let sent = gemini.requests.filter { $0.photoSHA256 != nil }
                #expect(
                    sent.count == photos && Set(sent.compactMap(\.photoSHA256)).count == photos,
                    "each photo asked about once")
                #expect(sent.allSatisfy { $0.status == 200 }, "the provider refused none for its per-minute quota")
                let arrivals = sent.map(\.arrivedAt).sorted()
                let spans = zip(arrivals, arrivals.dropFirst(limit)).map { $1.timeIntervalSince($0) }
                #expect(
                    !spans.isEmpty && spans.allSatisfy { $0 >= 60 },
                    "no 60 s held more than \(limit) requests: \(spans)")
                #expect(
                    workers.allSatisfy { $0.logText.contains("Scan started") }, "all three workers asked about photos")
                #expect(
                    try workers[1].status().limits?.first?.requestsPerMinute == limit,
                    "any worker's status shows the shared limit")
            }
        }
    }
}
