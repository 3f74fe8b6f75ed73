import Foundation
import ShelfApp
import ShelfCore
import ShelfDaemon
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Bad photos and a provider's trouble through a run (`InProcessSite.run`, which is `shelfd run`) in the test's own
/// process, on a manual clock: a retry delay, an overload's probe and a quota's reset pass in a moment and are measured
/// on that clock. What `run` prints and where a secret could leak are tested on the binary, in ShelfdTests.
@Suite("Bad photos and provider trouble, on the clock")
struct FailureOnTheClockTests {
    /// What `shelfd run` on `clock` ended with: its warning, the status then (read at that moment of the clock), and
    /// the time it took on the clock.
    func run(_ root: ShelfRoot, clock: ManualClock) async throws -> (
        warning: String?, status: StatusDocument, took: Duration
    ) {
        let site = try InProcessSite(root, time: clock.time)
        let (report, took) = try await InProcessSite.onTheClock(clock) { try await site.run() }
        let status = try StatusReport.build(config: site.config, secrets: site.secrets, now: clock.time.now)
        return (report.warning, status, took)
    }

    /// A Gemini emulator whose quota and retry delays are read on `clock`.
    func script(_ script: GeminiEmulator.Script, on clock: ManualClock) -> GeminiEmulator.Script {
        var script = script
        script.clock = clock.time
        return script
    }

