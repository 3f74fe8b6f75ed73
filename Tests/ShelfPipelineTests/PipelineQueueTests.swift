import Foundation
import Logging
import Synchronization
import ShelfConfig
import ShelfCore
import ShelfDigest
import ShelfEnrichment
import ShelfOutputs
import ShelfProviders
@testable import ShelfStore
import ShelfTesting
import Testing
@testable import ShelfPipeline

/// A queue in memory: hands out the batches it was given, one per claim, and remembers every commit.
final class FakeQueue: JobQueue {
    struct State {
        var batches: [[ClaimedJob]] = []
        var claims: [Int] = [] // the limit of each claim
        var commits: [[JobOutcome]] = []
        var attempts: [Int64: Int] = [:]
        var responses: Int64 = 0
        var sightings: [String: (size: Int64, mtime: Double, sha256: String, relativePath: String)] = [:]
        var recorded = 0 // sightings recorded
        var recordCalls = 0 // calls to recordSightings: one transaction each in a store
        var stages: [(jobIDs: [Int64], stage: JobStage)] = []
    }
    let path: String
    let state: Mutex<State>
    /// The library's works by title as a commit reads them in its transaction: what batches committed meanwhile left.
    let meanwhile: [String: [LibraryWork]]

    init(folder: URL, batches: [[ClaimedJob]] = [], meanwhile: [String: [LibraryWork]] = [:]) {
        path = folder.appendingPathComponent("shelfd.sqlite").path
        state = Mutex(State(batches: batches))
        self.meanwhile = meanwhile
    }

    var claims: [Int] { state.withLock { $0.claims } }
    var commits: [[JobOutcome]] { state.withLock { $0.commits } }

    // JobQueue
    func knownSightings(paths: [String]) throws -> [String: KnownSighting] {
        state.withLock { state in
            var known: [String: KnownSighting] = [:]
            for path in paths {
                if let s = state.sightings[path] {
                    known[path] = KnownSighting(size: s.size, mtime: s.mtime, sha256: s.sha256)
                }
            }
            return known
        }
    }
    func recordSightings(
        _ files: [HashedFile], provider: String, providerChoice: String?, resultNode: String?,
        roundQuiet: TimeInterval, now: Date
    ) throws -> [SightingOutcome] {
        if files.contains(where: { $0.image != nil }) { Issue.record("an image stored for a queue no one shares") }
        return state.withLock { state in
            state.recordCalls += 1
            return files.map { file in
                let known = state.sightings.values.contains { $0.sha256 == file.sha256 }
                state.sightings[file.path] = (file.size, file.mtime, file.sha256, file.relativePath)
                state.recorded += 1
                return known ? .knownPhoto(sha256: file.sha256) : .queued(jobID: Int64(state.recorded))
            }
        }
    }
    func recordPathProblem(
        path: String, code: PhotoError.Code, message: String, size: Int64?, mtime: Double?, now: Date
    ) throws {}
    func prunePathProblems(stillThere: (String) -> Bool) throws {}
    func claim(limit: Int, provider: String, choice: String?, owner: String, lease: TimeInterval, now: Date) throws
        -> [ClaimedJob]
    {
        state.withLock { state in
            state.claims.append(limit)
            return state.batches.isEmpty ? [] : Array(state.batches.removeFirst().prefix(limit))
        }
    }
    func nextRetryDate() throws -> Date? { nil }
    func heartbeat(jobIDs: [Int64], owner: String, lease: TimeInterval, now: Date) throws {}
    /// As the store does: the charge records the photo `asking`, the saved answer `matching`.
    func chargeAttempt(jobID: Int64, now: Date) throws -> Int {
        state.withLock {
            $0.stages.append(([jobID], .asking)); $0.attempts[jobID, default: 0] += 1; return $0.attempts[jobID]!
        }
    }
    func finish(settling settle: (CommitLookup) throws -> [JobOutcome], shelfOf: (ClaimedJob) -> String?, now: Date)
        throws -> FilesChange
    {
        let outcomes = try settle(
            CommitLookup { [meanwhile] titles, _ in meanwhile.filter { titles.contains($0.key) } })
        state.withLock { $0.commits.append(outcomes) }
        // As the store reports it: a finished photo's books are works changed (the fake has no rows: the jobs stand in).
        let finished = outcomes.filter { if case .finished = $0.result { true } else { false } }
        return FilesChange(works: Set(finished.map(\.job.id)), photos: Set(finished.map(\.job.sha256)))
    }
    func jobID(resultPath: String) throws -> Int64? { nil }
    func recordResponse(
        jobID: Int64, sha256: String, provider: String, model: String, file: String, bytes: Int,
        body: [UInt8]?, latencyMs: Int?, request: Bool, now: Date
    ) throws -> Int64 {
        state.withLock {
            $0.stages.append(([jobID], .matching)); $0.responses += 1; return $0.responses
        }
    }
    func usableResponse(jobID: Int64, provider: String, model: String) throws -> SavedResponse? { nil }
    func markResponseUnusable(id: Int64) throws {}
    func isRecheck(jobID: Int64) throws -> Bool { false }
    func awaitingCount(provider: String) throws -> Int { 0 }
    func requeueAwaiting(provider: String, oneMore: Bool, now: Date) throws -> [Int64] { [] }
    func recordStage(_ stage: JobStage, jobIDs: [Int64], now: Date) throws {
        state.withLock { $0.stages.append((jobIDs, stage)) }
    }
    /// One machine's queue: photos are read from their files.
    var isShared: Bool { false }
    func knownPhotos(among sha256s: [String]) throws -> Set<String> {
        state.withLock { state in Set(sha256s.filter { sha in state.sightings.values.contains { $0.sha256 == sha } }) }
    }
    func photoImage(sha256: String) throws -> [UInt8]? { nil }
    /// The stages recorded for one job, in order.
    func stages(of job: Int64) -> [JobStage] {
        state.withLock { $0.stages.filter { $0.jobIDs.contains(job) }.map(\.stage) }
    }
}

