import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfStore
import ShelfTesting
import Testing

@Suite("Rate limits shared by every shelfd process")
struct RateLimitTests {
    @Test(
        "requests_per_day pauses the provider until its day ends: no photo is charged, status says why",
        .timeLimit(.minutes(2)))
    func dailyLimitPausesTheProvider() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(
                geminiURL: gemini.baseURL,
                overrides: [
                    "gemini": ["requests_per_day": "3"],
                    "pipeline": ["concurrency": "1", "batch_size": "1"],
                ])
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
            #expect(
                status.provider.reason?.contains("requests_per_day") == true, "\(status.provider.reason ?? "no reason")"
            )
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