    @Test("Broken files end with a clear reason in status, are never sent, and do not stop good photos")
    func badInputIsReportedAndSkipped() async throws {
        let clock = ManualClock()
        try await withGeminiEmulator(script(.always(.books([dune])), on: clock)) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 10), as: "good.jpg")
            try root.drop([], as: "empty.jpg")
            try root.drop(JPEGFactory.truncated(JPEGFactory.shelf(seed: 11)), as: "truncated.jpg")
            try root.drop(Array("shopping list: milk, eggs\n".utf8), as: "notes.jpg")
            try root.drop(JPEGFactory.huge(width: 10_000, height: 10_000), as: "panorama.jpg")
            try root.drop(
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 64), as: "screenshot.jpg")

            let status = try await run(root, clock: clock).status
            #expect(status.isDegraded, "some photos failed: run exits 3")
            #expect(gemini.requests.count == 1, "only the good photo is sent")
            #expect(try root.resultDocuments().map(\.photo.path) == ["good.jpg"])

            #expect(status.queue.done == 1 && status.queue.dead == 5)
            let reasons = Dictionary(
                status.problems.compactMap { p in p.path.map { ($0, p) } }, uniquingKeysWith: { a, _ in a })
            #expect(reasons["empty.jpg"]?.code == "unreadable_image")
            #expect(reasons["empty.jpg"]?.message.contains("empty") == true)
            #expect(reasons["truncated.jpg"]?.message.contains("truncated") == true)
            #expect(reasons["notes.jpg"]?.message.contains("not an image") == true)
            #expect(reasons["panorama.jpg"]?.code == "photo_too_large")
            #expect(reasons["panorama.jpg"]?.message.contains("100") == true)
            #expect(reasons["screenshot.jpg"]?.code == "unsupported_format", "recognised by content, not by name")
            #expect(reasons["screenshot.jpg"]?.message.contains("not supported yet") == true)
        }
    }

    @Test("An unknown model pauses the provider with a message naming the model and the setting")
    func unknownModelPauses() async throws {
        let clock = ManualClock()
        let models = GeminiEmulator.Script(models: ["gemini-2.5-flash"], reply: .books([dune]))
        try await withGeminiEmulator(script(models, on: clock)) { gemini in
            let root = try ShelfRoot(
                geminiURL: gemini.baseURL, overrides: ["gemini": ["model": "\"gemini-0.1-retired\""]])
            try root.drop(JPEGFactory.shelf(seed: 30), as: "a.jpg")
            let status = try await run(root, clock: clock).status
            #expect(status.isDegraded)
            #expect(status.provider.state == "paused")
            #expect(status.problems.first?.code == "provider_model")
            #expect(status.problems.first?.message.contains("gemini-0.1-retired") == true)
            #expect(status.queue.pending == 1)
        }
    }

    @Test("A 429 with RetryInfo waits the given delay, then the photo goes through without a failed attempt")
    func rateLimitHonoursRetryDelay() async throws {
        let clock = ManualClock()
        let limited = GeminiEmulator.Script.failing(
            times: 1, with: .rateLimited(retryDelay: "2s"), then: .books([dune]))
        try await withGeminiEmulator(script(limited, on: clock)) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 40), as: "a.jpg")
            let (warning, status, took) = try await run(root, clock: clock)
            #expect(warning == nil && !status.isDegraded, "\(status)")
            #expect(took >= .seconds(2), "the second request waited for retryDelay: \(took)")
            #expect(gemini.requests.map(\.status) == [429, 200])
            #expect(status.queue.done == 1 && status.queue.failed == 0 && status.provider.state == "ok")
        }
    }

    @Test("A used-up daily quota waits until the reset instead of retrying")
    func dailyQuotaWaitsForReset() async throws {
        let clock = ManualClock()
        try await withGeminiEmulator(script(.always(.dailyQuotaExhausted), on: clock)) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            for seed in 50..<54 { try root.drop(JPEGFactory.shelf(seed: seed), as: "\(seed).jpg") }
            let (warning, status, _) = try await run(root, clock: clock)
            #expect(warning?.contains("wait until") == true, "\(warning ?? "no warning")")
            #expect(gemini.requests.count <= 2, "no request after the quota answer beyond those in flight")
            #expect(status.provider.state == "backoff")
            let until = try #require(status.provider.backoffUntil)
            #expect(until > clock.time.now.addingTimeInterval(60))
            #expect(status.queue.pending == 4 && status.queue.dead == 0)
        }
    }

    @Test(
        "Three 503s then an answer: the provider is probed a few seconds later, and the photo is done with no attempt used"
    )
    func overloadedThenRecovers() async throws {
        let clock = ManualClock()
        let overloaded = GeminiEmulator.Script.failing(times: 3, with: .overloaded, then: .books([dune]))
        try await withGeminiEmulator(script(overloaded, on: clock)) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["pipeline": ["max_attempts": "1"]])
            try root.drop(JPEGFactory.shelf(seed: 60), as: "a.jpg")
            let (warning, status, took) = try await run(root, clock: clock)
            #expect(warning == nil && !status.isDegraded, "\(status)")
            #expect(gemini.requests.map(\.status) == [503, 503, 503, 200], "three quick tries, then one probe")
            #expect(took >= .seconds(2) && took < .seconds(60), "the probe, a few seconds later: \(took)")
            #expect(try root.resultDocuments().first?.books.first?.title == "Dune")
            #expect(status.queue.failed == 0)
        }
    }

    @Test("A blocked prompt is a dead photo with the reason; a cut answer is retried, then given up")
    func nonAnswersAreClassified() async throws {
        let clock = ManualClock()
        let blocked = JPEGFactory.shelf(seed: 70), cut = JPEGFactory.shelf(seed: 71)
        let replies = GeminiEmulator.Script(
            rules: [
                .init(photo: .sha256(sentSHA256(blocked)), replies: [.blockedPrompt("SAFETY")]),
                .init(photo: .sha256(sentSHA256(cut)), replies: [.maxTokensWithoutParts]),
            ], reply: .books([dune]))
        try await withGeminiEmulator(script(replies, on: clock)) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(blocked, as: "blocked.jpg")
            try root.drop(cut, as: "cut.jpg")
            try root.drop(JPEGFactory.shelf(seed: 72), as: "fine.jpg")
            let status = try await run(root, clock: clock).status
            #expect(status.isDegraded)
            #expect(status.queue.done == 1 && status.queue.dead == 2)
            let codes = Dictionary(
                status.problems.compactMap { p in p.path.map { ($0, p.code) } }, uniquingKeysWith: { a, _ in a })
            #expect(codes["blocked.jpg"] == "provider_blocked")
            #expect(codes["cut.jpg"] == "provider_truncated")
            let cutRequests = gemini.requests.filter { $0.photoSHA256 == sentSHA256(cut) }.count
            #expect(cutRequests == 3, "max_attempts = 3")
            #expect(gemini.requests.filter { $0.photoSHA256 == sentSHA256(blocked) }.count == 1)
        }
    }
}
