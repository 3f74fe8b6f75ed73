import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

/// A new, empty store on `kind` (a temporary SQLite file, or a fresh database on the suite's PostgreSQL server), and
/// its site, for the tests that open the same database again as another process would.
func withStore<T>(_ kind: StoreKind, _ body: (Store, StoreSite) throws -> T) throws -> T {
    try StoreSite.with(kind) { site in try body(try site.open(), site) }
}

/// A new, empty store on `kind`, and the same database opened again as a second process opens it: its own
/// connection.
func withTwoProcesses<T>(_ kind: StoreKind, _ body: (Store, Store) throws -> T) throws -> T {
    try withStore(kind) { store, site in try body(store, try site.open()) }
}

/// A SQLite file an older shelfd made (its schema's first `steps` steps, then `rows`), opened by this one, which
/// migrates the rest.
func withOlderDatabase<T>(steps: Int, rows: String, _ body: (Store) throws -> T) throws -> T {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-migrate-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("shelfd.db").path
    do {
        let db = try SQLiteConnection(path: path)
        // As a shelfd of before migrations were recorded by name left it: its steps run, and only counted.
        let sql = Migration.steps(on: .sqlite)[..<steps].map(\.sql).joined(separator: "\n")
        try db.executeScript(sql + "\nPRAGMA user_version = \(steps);")
        try db.executeScript(rows)
    }
    return try body(try Store.open(path: path))
}

