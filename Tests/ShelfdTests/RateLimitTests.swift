import Foundation
import ShelfCore
import ShelfStore
import ShelfTesting
import Testing

@Suite("Rate limits shared by every shelfd process", .serialized)
struct RateLimitTests {
    @Test("watch and a run started beside it keep one requests_per_minute together in any 60 s, and ask about each photo once",
          .timeLimit(.minutes(4)))
    func watchAndRunShareOneLimit() async throws {
        // More than a minute's worth, so that `limit + 1` requests meet in six windows; 20 a minute keeps the test near
        // 80 s (the window is real seconds) while turns come every 3 s, often enough for both processes to take them.
        let limit = 20, photos = 26
        // The emulator keeps Gemini's per-minute quota too: a request beyond the limit would be refused (429).
        var script = GeminiEmulator.Script(latency: .milliseconds(100), reply: .books([dune]), requestsPerMinute: limit)
        // Requests reach the provider up to a second after they leave, unevenly: a request `limit` turns after another
        // can arrive half a second or a second sooner after its turn than that one did.
        script.travel = [.zero, .milliseconds(500), .seconds(1)]
        try await withGeminiEmulator(script) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["gemini": ["requests_per_minute": "\(limit)"]])
            for seed in 0..<photos { try root.drop(JPEGFactory.shelf(seed: 700 + seed), as: "shelf-\(seed).jpg") }
            let daemon = try root.startDaemon()
            try await waitUntil("the daemon sends its first request") { !gemini.requests.isEmpty }
            let run = try await root.shelfd(["run"], timeout: .seconds(180))       // the nightly timer, beside the daemon
            #expect(run.status == 0, "\(run.stderr)")
            try await waitUntil("every photo is done", timeout: .seconds(120)) { try await root.status().queue.done == photos }
            #expect(try await daemon.stop() == 0)

            let sent = gemini.requests.filter { $0.photoSHA256 != nil }
            #expect(sent.count == photos, "one request per photo")
            #expect(Set(sent.compactMap(\.photoSHA256)).count == photos, "each photo asked once")
            #expect(sent.allSatisfy { $0.status == 200 }, "the provider refused none for its per-minute quota")
            // No `limit + 1` requests within any 60 s, as the provider's clock saw them arrive.
            let arrivals = sent.map(\.arrivedAt).sorted()
            let spans = zip(arrivals, arrivals.dropFirst(limit)).map { $1.timeIntervalSince($0) }
            let gaps = zip(arrivals, arrivals.dropFirst()).map { $1.timeIntervalSince($0) }
            print("requests_per_minute = \(limit): \(limit + 1) requests spanned at least \(String(format: "%.3f", spans.min() ?? 0)) s; "
                  + "gaps between arrivals \(String(format: "%.3f", gaps.min() ?? 0))–\(String(format: "%.3f", gaps.max() ?? 0)) s")
            let crowded = spans.filter { $0 < 60 }
            #expect(crowded.isEmpty, "\(crowded.count) windows of 60 s held more than \(limit) requests: \(spans)")
            #expect(try root.resultDocuments().map(\.photo.path).count == photos)
            #expect(run.stderr.contains("Scan started"), "run sent some of the requests itself")
            #expect(daemon.logText.contains("Scan started"), "the daemon sent some of the requests itself")
        }
    }

    @Test("requests_per_day pauses the provider until its day ends: no photo is charged, status says why",
          .timeLimit(.minutes(2)))
    func dailyLimitPausesTheProvider() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["gemini": ["requests_per_day": "3"],
                                                                           "pipeline": ["concurrency": "1", "batch_size": "1"]])
            for seed in 0..<5 { try root.drop(JPEGFactory.shelf(seed: 800 + seed), as: "shelf-\(seed).jpg") }
            let run = try await root.shelfd("run")
            #expect(run.status == 3, "photos are left waiting: \(run.stderr)")
            #expect(run.stderr.contains("requests_per_day"), "\(run.stderr)")
            #expect(gemini.requests.count == 3)

            let status = try await root.status()
            #expect(status.queue.done == 3 && status.queue.pending == 2)
            #expect(status.queue.dead == 0 && status.queue.failed == 0)
            #expect(status.provider.state == "backoff")
            let resets = QuotaTimes.nextPacificMidnight(after: Date())
            let until = try #require(status.provider.backoffUntil)
            #expect(abs(until.timeIntervalSince(resets)) < 120, "until the Gemini day ends, midnight Pacific")
            #expect(status.provider.reason?.contains("requests_per_day") == true, "\(status.provider.reason ?? "no reason")")
            #expect(status.problems.contains { $0.code == "provider_quota" })

            let db = try SQLiteConnection(path: root.state.appendingPathComponent("shelfd.db").path)
            let waiting = try db.query("SELECT attempts FROM job WHERE state = 'pending'")
            #expect(waiting.count == 2 && waiting.allSatisfy { $0.int("attempts") == 0 }, "no attempt charged")

            // A second process the same day sends nothing either; raising the limit lets the photos go on.
            #expect(try await root.shelfd("run").status == 3)
            #expect(gemini.requests.count == 3)
            try root.writeConfig(geminiURL: gemini.baseURL, overrides: ["gemini": ["requests_per_day": "10"]])
            #expect(try await root.shelfd("run").status == 0)
            #expect(gemini.requests.count == 5)
            #expect(try await root.status().queue.done == 5)
        }
    }
}
