import Foundation
import ShelfApp
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// The outage's course on a manual clock, in this process (`InProcessShelf`): minutes of it in a few seconds.
@Suite("A provider outage costs no photo, on the clock")
struct OutageOnTheClockTests {
    /// Probes at most every 5 s, so the photos go through within seconds of the provider's return.
    static func root(_ gemini: GeminiEmulator) throws -> ShelfRoot {
        try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["pipeline": ["probe_max_s": "5"]])
    }

    @Test(
        "A two-minute outage under watch loses no photo: none failed, reading again within seconds of the provider's return, few requests meanwhile",
        .timeLimit(.minutes(1)))
    func twoMinuteOutageUnderWatch() async throws {
        let clock = ManualClock()
        var script = GeminiEmulator.Script.always(.books([dune]))
        script.clock = clock.time
        try await withGeminiEmulator(script) { gemini in
            let shelf = try InProcessShelf(try Self.root(gemini), clock: clock)
            for seed in 1100..<1108 {
                try shelf.root.drop(JPEGFactory.shelf(width: 320, height: 240, seed: seed), as: "\(seed).jpg")
            }
            try shelf.recordIncoming()
            try await shelf.watching {
                try await shelf.runClock(until: "the first photo is asked about", within: .seconds(60)) {
                    !gemini.requests.isEmpty
                }
                gemini.setDown(true)
                let outage = clock.now

                try await shelf.runClock(until: "status says the provider is unreachable", within: .seconds(30)) {
                    try shelf.status().provider.state == "unreachable"
                }
                let during = try shelf.status()
                #expect(during.provider.since != nil && during.provider.nextTry != nil)
                #expect((during.provider.photosWaiting ?? 0) > 0)
                let text = try #require(StatusReport.outageSentence(during.provider, now: clock.time.now))
                #expect(text.contains("provider: gemini — unreachable since "), "\(text)")
                #expect(text.contains("next try") && text.contains("photos waiting"), "\(text)")

                // Two minutes down; nothing may fail meanwhile.
                try await shelf.runClock(until: "two minutes have passed", within: .seconds(130)) {
                    let queue = try shelf.queue()
                    #expect(queue.dead == 0 && queue.failed == 0, "an outage is not the photos' fault")
                    return outage.duration(to: clock.now) >= .seconds(120)
                }
                let tried = gemini.droppedConnections
                gemini.setDown(false)

                // Probes every 4–6 s at most: back within seconds. Measured to the first photo done, not the eighth:
                // the clock moves on while a busy machine prepares and commits the others.
                let doneBefore = try shelf.queue().done
                let back = try await shelf.runClock(
                    until: "a photo is done after the provider returns", within: .seconds(20)
                ) {
                    try shelf.queue().done > doneBefore
                } otherwise: {
                    "queue \(try shelf.queue()), provider \(try shelf.status().provider)"
                }
                #expect(back <= .seconds(10), "the next probe (at most 5 s away) finds it back: \(back)")
                try await shelf.runClock(until: "all eight photos are done", within: .seconds(120)) {
                    try shelf.queue().done == 8
                } otherwise: {
                    "queue \(try shelf.queue()), provider \(try shelf.status().provider)"
                }
                let after = try shelf.status()
                #expect(after.queue.dead == 0 && after.queue.failed == 0 && after.provider.state == "ok")
                // The requests in flight when it closed (concurrency 2, three quick tries each), then one probe per
                // interval of at least 4 s over 120 s.
                let allowed = 2 * 3 + 120 / 4 + 1
                #expect(tried > 0, "the daemon did probe during the outage")
                #expect(
                    tried <= allowed,
                    "\(tried) connection attempts in two minutes; the probe schedule allows \(allowed)")
            }
            #expect(try shelf.root.resultDocuments().count == 8)
            #expect(try shelf.root.chargedAttempts().allSatisfy { $0 <= 1 }, "only the answered request is charged")
            #expect(shelf.logText.contains("Provider back"))
        }
    }

    @Test(
        "Gemini rate-limits (429, retry in 90 s): the photos wait the provider's 90 s on the clock, none charged, then go through",
        .timeLimit(.minutes(1)))
    func rateLimitWaitsTheProvidersWord() async throws {
        let (requests, status, root) = try await rideOut(
            .rateLimited(retryDelay: "90s"), times: 1, photos: 1140..<1143,
            pipeline: ["concurrency": "1"], state: "backoff", saying: "HTTP 429")
        #expect(requests.count == 1 + 3, "the 429, then one request per photo")
        let limited = try #require(requests.first).arrivedAt
        let waited = requests.dropFirst().map { $0.arrivedAt.timeIntervalSince(limited) }
        #expect(waited.allSatisfy { $0 >= 90 }, "asked again \(waited.min() ?? 0) s after the 429; Gemini said 90 s")
        #expect(waited.allSatisfy { $0 < 120 }, "the photos waited \(waited.max() ?? 0) s, long after the 90 s were up")
        #expect(status.queue.dead == 0 && status.queue.failed == 0, "max_attempts = 1, and the 429 used none")
        #expect(try root.chargedAttempts().allSatisfy { $0 <= 1 })
    }

    @Test(
        "503s for a while under watch: the provider is unavailable, probed once per interval, no photo charged",
        .timeLimit(.minutes(1)))
    func serverErrorsAreTheProvidersTrouble() async throws {
        // Twelve 503s: three quick tries of each request in flight, then single probes.
        let (requests, status, _) = try await rideOut(
            .overloaded, times: 12, photos: 1130..<1134,
            pipeline: ["probe_max_s": "1"], state: "unavailable", saying: "HTTP 503")
        #expect(status.queue.dead == 0 && status.queue.failed == 0, "max_attempts = 1, and no photo used it up")
        #expect(status.provider.state == "ok")
        #expect(requests.count == 12 + 4, "every 503 was a request the schedule sent; then one per photo")
    }

    /// Photos (one per seed) in a shelf run in this process on a manual clock with `max_attempts = 1`, against a
    /// Gemini that answers `failure` `times` times, then Dune: the clock runs until status shows the provider `state`
    /// with a reason `saying` so, then until every photo is done. Returns what Gemini was asked, the status after,
    /// and the root.
    private func rideOut(
        _ failure: GeminiEmulator.Reply, times: Int, photos seeds: Range<Int>, pipeline: [String: String],
        state: String, saying reason: String
    ) async throws
        -> ([GeminiEmulator.LoggedRequest], StatusDocument, ShelfRoot)
    {
        let clock = ManualClock()
        var script = GeminiEmulator.Script.failing(times: times, with: failure, then: .books([dune]))
        script.clock = clock.time
        return try await withGeminiEmulator(script) { gemini in
            let root = try ShelfRoot(
                geminiURL: gemini.baseURL, overrides: ["pipeline": pipeline.merging(["max_attempts": "1"]) { $1 }])
            for seed in seeds {
                try root.drop(JPEGFactory.shelf(width: 320, height: 240, seed: seed), as: "\(seed).jpg")
            }
            let shelf = try InProcessShelf(root, clock: clock)
            try shelf.recordIncoming()
            try await shelf.watching {
                try await shelf.runClock(until: "status says the provider is \(state)", within: .seconds(30)) {
                    try shelf.status().provider.state == state
                }
                #expect(try shelf.status().provider.reason?.contains(reason) == true)
                try await shelf.runClock(until: "every photo is done", within: .seconds(300)) {
                    try shelf.queue().done == seeds.count
                }
            }
            return (gemini.requests, try shelf.status(), root)
        }
    }
}
