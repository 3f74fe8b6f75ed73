import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("A provider outage costs no photo", .serialized)
struct OutageTests {
    @Test(
        "run during an outage exits 3 with the provider's sentence; the photos stay queued, uncharged, and go through later",
        .timeLimit(.minutes(2)))
    func runDuringOutage() async throws {
        // A port nothing listens on: connections are refused.
        let closed = try GeminiEmulator.start(script: .always(.books([dune])))
        let port = closed.baseURL
        closed.stop()
        let root = try ShelfRoot(geminiURL: port, overrides: ["pipeline": ["probe_max_s": "5"]])
        for seed in 1120..<1123 { try root.drop(JPEGFactory.shelf(seed: seed), as: "\(seed).jpg") }

        let run = try await root.shelfd("run")
        #expect(run.status == 3)
        #expect(run.stderr.contains("provider: gemini — unreachable since "), "\(run.stderr)")
        #expect(run.stderr.contains("Could not connect to Gemini"), "\(run.stderr)")
        #expect(run.stderr.contains("next try") && run.stderr.contains("3 photos waiting"), "\(run.stderr)")
        let status = try await root.status()
        #expect(status.queue.pending == 3 && status.queue.failed == 0 && status.queue.dead == 0)
        #expect(status.provider.state == "unreachable" && status.provider.photosWaiting == 3)
        #expect(status.provider.reason?.hasPrefix("Could not connect to Gemini") == true)
        #expect(try root.chargedAttempts() == [0, 0, 0])

        // The provider is back (elsewhere): once the next probe is due, a run takes every photo.
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            try root.writeConfig(geminiURL: gemini.baseURL, overrides: ["pipeline": ["probe_max_s": "5"]])
            let next = try #require(status.provider.nextTry)
            // (status --json gives whole seconds)
            try await waitUntil("the next probe is due", timeout: .seconds(15)) { Date() > next.addingTimeInterval(1) }
            let again = try await root.shelfd("run")
            #expect(again.status == 0, "\(again.stderr)")
            #expect(gemini.requests.count == 3)
            let done = try await root.status()
            #expect(done.queue.done == 3 && done.provider.state == "ok")
        }
    }
}
