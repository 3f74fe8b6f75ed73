import Foundation
import ShelfCore
import ShelfStore
import ShelfTesting
import Testing

/// The behaviour every store behind the seams must have, checked on SQLite and on PostgreSQL alike: what one
/// worker or several see of the queue, the request budget and the providers' health.
@Suite(.postgresServer, .serialized)
struct StoreContractTests {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Queues `count` new photos and returns their job ids, in the order they were queued.
    private func queue(_ count: Int, in store: any ContractStore, from first: Int = 0, choice: String? = nil) throws
        -> [Int64]
    {
        try (first..<(first + count)).map { index in
            let outcome = try store.recordSighting(
                path: "/in/p\(index).jpg", relativePath: "p\(index).jpg", sha256: "sha\(index)",
                size: 100, mtime: Double(index), syncConflict: false, provider: "gemini",
                providerChoice: choice, image: nil, resultNode: nil, now: start)
            guard case .queued(let id) = outcome else { throw ContractFailure("p\(index) was not queued: \(outcome)") }
            return id
        }
    }

    @Test(
        "Jobs are claimed oldest first, a batch at a time, and only by the provider they asked for",
        arguments: StoreKind.allCases)
    func claimOrder(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let store = try site.open()
            let ids = try queue(5, in: store.queue)
            let chosen = try queue(1, in: store.queue, from: 5, choice: "ocr")
            let first = try store.queue.claim(
                limit: 2, provider: "gemini", choice: nil, owner: "a", lease: 60, now: start)
            let second = try store.queue.claim(
                limit: 2, provider: "gemini", choice: nil, owner: "a", lease: 60, now: start)
            #expect(first.map(\.id) == Array(ids[0..<2]))
            #expect(second.map(\.id) == Array(ids[2..<4]))
            #expect(first.first?.relativePath == "p0.jpg")
            #expect(first.first?.paths.map { [$0.path, $0.relativePath] } == [["/in/p0.jpg", "p0.jpg"]])
            #expect(Set(first.map(\.batchID)).count == 1 && first[0].batchID != second[0].batchID)
            let ocr = try store.queue.claim(limit: 5, provider: "ocr", choice: "ocr", owner: "a", lease: 60, now: start)
            #expect(ocr.map(\.id) == chosen)
            let rest = try store.queue.claim(
                limit: 5, provider: "gemini", choice: nil, owner: "a", lease: 60, now: start)
            #expect(rest.map(\.id) == [ids[4]])
        }
    }

    @Test("The same photo seen again, or at another path, is not a second job", arguments: StoreKind.allCases)
    func sightings(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let store = try site.open()
            _ = try queue(1, in: store.queue)
            let again = try store.queue.recordSighting(
                path: "/in/p0.jpg", relativePath: "p0.jpg", sha256: "sha0", size: 100, mtime: 0,
                syncConflict: false, provider: "gemini", providerChoice: nil, now: start)
            let copy = try store.queue.recordSighting(
                path: "/in/copy.jpg", relativePath: "copy.jpg", sha256: "sha0", size: 100, mtime: 5,
                syncConflict: false, provider: "gemini", providerChoice: nil, now: start)
            #expect(again == .unchanged)
            #expect(copy == .knownPhoto(sha256: "sha0"))
            #expect(try store.queue.knownSighting(path: "/in/copy.jpg")?.sha256 == "sha0")
            let job = try #require(
                try store.queue.claim(limit: 5, provider: "gemini", choice: nil, owner: "a", lease: 60, now: start)
                    .first)
            #expect(Set(job.paths.map(\.path)) == ["/in/p0.jpg", "/in/copy.jpg"])
        }
    }

    @Test(
        "Files recorded together are each what it would be alone, in their order, in one transaction",
        arguments: StoreKind.allCases)
    func sightingsTogether(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let store = try site.open()
            _ = try queue(1, in: store.queue)
            let before = store.activity
            let files = [
                HashedFile(path: "/in/new.jpg", relativePath: "new.jpg", sha256: "shaN", size: 7, mtime: 1),
                // as it was
                HashedFile(path: "/in/p0.jpg", relativePath: "p0.jpg", sha256: "sha0", size: 100, mtime: 0),
                HashedFile(path: "/in/new copy.jpg", relativePath: "new copy.jpg", sha256: "shaN", size: 7, mtime: 2),
                HashedFile(path: "/in/moved.jpg", relativePath: "moved.jpg", sha256: "sha0", size: 100, mtime: 3),
                HashedFile(path: "/in/twice.jpg", relativePath: "twice.jpg", sha256: "shaT1", size: 5, mtime: 4),
                HashedFile(path: "/in/twice.jpg", relativePath: "twice.jpg", sha256: "shaT2", size: 6, mtime: 5),
            ]
            let outcomes = try store.queue.recordSightings(
                files, provider: "gemini", providerChoice: nil, resultNode: nil, now: start)
            #expect(store.activity.writeTransactions - before.writeTransactions == 1)
            guard case .queued(let newJob) = outcomes[0], case .queued(let twiceJob) = outcomes[4] else {
                Issue.record("new content was not queued: \(outcomes)"); return
            }
            #expect(Array(outcomes[1...3]) == [.unchanged, .knownPhoto(sha256: "shaN"), .knownPhoto(sha256: "sha0")])
            #expect(outcomes[5] == outcomes[4], "a path given twice is its last content")
            #expect(try store.queue.knownSighting(path: "/in/twice.jpg")?.sha256 == "shaT2")
            #expect(
                try store.queue.knownPhotos(among: ["shaN", "sha0", "shaT1", "shaT2", "other"]) == [
                    "shaN", "sha0", "shaT2",
                ])
            let claimed = try store.queue.claim(
                limit: 5, provider: "gemini", choice: nil, owner: "a", lease: 60, now: start)
            #expect(claimed.map(\.id) == [claimed[0].id, newJob, twiceJob])
            #expect(
                claimed.first { $0.id == newJob }.map { Set($0.paths.map(\.relativePath)) } == [
                    "new.jpg", "new copy.jpg",
                ])
            #expect(claimed.first { $0.id == newJob }?.relativePath == "new.jpg")
        }
    }

    @Test(
        "Workers claiming at the same time never get the same job, and together get every one",
        arguments: StoreKind.allCases)
    func concurrentClaimers(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let ids = try queue(60, in: try site.open().queue)
            let workers = try (0..<4).map { _ in try site.open() }
            let claimed = try onThreads(workers.count) { worker in
                var mine: [Int64] = []
                while true {
                    let batch = try workers[worker].queue.claim(
                        limit: 3, provider: "gemini", choice: nil, owner: "worker\(worker)",
                        lease: 60, now: start)
                    if batch.isEmpty { return mine }
                    mine += batch.map(\.id)
                }
            }
            let all = claimed.flatMap { $0 }
            #expect(all.count == Set(all).count, "a job was claimed twice")
            #expect(Set(all) == Set(ids))
        }
    }

    @Test(
        "A lease that runs out without heartbeats gives the job to another worker, attempts kept",
        arguments: StoreKind.allCases)
    func leaseExpiry(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let (first, second) = (try site.open(), try site.open())
            let ids = try queue(1, in: first.queue)
            let job = try #require(
                try first.queue.claim(limit: 1, provider: "gemini", choice: nil, owner: "a", lease: 30, now: start)
                    .first)
            #expect(try first.queue.chargeAttempt(jobID: job.id, now: start) == 1)
            #expect(
                try second.queue.claim(
                    limit: 1, provider: "gemini", choice: nil, owner: "b", lease: 30,
                    now: start.addingTimeInterval(29)
                ).isEmpty)
            let taken = try second.queue.claim(
                limit: 1, provider: "gemini", choice: nil, owner: "b", lease: 30, now: start.addingTimeInterval(31))
            #expect(taken.map(\.id) == ids)
            #expect(taken.first?.attempts == 1)
        }
    }

    @Test("A heartbeat extends its owner's lease, and only its owner's", arguments: StoreKind.allCases)
    func heartbeatExtends(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let (holder, other) = (try site.open(), try site.open())
            let ids = try queue(1, in: holder.queue)
            _ = try holder.queue.claim(limit: 1, provider: "gemini", choice: nil, owner: "a", lease: 30, now: start)
            // Not b's lease:
            try other.queue.heartbeat(jobIDs: ids, owner: "b", lease: 600, now: start.addingTimeInterval(20))
            try holder.queue.heartbeat(jobIDs: ids, owner: "a", lease: 30, now: start.addingTimeInterval(20))
            #expect(
                try other.queue.claim(
                    limit: 1, provider: "gemini", choice: nil, owner: "b", lease: 30,
                    now: start.addingTimeInterval(45)
                ).isEmpty)
            #expect(
                try other.queue.claim(
                    limit: 1, provider: "gemini", choice: nil, owner: "b", lease: 30,
                    now: start.addingTimeInterval(51)
                ).map(\.id) == ids)
        }
    }

    @Test(
        "A failed job is due again at its retry time; a released one at once, its attempt refunded",
        arguments: StoreKind.allCases)
    func finishStates(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let store = try site.open()
            let ids = try queue(3, in: store.queue)
            let jobs = try store.queue.claim(
                limit: 3, provider: "gemini", choice: nil, owner: "a", lease: 60, now: start)
            for job in jobs { _ = try store.queue.chargeAttempt(jobID: job.id, now: start) }
            let retryAt = start.addingTimeInterval(300)
            try store.queue.finish(
                [
                    JobOutcome(
                        job: jobs[0], result: .failed(.providerUnavailable, message: "overloaded", retryAt: retryAt)),
                    JobOutcome(job: jobs[1], result: .released(nil, message: "stopping", refundAttempt: true)),
                    JobOutcome(
                        job: jobs[2], result: .finished(books: [], resultPath: "/results/p2.json", review: false)),
                ], shelfOf: { _ in nil }, now: start)
            #expect(try store.queue.nextRetryDate() == retryAt)
            #expect(try store.queue.jobID(resultPath: "/results/p2.json") == ids[2])
            let now = try store.queue.claim(
                limit: 3, provider: "gemini", choice: nil, owner: "a", lease: 3600, now: start.addingTimeInterval(1))
            #expect(now.map(\.id) == [ids[1]] && now.first?.attempts == 0)
            let later = try store.queue.claim(
                limit: 3, provider: "gemini", choice: nil, owner: "a", lease: 60, now: retryAt)
            #expect(later.map(\.id) == [ids[0]] && later.first?.attempts == 1)
        }
    }

    @Test(
        "A saved answer is found for its job, provider and model until marked unusable; its body when one was kept",
        arguments: StoreKind.allCases)
    func savedAnswers(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let store = try site.open()
            let id = try queue(1, in: store.queue)[0]
            let saved = try store.queue.recordResponse(
                jobID: id, sha256: "sha0", provider: "gemini", model: "flash", file: "r/1.json",
                bytes: 10, body: nil, latencyMs: 900, now: start)
            #expect(
                try store.queue.usableResponse(jobID: id, provider: "gemini", model: "flash")
                    == SavedResponse(id: saved, file: "r/1.json", latencyMs: 900))
            // Another worker, on another machine, reads the answer from the database.
            let answer = Array("{\"candidates\": []}".utf8)
            let kept = try store.queue.recordResponse(
                jobID: id, sha256: "sha0", provider: "gemini", model: "flash", file: "r/2.json",
                bytes: answer.count, body: answer, latencyMs: 800, now: start)
            #expect(
                try site.open().queue.usableResponse(jobID: id, provider: "gemini", model: "flash")
                    == SavedResponse(id: kept, file: "r/2.json", latencyMs: 800, body: answer))
            try store.queue.markResponseUnusable(id: kept)
            #expect(try store.queue.usableResponse(jobID: id, provider: "gemini", model: "pro") == nil)
            try store.queue.markResponseUnusable(id: saved)
            #expect(try store.queue.usableResponse(jobID: id, provider: "gemini", model: "flash") == nil)
        }
    }

    @Test(
        "Takers at the same moment share one turn: no more requests than the budget allows",
        arguments: StoreKind.allCases)
    func budgetAtOneMoment(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let budget = RequestBudget(requestsPerMinute: 10, dayEnds: { _ in .distantFuture })
            let takers = try (0..<4).map { _ in try site.open() }
            let moment = start
            let turns = try onThreads(takers.count) { taker in
                try (0..<5).map { _ in
                    try takers[taker].providers.takeRequestTurn(provider: "gemini", budget: budget, now: moment)
                }
            }.flatMap { $0 }
            #expect(turns.filter { $0 == .granted }.count == 1)
            #expect(
                turns.filter { $0 == .notBefore(moment.addingTimeInterval(budget.interval)) }.count == turns.count - 1)
        }
    }

    @Test("A daily limit is never exceeded by takers racing for it", arguments: StoreKind.allCases)
    func budgetPerDay(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            // 60,000 a minute: a turn every millisecond, so the daily limit is what stops them.
            let budget = RequestBudget(requestsPerMinute: 60_000, perDay: 25, dayEnds: { _ in .distantFuture })
            let takers = try (0..<4).map { _ in try site.open() }
            let granted = try onThreads(takers.count) { taker in
                var granted = 0
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline {
                    switch try takers[taker].providers.takeRequestTurn(provider: "gemini", budget: budget, now: nil) {
                    case .granted: granted += 1
                    case .notBefore: usleep(200)
                    case .dayUsedUp: return granted
                    }
                }
                return granted
            }
            #expect(granted.reduce(0, +) == 25)
        }
    }

    @Test(
        "Provider health is read back as saved, and an outage lets one probe through per interval",
        arguments: StoreKind.allCases)
    func healthRoundTrip(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let (first, second) = (try site.open(), try site.open())
            #expect(try first.providers.providerHealth("gemini") == nil)
            let backoff = ProviderHealth(
                name: "gemini", state: .backoff, until: start.addingTimeInterval(120), code: "rate_limited",
                message: "429", since: start, probes: 2)
            try first.providers.setProviderHealth(backoff, now: start)
            #expect(try second.providers.providerHealth("gemini") == backoff)
            #expect(
                try second.providers.takeTurn("gemini", ceiling: 300, now: start.addingTimeInterval(10))
                    == .wait(backoff))
            #expect(try second.providers.takeTurn("gemini", ceiling: 300, now: start.addingTimeInterval(121)) == .open)

            let down = try first.providers.recordOutage(
                "cloudflare", state: .unreachable, code: "network", message: "no route", probe: false,
                ceiling: 300, notBefore: nil, now: start)
            #expect(down.state == .unreachable && down.since == start)
            let due = try #require(down.until).addingTimeInterval(0.001) // the probe time has come
            #expect(try second.providers.takeTurn("cloudflare", ceiling: 300, now: due) == .probe)
            if case .wait = try first.providers.takeTurn("cloudflare", ceiling: 300, now: due) {
            } else {
                Issue.record("a second probe went out in the same interval")
            }

            try first.providers.setProviderHealth(
                ProviderHealth(name: "openai", state: .paused, code: "bad_key", message: "401"), now: start)
            try second.providers.liftPause("openai", now: start)
            #expect(try first.providers.providerHealth("openai")?.state == .ok)
        }
    }
}

struct ContractFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