@Suite(.postgresServer, .serialized) struct StoreTests {
    @Test("A SQLite database that counts more migrations than this shelfd has is refused, with what to do")
    func newerDatabaseRefused() throws {
        let steps = Migration.steps(on: .sqlite).count
        #expect {
            try withOlderDatabase(steps: steps, rows: "PRAGMA user_version = \(steps + 1);") { _ in }
        } throws: { error in
            "\(error)".contains("newer than this shelfd knows") && "\(error)".contains("Upgrade shelfd")
        }
    }

    @Test("A copy or a renamed copy of a photo is a sighting, not a second job", arguments: StoreKind.allCases)
    func copiesAreSightings(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let first = try store.queue.recordSighting(
                path: "/in/a.jpg", relativePath: "a.jpg", sha256: "aa", size: 10, mtime: 1,
                syncConflict: false, provider: "gemini", now: Date())
            guard case .queued = first else { Issue.record("expected a job, got \(first)"); return }
            let copy = try store.queue.recordSighting(
                path: "/in/sub/copy.jpg", relativePath: "sub/copy.jpg", sha256: "aa",
                size: 10, mtime: 2, syncConflict: false, provider: "gemini", now: Date())
            #expect(copy == .knownPhoto(sha256: "aa"))
            let again = try store.queue.recordSighting(
                path: "/in/a.jpg", relativePath: "a.jpg", sha256: "aa", size: 10, mtime: 1,
                syncConflict: false, provider: "gemini", now: Date())
            #expect(again == .unchanged)
            #expect(try store.status.queueCounts(now: Date()).pending == 1)
        }
    }

    @Test(
        "A claim takes at most the batch size, and a second claim never takes the same job",
        arguments: StoreKind.allCases)
    func claimIsExclusive(kind: StoreKind) throws {
        try withTwoProcesses(kind) { store, other in
            for i in 0..<7 {
                try store.queue.queuePhoto("sha\(i)", at: "\(i).jpg")
            }
            let a = try store.queue.claim(limit: 5, provider: "gemini", owner: "a", lease: 60, now: Date())
            let b = try other.queue.claim(limit: 5, provider: "gemini", owner: "b", lease: 60, now: Date())
            #expect(a.count == 5)
            #expect(b.count == 2)
            #expect(Set(a.map(\.id)).isDisjoint(with: b.map(\.id)))
        }
    }

    @Test(
        "The newest results come in the order their photos finished, not the order one batch claimed them",
        arguments: StoreKind.allCases)
    func recentResultsInFinishingOrder(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            for name in ["a", "b", "c"] { try store.queue.queuePhoto(name, now: start) }
            let batch = try store.queue.claim(limit: 5, provider: "gemini", owner: "me", lease: 60, now: start)
            #expect(batch.map(\.sha256) == ["a", "b", "c"])
            // Read two at a time: "b" and "c" are done before "a", and the batch is committed after all three.
            let done = ["a": start + 3, "b": start + 1, "c": start + 2]
            try store.queue.finish(
                batch.map { job in
                    JobOutcome(
                        job: job, result: .finished(books: [], resultPath: "/r/\(job.sha256).json", review: false),
                        finishedAt: done[job.sha256])
                }, shelfOf: { _ in nil }, now: start + 4)
            let recent = try store.queue.recentResults(limit: 3)
            #expect(recent.map(\.relativePath) == ["a.jpg", "c.jpg", "b.jpg"])
            #expect(recent.map(\.finishedAt) == [start + 3, start + 2, start + 1])
        }
    }

    @Test(
        "Jobs leased by a dead owner return with their attempt count, after a pause if their request was out",
        arguments: StoreKind.allCases)
    func deadOwnersLeasesAreRecovered(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            try store.queue.queuePhoto("aa", at: "a.jpg", now: now)
            func claim(_ owner: String, at time: Date) throws -> [ClaimedJob] {
                try store.queue.claim(limit: 5, provider: "gemini", owner: owner, lease: 600, now: time)
            }
            let job = try #require(try claim("gone", at: now).first)
            try store.queue.chargeAttempt(jobID: job.id, now: now)
            #expect(try store.queue.recoverLeases(isAlive: { $0 != "gone" }, now: now + 1) == 1)
            #expect(try claim("me", at: now + 2).isEmpty, "a restart seconds later does not pay for it again")
            let again = try #require(try claim("me", at: now + 1 + PhotoQueue.crashPause(crashes: 1)).first)
            #expect(again.id == job.id)
            #expect(again.attempts == 1)
        }
    }

    @Test(
        "A photo the process died holding goes behind the waiting ones; after two deaths it goes alone, after three it is dead",
        arguments: StoreKind.allCases)
    func crashesCostOneRequestEach(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            for name in ["a", "b", "c"] {
                try store.queue.queuePhoto(name, now: start)
            }
            var now = start
            /// One claim of `limit` jobs by a process that then dies (`kill -9`), and the restart that recovers them.
            func claimedByAProcessThatDies(_ limit: Int) throws -> [String] {
                now += 10
                let jobs = try store.queue.claim(limit: limit, provider: "gemini", owner: "dies", lease: 600, now: now)
                #expect(try store.queue.recoverLeases(isAlive: { $0 != "dies" }, now: now + 1) == jobs.count)
                return jobs.map(\.sha256)
            }
            #expect(try claimedByAProcessThatDies(1) == ["a"])
            // The photo in flight at the crash is not first at the restart: the ones that waited are.
            #expect(try claimedByAProcessThatDies(1) == ["b"])
            #expect(try claimedByAProcessThatDies(1) == ["c"])
            // All three died once: "a" is asked again, and dies again: now it is held back.
            #expect(try claimedByAProcessThatDies(1) == ["a"])
            now += 10
            let others = try store.queue.claim(limit: 5, provider: "gemini", owner: "me", lease: 600, now: now)
            #expect(others.map(\.sha256) == ["b", "c"], "held back while others wait")
            #expect(
                try store.queue.claim(limit: 5, provider: "gemini", owner: "me", lease: 600, now: now).isEmpty,
                "held back while others are in flight")
            try store.queue.finish(
                others.map { JobOutcome(job: $0, result: .finished(books: [], resultPath: nil, review: false)) },
                shelfOf: { _ in nil }, now: now)
            // Alone, once more; the process dies while its request is out: no fault of the photo's, it is asked again.
            now += 10
            let alone = try store.queue.claim(limit: 5, provider: "gemini", owner: "dies", lease: 600, now: now)
            #expect(alone.map(\.sha256) == ["a"])
            _ = try store.queue.chargeAttempt(jobID: alone[0].id, now: now)
            #expect(try store.queue.recoverLeases(isAlive: { $0 != "dies" }, now: now + 1) == 1)
            let paused = try #require(try store.queue.finishedJob(sha256: "a"))
            #expect(
                paused.state == .failedRetryable && paused.code == PhotoError.Code.processDied.rawValue,
                "not dead: a kill during a request is no fault")
            // Asked again after a pause, so that a process killed again within seconds does not pay for it again.
            #expect(
                try store.queue.claim(limit: 5, provider: "gemini", owner: "me", lease: 600, now: now + 20).isEmpty)
            now += PhotoQueue.crashPause(crashes: 3)
            // Alone again; the process dies reading it (decoding, matching): it is dead, and says why.
            #expect(try claimedByAProcessThatDies(5) == ["a"])
            let dead = try #require(try store.queue.finishedJob(sha256: "a"))
            #expect(dead.state == .dead && dead.code == PhotoError.Code.processDied.rawValue)
            #expect(dead.message?.contains("the process died while this photo was being read, 4 times") == true)
            #expect(try store.queue.claim(limit: 5, provider: "gemini", owner: "me", lease: 600, now: now + 20).isEmpty)
            // A person's retry reads it again, as new.
            #expect(try store.queue.requeue(jobIDs: nil, now: now + 30).count == 1)
            #expect(
                try store.queue.claim(limit: 5, provider: "gemini", owner: "me", lease: 600, now: now + 40)
                    .map(\.sha256) == ["a"])
        }
    }

    @Test(
        "A crash is charged to the photos it cut off: one asked goes behind the waiting, those only waiting keep their place",
        arguments: StoreKind.allCases)
    func crashChargesThePhotosItCutOff(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            for name in ["a", "b", "c", "d"] {
                try store.queue.queuePhoto(name, now: start)
            }
            // Photos in hand, one slot: the first is asked, the others wait their turn, and the process dies.
            for round in 1...3 {
                let now = start.addingTimeInterval(Double(10 * round))
                let jobs = try store.queue.claim(limit: 3, provider: "gemini", owner: "dies", lease: 600, now: now)
                #expect(jobs.count == (round < 3 ? 3 : 2), "only photos that waited: \(jobs.map(\.sha256))")
                _ = try store.queue.chargeAttempt(jobID: jobs[0].id, now: now)
                #expect(try store.queue.recoverLeases(isAlive: { $0 != "dies" }, now: now + 1) == jobs.count)
                // The photos that waited are claimed together; those cut off wait while any of them is in flight.
                let next = try store.queue.claim(limit: 5, provider: "gemini", owner: "next", lease: 600, now: now + 2)
                #expect(next.map(\.sha256) == Array(["b", "c", "d"].dropFirst(round - 1)))
                #expect(
                    try store.queue.claim(limit: 5, provider: "gemini", owner: "next", lease: 600, now: now + 2).isEmpty
                )
                if round == 3 {
                    try store.queue.finish(
                        next.map { JobOutcome(job: $0, result: .finished(books: [], resultPath: nil, review: false)) },
                        shelfOf: { _ in nil }, now: now + 3)
                    // Each whose request was cut off is asked once more, after its pause, and none is held back.
                    #expect(
                        try store.queue.claim(limit: 5, provider: "gemini", owner: "next", lease: 600, now: now + 4)
                            .isEmpty)
                    let last = try store.queue.claim(
                        limit: 5, provider: "gemini", owner: "next", lease: 600,
                        now: now + 1 + PhotoQueue.crashPause(crashes: 1))
                    #expect(last.map(\.sha256) == ["a", "b", "c"], "each asked once more, none held back")
                } else {
                    _ = try store.queue.releaseLeases(owner: "next", now: now + 3)
                }
            }
        }
    }

    @Test(
        "A lease that ran out without a heartbeat makes the job claimable again, even while its holder lives",
        arguments: StoreKind.allCases)
    func expiredLeaseIsClaimable(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try store.queue.queuePhoto("aa", at: "a.jpg")
            let start = Date()
            let job = try #require(
                try store.queue.claim(limit: 5, provider: "gemini", owner: "stuck", lease: 60, now: start).first)
            #expect(
                try store.queue.claim(
                    limit: 5, provider: "gemini", owner: "me", lease: 60, now: start.addingTimeInterval(30)
                )
                .isEmpty)
            try store.queue.heartbeat(jobIDs: [job.id], owner: "stuck", lease: 60, now: start.addingTimeInterval(50))
            #expect(
                try store.queue.claim(
                    limit: 5, provider: "gemini", owner: "me", lease: 60, now: start.addingTimeInterval(100)
                ).isEmpty,
                "the heartbeat kept it")
            let again = try store.queue.claim(
                limit: 5, provider: "gemini", owner: "me", lease: 60, now: start.addingTimeInterval(111))
            #expect(again.map(\.id) == [job.id])
        }
    }

    @Test(
        "The same book seen in two photos is one library entry with two sightings and the higher confidence",
        arguments: StoreKind.allCases)
    func libraryDedupesAcrossPhotos(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            for (i, sha) in ["p1", "p2"].enumerated() {
                try store.queue.queuePhoto(sha, mtime: Double(i))
            }
            let jobs = try store.queue.claim(limit: 5, provider: "gemini", owner: "me", lease: 60, now: Date())
            let dune = { (confidence: Double, isbn: String?) in
                Book(
                    title: "Dune", author: "Frank Herbert", isbn13: isbn, isbn10: nil, confidence: confidence,
                    box: nil, status: .verified, source: "gemini")
            }
            try store.queue.finish(
                [
                    JobOutcome(
                        job: jobs[0], result: .finished(books: [dune(0.7, nil)], resultPath: "r1", review: false)),
                    JobOutcome(
                        job: jobs[1],
                        result: .finished(books: [dune(0.9, "9780441172719")], resultPath: "r2", review: false)),
                ], shelfOf: { _ in nil }, now: Date())
            let library = try store.library.entries()
            #expect(library.count == 1)
            #expect(library.first?.sightings.count == 2)
            #expect(library.first?.confidence == 0.9)
            #expect(library.first?.isbn13 == "9780441172719")
            #expect(try store.status.queueCounts(now: Date()).done == 2)
        }
    }

    @Test(
        "A provider pause releases the job without charging the attempt; retry requeues dead jobs",
        arguments: StoreKind.allCases)
    func releaseRefundsAndRetryRequeues(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try store.queue.queuePhoto("aa", at: "a.jpg")
            var job = try store.queue.claimOne()
            try store.queue.chargeAttempt(jobID: job.id, now: Date())
            try store.queue.finish(
                [JobOutcome(job: job, result: .released(.providerAuth, message: "bad key", refundAttempt: true))],
                shelfOf: { _ in nil }, now: Date())
            job = try store.queue.claimOne()
            #expect(job.attempts == 0)
            try store.queue.finish(
                [JobOutcome(job: job, result: .dead(.unreadableImage, message: "truncated"))],
                shelfOf: { _ in nil }, now: Date())
            #expect(try store.status.queueCounts(now: Date()).dead == 1)
            #expect(try store.status.jobProblems().first?.code == "unreadable_image")
            #expect(try store.queue.requeue(jobIDs: nil, now: Date()) == [job.id])
            #expect(try store.status.queueCounts(now: Date()).pending == 1)
        }
    }
}
