import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

@Suite(.postgresServer, .serialized) struct PruningTests {
    static let day: TimeInterval = 86_400

    /// A photo queued, asked (its answer saved) and finished at `at`.
    @discardableResult
    static func finishedPhoto(_ store: Store, _ sha: String, at: Date, state review: Bool = false) throws -> Int64 {
        try store.queue.queuePhoto(sha, now: at)
        let job = try store.queue.claimOne(now: at)
        try store.queue.recordResponse(
            jobID: job.id, sha256: sha, provider: "gemini", model: "m", file: "/state/responses/\(sha).json",
            bytes: 10, latencyMs: 5, now: at)
        try store.queue.finish(
            [JobOutcome(job: job, result: .finished(books: [], resultPath: "/results/\(sha).json", review: review))],
            shelfOf: { _ in nil }, now: at)
        return job.id
    }

    static func count(_ store: Store, _ table: String, sha: String) throws -> Int {
        try store.read { db in
            Int(try db.queryOne("SELECT COUNT(*) AS n FROM \(table) WHERE sha256 = ?", [sha])?.int("n") ?? 0)
        }
    }

    @Test(
        "Events and saved answers of photos finished before the cutoff go; recent and unfinished photos keep theirs",
        arguments: StoreKind.allCases)
    func prunesOnlyOldFinishedPhotos(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let now = Date()
            let old = now.addingTimeInterval(-40 * Self.day), cutoff = now.addingTimeInterval(-30 * Self.day)
            try Self.finishedPhoto(store, "old-done", at: old)
            try Self.finishedPhoto(store, "old-review", at: old, state: true)
            try Self.finishedPhoto(store, "recent", at: now.addingTimeInterval(-5 * Self.day))
            // Finished long ago, but read again now: the rescan waits, so nothing of the photo goes.
            try Self.finishedPhoto(store, "rescanned", at: old)
            #expect(try store.queue.rescan(sha256: "rescanned", providerChoice: nil, now: now) != nil)
            // Queued long ago and never finished (a crash after its answer was saved): its answer is replayed later.
            try store.queue.queuePhoto("waiting", now: old)
            let waiting = try #require(
                try store.queue.claim(limit: 1, provider: "gemini", owner: "gone", lease: 60, now: old).first)
            try store.queue.recordResponse(
                jobID: waiting.id, sha256: "waiting", provider: "gemini", model: "m",
                file: "/state/responses/waiting.json", bytes: 10, latencyMs: 5, now: old)
            try store.queue.addEvent("provider_switched", message: "gemini → cloudflare", now: old)

            let report = try store.maintenance.prune(finishedBefore: cutoff)
            #expect(
                Set(report.responseFiles) == ["/state/responses/old-done.json", "/state/responses/old-review.json"])
            #expect(report.responses == 2)
            for sha in ["old-done", "old-review"] {
                #expect(try Self.count(store, "response", sha: sha) == 0)
                #expect(try Self.count(store, "event", sha: sha) == 0)
                #expect(try Self.count(store, "job", sha: sha) == 1, "the job and its result path stay")
            }
            for sha in ["recent", "rescanned", "waiting"] {
                #expect(try Self.count(store, "response", sha: sha) == 1, "\(sha) keeps its saved answer")
                #expect(try Self.count(store, "event", sha: sha) > 0, "\(sha) keeps its events")
            }
            #expect(try store.queue.usableResponse(jobID: waiting.id, provider: "gemini", model: "m") != nil)
            let daemonEvents = try store.read { db in
                try db.queryOne("SELECT COUNT(*) AS n FROM event WHERE kind = 'provider_switched'")?.int("n")
            }
            #expect(daemonEvents == 1, "events about the daemon, not a photo, stay")
            #expect(
                try store.maintenance.prune(finishedBefore: cutoff) == PruneReport(), "a second prune finds nothing")
        }
    }

    // SQLite only: pages of a file on disk; a server's database is measured by the server.
    @Test("The size counts the pages in use, not the free ones")
    func sizeCountsUsedPages() throws {
        try withStore(.sqlite) { store, _ in
            let size = try store.maintenance.size()
            #expect(size.usedBytes > 0 && size.usedBytes <= size.fileBytes)
        }
    }
}