/// A library with no work and no review item: the pipeline's tests look at the queue.
struct EmptyLibrary: LibraryStore {
    func openReviewItems() throws -> [ReviewItem] { [] }
    func reviewItem(_ id: String) throws -> ReviewItem { throw CancellationError() }
    func decidedReadings(sha256: String) throws -> Set<String> { [] }
    func decide(_ id: String, _ verdict: ReviewVerdict, now: Date) throws -> ReviewResolution {
        throw CancellationError()
    }
    func entries() throws -> [LibraryDocument.Entry] { [] }
    func photoLocations(sha256: String) throws -> [String] { [] }
    func photoImage(sha256: String) throws -> [UInt8]? { nil }
}

/// The providers' health, kept in memory: fine unless set otherwise, a turn always open.
final class FakeProviders: ProviderHealthStore {
    private let health: Mutex<[String: ProviderHealth]>

    init(_ health: [ProviderHealth] = []) {
        self.health = Mutex(Dictionary(uniqueKeysWithValues: health.map { ($0.name, $0) }))
    }

    func providerHealth(_ name: String) throws -> ProviderHealth? { health.withLock { $0[name] } }
    func setProviderHealth(_ health: ProviderHealth, now: Date) throws {
        self.health.withLock { $0[health.name] = health }
    }
    func takeTurn(_ name: String, ceiling: TimeInterval, now: Date) throws -> ProviderTurn { .open }
    func recordOutage(
        _ name: String, state: ProviderHealth.State, code: String, message: String, probe: Bool,
        ceiling: TimeInterval, notBefore: Date?, now: Date
    ) throws -> ProviderHealth {
        ProviderHealth(name: name, state: state, code: code, message: message)
    }
    func recordRequest(provider: String, latencyMs: Int, outcome: String, now: Date) throws {}
    func liftPause(_ name: String, now: Date) throws {}
}

