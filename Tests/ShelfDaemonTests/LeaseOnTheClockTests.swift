import Foundation
import ShelfCore
import ShelfDaemon
import ShelfPipeline
import ShelfStore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// A worker on another machine claims photos and dies (killed, unplugged). Its leases cannot be checked from here, so its
/// photos wait until the leases run out, then another worker takes them: on a manual clock, ten minutes in a moment.
@Suite("Leases of a worker that died elsewhere")
struct LeaseOnTheClockTests {
    @Test(
        "Photos claimed by a worker that died on another machine are done by this one once their lease runs out, not before, and once",
        .timeLimit(.minutes(2)))
    func leaseRunsOutAfterAKill() async throws {
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            let clock = ManualClock()
            var script = GeminiEmulator.Script.always(.books([dune]))
            script.clock = clock.time
            try await withGeminiEmulator(script) { gemini in
                let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["store": ["url": "\"\(url)\""]])
                for seed in 0..<3 {
                    try root.drop(
                        JPEGFactory.shelf(width: 320, height: 240, seed: 9_100 + seed), as: "shelf-\(seed).jpg")
                }
                let shelf = try InProcessShelf(root, clock: clock)
                try shelf.recordIncoming()
                // The other machine's worker: another boot's process, which this machine cannot ask about.
                let lease = shelf.pipeline.settings.lease
                let claimed = try shelf.runtime.store.queue.claim(
                    limit: 3, provider: "gemini", owner: "another-boot:4242:1", lease: lease,
                    now: clock.time.now)
                #expect(claimed.count == 3)

                try await shelf.watching {
                    // Nothing is taken while the lease runs.
                    try await shelf.runClock(until: "just before the lease ends", within: .seconds(lease)) {
                        clock.now.offset >= .seconds(lease - 5)
                    }
                    #expect(gemini.requests.isEmpty, "a lease that has not run out is the other worker's")
                    #expect(try shelf.status().queue.leased == 3)
                    #expect(try shelf.status().queue.leasedByStopped == nil, "another machine's worker may be alive")
                    let took = try await shelf.runClock(until: "the photos are done", within: .seconds(120)) {
                        try shelf.queue().done == 3
                    }
                    // An idle worker on PostgreSQL looks for due jobs every 30 s, so they are taken within a poll or two.
                    #expect(took <= .seconds(100), "taken soon after the lease's end: \(took)")
                }
                let sent = gemini.requests.filter { $0.photoSHA256 != nil }
                #expect(
                    sent.count == 3 && Set(sent.compactMap(\.photoSHA256)).count == 3, "each photo asked about once")
                #expect(try root.resultDocuments().count == 3)
            }
        }
    }

    @Test("On one machine, status says which photos in progress a stopped process holds, and a start takes them again")
    func stoppedHolderSaidByStatus() async throws {
        let root = try ShelfRoot()
        for seed in 0..<3 {
            try root.drop(JPEGFactory.shelf(width: 320, height: 240, seed: 9_200 + seed), as: "shelf-\(seed).jpg")
        }
        let clock = ManualClock()
        let shelf = try InProcessShelf(root, clock: clock)
        try shelf.recordIncoming()
        // A process that claimed two photos and stopped (as `kill -9` or a full disk leaves them), and this one.
        let stopped = Process()
        stopped.executableURL = URL(fileURLWithPath: "/bin/true")
        try stopped.run()
        stopped.waitUntilExit()
        let queue = shelf.runtime.store.queue, lease = shelf.pipeline.settings.lease
        let owner = ProcessIdentity.owner(pid: stopped.processIdentifier)
        _ = try queue.claim(limit: 2, provider: "gemini", owner: owner, lease: lease, now: clock.time.now)
        _ = try queue.claim(
            limit: 1, provider: "gemini", owner: ProcessIdentity.current, lease: lease, now: clock.time.now)
        let status = try shelf.status()
        #expect(status.queue.leased == 3 && status.queue.leasedByStopped == 2)

        let restarted = try InProcessShelf(root, clock: clock)
        #expect(try restarted.status().queue.leasedByStopped == nil, "the start took the stopped process's photos back")
        #expect(try restarted.queue().pending == 2)
    }
}
