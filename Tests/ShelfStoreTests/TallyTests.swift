import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

/// The counts status, /metrics and the overview read come from `tally`, kept by triggers: after every change to the
/// queue they must be what counting the jobs says.
@Suite(.postgresServer, .serialized) struct TallyTests {
    /// The jobs per state as a COUNT(*) over the table finds them.
    static func counted(_ store: Store) throws -> QueueCounts {
        try store.read { db in
            var counts = QueueCounts()
            for row in try db.query("SELECT state, COUNT(*) AS n FROM job GROUP BY state") {
                let n = Int(row.int("n") ?? 0)
                switch JobState(rawValue: row.string("state") ?? "") {
                case .pending: counts.pending = n
                case .leased: counts.leased = n
                case .done: counts.done = n
                case .review: counts.review = n
                case .failedRetryable: counts.failed = n
                case .dead: counts.dead = n
                case nil: break
                }
            }
            if let oldest = try db.queryOne("SELECT MIN(created_at) AS t FROM job WHERE state = 'pending'")?.double("t")
            {
                counts.oldestPendingSeconds = max(0, Int(Date().timeIntervalSince1970 - oldest))
            }
            return counts
        }
    }

    static func expectCounted(_ store: Store, _ step: String, sourceLocation: SourceLocation = #_sourceLocation) throws
    {
        let kept = try store.status.queueCounts(now: Date()), counted = try counted(store)
        #expect(kept == counted, "after \(step)", sourceLocation: sourceLocation)
    }

    static func queue(_ store: Store, _ sha: String, at time: Date = Date()) throws {
        try store.queue.queuePhoto(sha, mtime: time.timeIntervalSince1970, now: time)
    }

    static func book(_ title: String, confidence: Double = 0.9) -> Book {
        Book(
            title: title, author: "Someone", isbn13: nil, isbn10: nil, confidence: confidence, box: nil,
            status: confidence >= 0.6 ? .verified : .needsReview, source: "gemini")
    }

    static func doubtful(_ title: String) -> Book { book(title, confidence: 0.3) }

    @Test(
        "The kept counts follow ingest, claims, every ending, retries, rescans, decisions, library edits and pruning",
        arguments: StoreKind.allCases)
    func countsFollowEveryChange(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try Self.expectCounted(store, "opening an empty store")
            for sha in ["a", "b", "c", "d", "e"] { try Self.queue(store, sha) }
            try Self.queue(store, "x") // another content
            try store.queue.queuePhoto("a", at: "copy-of-a.jpg") // a copy: no job
            try Self.expectCounted(store, "ingest")

            let jobs = try store.queue.claim(limit: 5, provider: "gemini", owner: "me", lease: 60, now: Date())
            #expect(jobs.count == 5)
            try Self.expectCounted(store, "a claim")
            let job = Dictionary(uniqueKeysWithValues: jobs.map { ($0.sha256, $0) })
            try store.queue.finish(
                [
                    JobOutcome(
                        job: job["a"]!,
                        result: .finished(books: [Self.book("Dune")], resultPath: "/r/a.json", review: false)),
                    JobOutcome(
                        job: job["b"]!,
                        result: .finished(books: [Self.doubtful("Smudged")], resultPath: "/r/b.json", review: true)),
                    JobOutcome(
                        job: job["c"]!,
                        result: .failed(.network, message: "no route", retryAt: Date().addingTimeInterval(600))),
                    JobOutcome(job: job["d"]!, result: .dead(.unreadableImage, message: "not a photo")),
                    JobOutcome(job: job["e"]!, result: .released(nil, message: "shutting down", refundAttempt: false)),
                ], shelfOf: { _ in nil }, now: Date())
            try Self.expectCounted(store, "a batch ending done, review, failed, dead and released")
            #expect(
                try store.status.queueCounts(now: Date()).review == 1 && store.status.queueCounts(now: Date()).dead == 1
            )

            let again = try store.queue.claim(limit: 5, provider: "gemini", owner: "me", lease: 60, now: Date())
            #expect(try store.queue.releaseLeases(owner: "me", jobIDs: again.map(\.id), now: Date()) == again.count)
            try Self.expectCounted(store, "leases given back")
            #expect(try store.queue.recoverLeases(isAlive: { _ in false }, now: Date()) == 0)
            _ = try store.queue.claim(limit: 1, provider: "gemini", owner: "gone", lease: 60, now: Date())
            #expect(try store.queue.recoverLeases(isAlive: { _ in false }, now: Date()) == 1)
            try Self.expectCounted(store, "a dead owner's lease recovered")

            #expect(try store.queue.requeue(jobIDs: nil, now: Date()).count == 2)
            try Self.expectCounted(store, "retry of the failed and the dead")
            #expect(try store.queue.rescan(sha256: "a", providerChoice: nil, now: Date()) != nil)
            try Self.expectCounted(store, "a rescan")

            let item = try #require(try store.library.openReviewItems().first)
            _ = try store.library.decide(item.id, .accept, now: Date())
            try Self.expectCounted(store, "a review decision")
            #expect(try store.status.queueCounts(now: Date()).review == 0)

            // A second photo waiting for review, whose work is then removed from the library.
            let f = try { () throws -> ClaimedJob in
                try Self.queue(store, "f")
                let claimed = try store.queue.claim(limit: 10, provider: "gemini", owner: "me", lease: 60, now: Date())
                try store.queue.finish(
                    claimed.filter { $0.sha256 != "f" }.map {
                        JobOutcome(
                            job: $0, result: .finished(books: [], resultPath: "/r/\($0.sha256).json", review: false))
                    }, shelfOf: { _ in nil }, now: Date())
                return try #require(claimed.first { $0.sha256 == "f" })
            }()
            try store.queue.finish(
                [
                    JobOutcome(
                        job: f,
                        result: .finished(books: [Self.doubtful("Blurred")], resultPath: "/r/f.json", review: true))
                ],
                shelfOf: { _ in nil }, now: Date())
            try Self.expectCounted(store, "a second review")
            let blurred = try #require(try store.library.entries().first { $0.title == "Blurred" })
            _ = try store.library.removeWork(blurred.work, now: Date())
            try Self.expectCounted(store, "a work removed from the library")

            _ = try store.maintenance.prune(finishedBefore: Date().addingTimeInterval(60))
            try Self.expectCounted(store, "pruning")
        }
    }

    @Test(
        "The pass is the photos queued since the queue was last empty; a photo retried within it is counted once",
        arguments: StoreKind.allCases)
    func passCountsEachPhotoOnce(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try Self.queue(store, "a", at: Date(timeIntervalSince1970: 100))
            try Self.queue(store, "b", at: Date(timeIntervalSince1970: 101))
            let jobs = try store.queue.claim(
                limit: 2, provider: "gemini", owner: "me", lease: 60, now: Date(timeIntervalSince1970: 102))
            let a = try #require(jobs.first { $0.sha256 == "a" }), b = try #require(jobs.first { $0.sha256 == "b" })
            try store.queue.finish(
                [JobOutcome(job: a, result: .dead(.unreadableImage, message: "not a photo"))], shelfOf: { _ in nil },
                now: Date(timeIntervalSince1970: 103))
            var pass = try #require(try store.queue.progress(now: Date()).pass)
            #expect(pass.startedAt == Date(timeIntervalSince1970: 100) && pass.total == 2 && pass.finished == 1)

            _ = try store.queue.requeue(jobIDs: [a.id], now: Date(timeIntervalSince1970: 104))
            pass = try #require(try store.queue.progress(now: Date()).pass)
            #expect(
                pass.total == 2 && pass.finished == 0, "a photo of this pass tried again is still one of its photos")

            let retried = try #require(
                try store.queue.claim(
                    limit: 1, provider: "gemini", owner: "me", lease: 60,
                    now: Date(timeIntervalSince1970: 105)
                ).first)
            try store.queue.finish(
                [
                    JobOutcome(job: retried, result: .finished(books: [], resultPath: "/r/a.json", review: false)),
                    JobOutcome(job: b, result: .finished(books: [], resultPath: "/r/b.json", review: false)),
                ],
                shelfOf: { _ in nil }, now: Date(timeIntervalSince1970: 106))
            #expect(try store.queue.progress(now: Date()).pass == nil, "the queue is empty: no pass")

            try Self.queue(store, "c", at: Date(timeIntervalSince1970: 200))
            pass = try #require(try store.queue.progress(now: Date()).pass)
            #expect(
                pass.startedAt == Date(timeIntervalSince1970: 200) && pass.total == 1 && pass.finished == 0,
                "a new pass")
            _ = try store.queue.rescan(sha256: "a", providerChoice: nil, now: Date(timeIntervalSince1970: 201))
            pass = try #require(try store.queue.progress(now: Date()).pass)
            #expect(pass.total == 2, "a photo finished in an earlier pass joins this one")
        }
    }

    @Test("A database of the previous version gets counts of the jobs it holds")
    func seededFromTheJobsThere() throws {
        let before = Migration.steps(on: .sqlite).firstIndex { $0.name == "tally" }!
        try withOlderDatabase(
            steps: before,
            rows: """
                INSERT INTO photo (sha256, size, relative_path, first_seen) VALUES ('a', 1, 'a.jpg', 10), ('b', 1, 'b.jpg', 10),
                    ('c', 1, 'c.jpg', 10);
                INSERT INTO job (sha256, provider, state, created_at, updated_at, finished_at) VALUES
                    ('a', 'gemini', 'done', 10, 10, 11), ('b', 'gemini', 'pending', 12, 12, NULL),
                    ('c', 'gemini', 'review', 10, 13, 13);
                """
        ) { store in
            try Self.expectCounted(store, "the upgrade")
            let pass = try #require(try store.queue.progress(now: Date()).pass)
            #expect(pass.startedAt == Date(timeIntervalSince1970: 12) && pass.total == 1 && pass.finished == 0)
        }
    }

    @Test(
        "The change stamp moves with this connection's writes and another's, not with reads; PostgreSQL has none",
        arguments: StoreKind.allCases)
    func changeStampFollowsWrites(kind: StoreKind) throws {
        try withStore(kind) { store, site in
            guard kind == .sqlite else {
                #expect(try store.status.changeStamp() == nil)
                return
            }
            let first = try #require(try store.status.changeStamp())
            _ = try store.status.queueCounts(now: Date()); _ = try store.queue.progress(now: Date())
            #expect(try store.status.changeStamp() == first, "reads change nothing")
            try Self.queue(store, "a")
            let afterOwn = try #require(try store.status.changeStamp())
            #expect(afterOwn != first, "this connection's write")
            let other = try site.open()
            try Self.queue(other, "b")
            #expect(try store.status.changeStamp() != afterOwn, "another connection's commit")
        }
    }
}