/// One machine's results: nothing kept in the store for another node to write.
struct NoSharedResults: SharedFilesStore {
    func unwritten(node: String, takingOthers: Bool, limit: Int) throws -> [StoredResult] { [] }
    func markWritten(jobID: Int64, path: String, now: Date) throws {}
    func filesVersion() throws -> Int64? { nil }
}

/// The scheduler's claim loop and a batch's commit, driven with a fake queue: no database, no network.
@Suite struct PipelineQueueTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-pipeline-\(UUID().uuidString)")

    /// A 640×480 shelf photo dropped at `incoming/path`; its bytes.
    func incomingPhoto(_ path: String, seed: Int) throws -> [UInt8] {
        let photo = JPEGFactory.shelf(width: 640, height: 480, seed: seed)
        let file = root.appendingPathComponent("incoming/" + path)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(photo).write(to: file)
        return photo
    }

    /// One batch: the photo written to `incoming/path` (job `id`) and one beside it that is no longer there
    /// (job `id + 1`).
    func batchWithVanishedPhoto(_ path: String, id: Int64, seed: Int) throws -> FakeQueue {
        let photo = try incomingPhoto(path, seed: seed)
        let folder = (path as NSString).deletingLastPathComponent
        let gone = job(
            id + 1, folder.isEmpty ? "gone.jpg" : folder + "/gone.jpg", sha256: String(repeating: "ab", count: 32))
        return FakeQueue(folder: root, batches: [[job(id, path, sha256: SHA256.hex(of: photo)), gone]])
    }

    /// Dune, read surely.
    static let dune = ModelAnswer(books: [Detection(title: "Dune", author: "Frank Herbert", confidence: 0.95)])

    func settings() -> PipelineSettings {
        PipelineSettings(
            batchSize: 4, concurrency: 2, reviewThreshold: 0.6, maxAttempts: 3, moveAfter: false,
            incoming: root.appendingPathComponent("incoming"), results: root.appendingPathComponent("results"),
            processed: root.appendingPathComponent("processed"),
            libraryFile: root.appendingPathComponent("library.json"), review: root.appendingPathComponent("review"),
            responses: root.appendingPathComponent("state/responses"),
            filesLock: root.appendingPathComponent("state/files.lock"))
    }

    func pipeline(
        _ queue: FakeQueue, providers: FakeProviders = FakeProviders(), replies: [Result<ModelAnswer, PhotoError>] = []
    ) -> Pipeline {
        let provider = ScriptedProvider("gemini", replies)
        return Pipeline(
            settings: settings(), store: queue, library: EmptyLibrary(), providers: providers,
            sharedResults: NoSharedResults(),
            lineup: .single(ProviderChannel(provider, kind: .gemini, limits: nil)), logger: Logger(label: "test"),
            time: .system)
    }

    @Test("A pass over an empty queue claims once, up to a batch, and stops idle")
    func emptyQueue() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let queue = FakeQueue(folder: root)
        let summary = await pipeline(queue).processQueue(untilIdle: true, keepsLeases: false)
        #expect(summary.stop == .idle)
        #expect(queue.claims == [4])
        #expect(queue.commits.isEmpty)
    }

    @Test("A paused provider ends a pass before anything is claimed")
    func pausedProvider() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let paused = ProviderHealth(
            name: "gemini", state: .paused, code: "provider_auth", message: "the API key was refused")
        let queue = FakeQueue(folder: root, batches: [[job(1, "a.jpg", sha256: "00")]])
        let summary = await pipeline(queue, providers: FakeProviders([paused])).processQueue(
            untilIdle: true, keepsLeases: false)
        #expect(summary.stop == .providerPaused("the API key was refused"))
        #expect(queue.claims.isEmpty)
        #expect(queue.commits.isEmpty)
    }

    @Test(
        "Ingest hashes a new photo once and queues it; the same file unchanged is not read again; a copy is a sighting")
    func ingest() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let photo = JPEGFactory.shelf(width: 320, height: 240, seed: 5)
        let incoming = root.appendingPathComponent("incoming/hall")
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        let first = incoming.appendingPathComponent("one.jpg"), copy = incoming.appendingPathComponent("copy.jpg")
        try Data(photo).write(to: first)
        try Data(photo).write(to: copy)
        let queue = FakeQueue(folder: root)
        let pipeline = pipeline(queue)

        #expect(pipeline.ingest(path: first.path) == .queued(jobID: 1))
        let seen = try #require(queue.state.withLock { $0.sightings[first.path] })
        #expect(seen.sha256 == SHA256.hex(of: photo))
        #expect(seen.relativePath == "hall/one.jpg")
        #expect(pipeline.ingest(path: first.path) == .unchanged)
        #expect(pipeline.ingest(path: copy.path) == .knownPhoto(sha256: SHA256.hex(of: photo)))
        #expect(queue.state.withLock { $0.recorded } == 2, "the unchanged file was not recorded again")
    }

    @Test("A burst of 40 new photos is recorded in two calls to the queue (32 files at most a transaction), in order")
    func burstIngest() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let incoming = root.appendingPathComponent("incoming")
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        let files = try (0..<40).map { index in
            let url = incoming.appendingPathComponent(String(format: "IMG_%02d.jpg", index))
            try Data(JPEGFactory.shelf(width: 64, height: 48, seed: 300 + index)).write(to: url)
            return Pipeline.IncomingFile(path: url.path)
        }
        let queue = FakeQueue(folder: root)
        let outcomes = pipeline(queue).ingest(files)
        #expect(outcomes == (1...40).map { .queued(jobID: Int64($0)) }, "each file its own job, in the order given")
        #expect(queue.state.withLock { $0.recordCalls } == 2)
        #expect(queue.state.withLock { $0.sightings.count } == 40)
    }

    @Test("A claimed batch is read, its result written, and committed once with every photo's outcome")
    func batchCommit() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let queue = try batchWithVanishedPhoto("living-room/shelf.jpg", id: 1, seed: 3)

        let pipeline = pipeline(queue, replies: [.success(Self.dune)])
        let summary = await pipeline.processQueue(untilIdle: true, keepsLeases: false)

        #expect(summary.stop == .idle)
        let commits = queue.commits
        try #require(commits.count == 1, "one commit for the whole batch")
        let outcomes = Dictionary(uniqueKeysWithValues: commits[0].map { ($0.job.id, $0.result) })
        guard case .finished(let books, let resultPath, _) = outcomes[1] else {
            Issue.record("the photo on disk is not finished: \(String(describing: outcomes[1]))"); return
        }
        #expect(books.map(\.title) == ["Dune"])
        #expect(resultPath == root.appendingPathComponent("results/living-room/shelf.json").path)
        #expect(FileManager.default.fileExists(atPath: resultPath ?? ""))
        guard case .dead(let code, _) = outcomes[2] else {
            Issue.record("the vanished photo is not dead: \(String(describing: outcomes[2]))"); return
        }
        #expect(code == .photoVanished)
        pipeline.files.flush() // the commit handed library.json to the writer, off its path
        #expect(
            FileManager.default.fileExists(atPath: root.appendingPathComponent("library.json").path),
            "library.json follows the commit")
    }

    @Test(
        "A work another batch committed meanwhile is seen inside the commit: the title read alone on its shelf is that work, its result says so"
    )
    func worksCommittedMeanwhile() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let photo = try incomingPhoto("living-room/again.jpg", seed: 4)
        // Not in the library when the photo was read: committed by another batch while it was being read.
        let dune = LibraryWork(
            key: "title:dune|herbert", title: "Dune", author: "Frank Herbert", isbn13: nil, isbn10: nil,
            match: nil, shelves: ["living-room"], lastShelf: "living-room")
        let queue = FakeQueue(
            folder: root, batches: [[job(1, "living-room/again.jpg", sha256: SHA256.hex(of: photo))]],
            meanwhile: ["dune": [dune]])
        let answer = ModelAnswer(books: [Detection(title: "Dune", author: nil, confidence: 0.4)])
        _ = await pipeline(queue, replies: [.success(answer)]).processQueue(untilIdle: true, keepsLeases: false)

        guard case .finished(let books, let resultPath, _)? = queue.commits.first?.first?.result else {
            Issue.record("not finished: \(queue.commits)"); return
        }
        #expect(books.map(\.status) == [.verified] && books.first?.author == "Frank Herbert", "\(books)")
        let result = try JSONStyle.decoder().decode(
            ResultDocument.self, from: Data(contentsOf: URL(fileURLWithPath: try #require(resultPath))))
        #expect(result.books.first?.status == .verified)
        #expect(
            result.books.first?.notes?.contains { $0.hasPrefix("library_sighting: «Dune»") } == true, "\(result.books)")
    }

    @Test(
        "An ISBN another photo of the batch verified, or the library holds, is that work: no twin waits for review, the photo is done"
    )
    func editionVerifiedElsewhere() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        var jobs: [ClaimedJob] = []
        for (id, seed) in [(Int64(1), 5), (2, 6), (3, 7)] {
            let photo = try incomingPhoto("den/\(id).jpg", seed: seed)
            jobs.append(job(id, "den/\(id).jpg", sha256: SHA256.hex(of: photo)))
        }
        // Emma is in the library, seen on another shelf; Dune is verified by whichever photo reads it surely.
        let emma = LibraryWork(
            key: "title:emma|austen", title: "Emma", author: "Jane Austen", isbn13: "9780141439587", isbn10: nil,
            match: nil, shelves: ["attic"], lastShelf: "attic")
        let queue = FakeQueue(folder: root, batches: [jobs], meanwhile: [LibraryWork.isbnKey("9780141439587"): [emma]])
        let sure = ModelAnswer(books: [
            Detection(title: "Dune", author: "Frank Herbert", isbn: "9780441172719", confidence: 0.95)
        ])
        let unsure = ModelAnswer(books: [Detection(title: "Dune", isbn: "9780441172719", confidence: 0.3)])
        let emmaUnsure = ModelAnswer(books: [Detection(title: "Emma?", isbn: "9780141439587", confidence: 0.3)])
        _ = await pipeline(queue, replies: [.success(sure), .success(unsure), .success(emmaUnsure)])
            .processQueue(untilIdle: true, keepsLeases: false)

        let outcomes = try #require(queue.commits.first)
        #expect(outcomes.count == 3)
        for outcome in outcomes {
            guard case .finished(let books, _, let review) = outcome.result else {
                Issue.record("not finished: \(outcome.result)"); continue
            }
            #expect(!review, "nothing waits for a person: \(books)")
            #expect(books.map(\.status) == [.verified], "\(books)")
        }
        let all = outcomes.flatMap { outcome -> [Book] in
            if case .finished(let books, _, _) = outcome.result { books } else { [] }
        }
        #expect(Set(all.map(\.title)) == ["Dune", "Emma"])
        #expect(all.filter { $0.notes?.contains { $0.hasSuffix("its ISBN 9780441172719") } == true }.count == 1)
        #expect(
            all.contains {
                $0.title == "Emma" && $0.author == "Jane Austen"
                    && $0.notes?.first?.hasPrefix("library_sighting") == true
            })
    }

    @Test("A photo's steps are recorded in the queue in order, each once: asking the provider, matching, writing")
    func stagesInOrder() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let queue = try batchWithVanishedPhoto("hall.jpg", id: 7, seed: 4)

        _ = await pipeline(queue, replies: [.success(Self.dune)]).processQueue(untilIdle: true, keepsLeases: false)

        // `preparing` is the claim's own (the store sets it as it leases the job).
        #expect(queue.stages(of: 7) == [.asking, .matching, .writing])
        #expect(queue.stages(of: 8) == [], "a photo that vanished never reached the provider")
        #expect(queue.commits.count == 1)
    }

    private func job(_ id: Int64, _ relative: String, sha256: String) -> ClaimedJob {
        ClaimedJob(
            id: id, sha256: sha256, attempts: 0, batchID: 1, relativePath: relative,
            paths: [PhotoPath(path: root.appendingPathComponent("incoming/\(relative)").path, relativePath: relative)])
    }
}
