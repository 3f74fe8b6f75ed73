import AsyncAlgorithms
import Foundation
import Synchronization
import Logging
import ShelfCore
import ShelfDigest
import ShelfEnrichment
import ShelfImaging
import ShelfOutputs
import ShelfProviders
import ShelfStore

/// Turns queued photos into results: claims batches, asks the provider (never twice for a saved answer),
/// checks the books, writes results and the library, and commits each batch as one unit.
package final class Pipeline: Sendable {
    package let settings: PipelineSettings
    /// The queue: sightings, claims, attempts, saved answers, and one commit per batch.
    package let store: any JobQueue
    /// The library and its review queue (`Store.library`): the readings a person already decided, and what
    /// library.json and review/ are written from.
    package let library: any LibraryStore
    /// The providers' health, shared by every shelfd process (`Store.providers`).
    package let providers: any ProviderHealthStore
    /// A shared store's result documents, written here when this node writes them, and the files' change counter
    /// (`Store.results`).
    package let sharedResults: any SharedFilesStore
    /// Shelves' rounds (`Store.shelves`), closed on this pipeline's clock; nil where no shelf is kept (a test's fake).
    package let rounds: (any ShelfRoundStore)?
    package let lineup: Lineup
    /// Set when this process runs with `--provider`: it takes only the jobs that asked for that provider.
    package let choice: ProviderName?
    /// Looks books up in the configured sources and decides verified or needs_review.
    package let enricher: Enricher
    package let logger: Logger
    package let owner: String
    /// The date for records and the clock for every wait: leases, backoff, probes, rate turns, Batch API job polls.
    package let time: TimeSource
    /// Called once when the queue has been idle a while: the daemon gives memory back to the system.
    package let onIdle: @Sendable () -> Void
    let slots: RequestSlots
    package let shutdown = ShutdownFlag()
    package let wake: WorkSignal
    /// The scheduler's loop beats here; the systemd watchdog is fed only while it does.
    package let pulse: LoopPulse
    private let jobsInHand = Mutex<Set<Int64>>([])
    /// Photos found but not recorded in the queue because the database refused (`run` says so and exits 3): they
    /// stay in `incoming/` and the next scan finds them again.
    /// How many, and the first few by name (a daemon running for months must not keep every one).
    private let unrecordedPhotos = Mutex<(count: Int, first: [String])>((0, []))
    package var unrecorded: (count: Int, first: [String]) { unrecordedPhotos.withLock { $0 } }
    /// Shared store: the `filesVersion` library.json, review/ and exports/ were last written at.
    let filesWritten = Mutex<Int64?>(nil)
    /// Wakes the loop that keeps the files current on a shared store (`SharedFilesService`) before its next turn:
    /// for whatever learns of another process's change first (a LISTEN/NOTIFY listener).
    package let filesWake: WorkSignal
    /// Notified when this process's commit changed the library's works: wakes what follows them (`watch`'s push to
    /// Hardcover) before its next look.
    package let worksChanged: WorkSignal
    /// library.json, review/ and exports/: each commit hands its change here and goes on.
    package let files: FilesWriter

    package init(
        settings: PipelineSettings, store: any JobQueue, library: any LibraryStore, providers: any ProviderHealthStore,
        sharedResults: any SharedFilesStore, rounds: (any ShelfRoundStore)? = nil, lineup: Lineup,
        choice: ProviderName? = nil, enricher: Enricher? = nil,
        logger: Logger, owner: String = ProcessIdentity.current, time: TimeSource,
        onIdle: @escaping @Sendable () -> Void = {}
    ) {
        self.settings = settings; self.store = store; self.library = library; self.providers = providers
        self.sharedResults = sharedResults
        self.rounds = rounds
        self.lineup = lineup; self.choice = choice
        self.enricher = enricher ?? Enricher(sources: [], reviewThreshold: settings.reviewThreshold)
        self.logger = logger; self.owner = owner; self.time = time; self.onIdle = onIdle
        slots = RequestSlots(limit: settings.concurrency)
        wake = WorkSignal(clock: time.clock); filesWake = WorkSignal(clock: time.clock)
        worksChanged = WorkSignal(clock: time.clock); pulse = LoopPulse(clock: time.clock)
        files = FilesWriter(
            files: LibraryFiles(
                libraryFile: settings.libraryFile, review: settings.review, processed: settings.processed,
                exports: settings.exports, exclusiveShelf: settings.exclusiveShelf, maxPixels: settings.maxPixels,
                filesLock: settings.filesLock, store: library, logger: logger), time: time)
    }

    // MARK: Shelves

    /// Closes the shelves' rounds that are quiet and read, and hands what that changed to the files writer.
    package func closeDueRounds() {
        guard let rounds else { return }
        do {
            let change = try rounds.closeDue(quiet: settings.roundQuiet, now: time.now)
            if change.changesLibrary, settings.writesFiles { files.changed(change) }
        } catch {
            logger.error("Cannot close the shelves' rounds", metadata: ["error": "\(error)"])
        }
    }

    /// `watch`: closes rounds as they become due, looking every `interval` on this pipeline's clock, until cancelled.
    package func keepClosingRounds(every interval: Duration = .seconds(30)) async {
        closeDueRounds()
        for await _ in AsyncTimerSequence(interval: interval, clock: time.clock) { closeDueRounds() }
    }

    /// Graceful stop: the scheduler claims nothing more, photos waiting for a request slot go back to the
    /// queue, requests in flight finish.
    package func stop() {
        shutdown.set()
        wake.notify()
    }

    // MARK: Ingest

    /// A new photo's image as the provider is sent it (the accurate provider's, for hybrid), stored with its job so
    /// that workers on other machines, which cannot read `incoming/` here, can read the photo too. Prepared before the
    /// write, off the lock; nil when it cannot be prepared (the worker that claims it finds out why, as it would with
    /// the file).
    func imageForOtherWorkers(of bytes: [UInt8], relative: String) -> [UInt8]? {
        guard let preset = lineup.channels.last?.provider.preset else { return nil }
        do {
            return try Preprocessor.prepare(bytes, preset: preset, maxPixels: settings.maxPixels).jpeg
        } catch {
            logger.warning(
                "The photo's image was not stored for other workers",
                metadata: ["photo.path": "\(relative)", "error": "\(error)"])
            return nil
        }
    }

    /// A stable file to record, the folder its relative path is taken from (nil: incoming/), and whether it is a
    /// sync tool's conflict copy.
    package struct IncomingFile: Sendable {
        package var path: String
        package var base: URL?
        package var syncConflict: Bool
        package init(path: String, relativeTo base: URL? = nil, syncConflict: Bool = false) {
            self.path = path; self.base = base; self.syncConflict = syncConflict
        }
    }

    /// Hashes a stable file and records it: new content becomes a job, a known photo a sighting.
    /// Files that cannot be read are recorded as path problems, shown by `status`.
    @discardableResult
    package func ingest(path: String, relativeTo base: URL? = nil, syncConflict: Bool = false) -> SightingOutcome? {
        ingest([IncomingFile(path: path, relativeTo: base, syncConflict: syncConflict)])[0]
    }

    /// Files recorded in one transaction at most: a burst from a phone's sync is a few round trips a part, and the
    /// first photos are queued before the last are hashed.
    static let filesPerIngest = 32

    /// Hashes stable files and records them, a part at a time, each part in one transaction (one outcome per file,
    /// nil for a file not recorded). Only files whose size or time changed since they were hashed are read again.
    @discardableResult
    package func ingest(_ files: [IncomingFile]) -> [SightingOutcome?] {
        stride(from: 0, to: files.count, by: Self.filesPerIngest).flatMap { start in
            ingestPart(Array(files[start..<min(start + Self.filesPerIngest, files.count)]))
        }
    }

    private func ingestPart(_ files: [IncomingFile]) -> [SightingOutcome?] {
        var outcomes = [SightingOutcome?](repeating: nil, count: files.count)
        let relatives = files.map { Self.relativePath(of: $0.path, under: $0.base ?? settings.incoming) }
        var seen: [(index: Int, size: Int64, mtime: Double)] = []
        for (index, file) in files.enumerated() {
            guard let (size, mtime) = Self.sizeAndMTime(file.path) else {
                if errno != ENOENT { // gone before it was taken: nothing to do
                    record(
                        pathProblem: file.path, code: .permissionDenied,
                        message: "cannot read \(relatives[index]): \(String(cString: strerror(errno)))")
                }
                continue
            }
            seen.append((index, size, mtime))
        }
        let known: [String: KnownSighting]
        do {
            known = try store.knownSightings(paths: seen.map { files[$0.index].path })
        } catch {
            logger.error("Cannot read the queue", metadata: ["error": "\(error)"])
            return outcomes
        }
        var hashed: [(index: Int, file: HashedFile)] = []
        for (index, size, mtime) in seen {
            let file = files[index]
            if let sighting = known[file.path], sighting.size == size, sighting.mtime == mtime {
                outcomes[index] = .unchanged
                continue
            }
            switch PhotoFile.read(file.path) {
            case .success(let bytes):
                hashed.append(
                    (
                        index,
                        HashedFile(
                            path: file.path, relativePath: relatives[index], sha256: SHA256.hex(of: bytes),
                            size: size, mtime: mtime, syncConflict: file.syncConflict)
                    ))
            case .failure(let error):
                if error.code != .photoVanished {
                    record(pathProblem: file.path, code: error.code, message: "\(relatives[index]): \(error.message)")
                }
            }
        }
        guard !hashed.isEmpty else { return outcomes }
        if store.isShared { storeImagesForOtherWorkers(&hashed) }
        do {
            let recorded = try store.recordSightings(
                hashed.map(\.file), provider: lineup.name, providerChoice: choice?.rawValue,
                resultNode: settings.writesFiles ? settings.node : nil,
                roundQuiet: settings.roundQuiet, now: time.now)
            for ((index, file), outcome) in zip(hashed, recorded) {
                outcomes[index] = outcome
                log(outcome, of: file)
            }
            if recorded.contains(where: { if case .queued = $0 { true } else { false } }) { wake.notify() }
        } catch {
            logger.error(
                "Cannot record photos",
                metadata: [
                    "photo.path": "\(hashed[0].file.relativePath)",
                    "photos": "\(hashed.count)", "error": "\(error)",
                ])
            unrecordedPhotos.withLock { unrecorded in
                unrecorded.count += hashed.count
                unrecorded.first.append(
                    contentsOf: hashed.prefix(3 - min(3, unrecorded.first.count)).map(\.file.relativePath))
            }
        }
        return outcomes
    }

    /// Shared store: new photos' images, for workers that cannot read the files. The file is read again for it
    /// (from the page cache, just hashed), so a part's photos are never all held at once.
    private func storeImagesForOtherWorkers(_ hashed: inout [(index: Int, file: HashedFile)]) {
        guard let known = try? store.knownPhotos(among: hashed.map(\.file.sha256)) else { return }
        for position in hashed.indices where !known.contains(hashed[position].file.sha256) {
            let file = hashed[position].file
            guard case .success(let bytes) = PhotoFile.read(file.path), SHA256.hex(of: bytes) == file.sha256 else {
                continue
            }
            hashed[position].file.image = imageForOtherWorkers(of: bytes, relative: file.relativePath)
        }
    }

    private func log(_ outcome: SightingOutcome, of file: HashedFile) {
        switch outcome {
        case .queued(let jobID):
            logger.info(
                "Photo queued",
                metadata: [
                    "photo.path": "\(file.relativePath)", "photo.sha256": "\(file.sha256.prefix(12))",
                    "job.id": "\(jobID)", "event": "photo_queued",
                ])
        case .knownPhoto:
            logger.info(
                "Photo already known: recorded as a sighting",
                metadata: [
                    "photo.path": "\(file.relativePath)", "photo.sha256": "\(file.sha256.prefix(12))",
                    "event": "sighting",
                ])
        case .unchanged: break
        }
        if file.syncConflict, outcome != .unchanged {
            logger.warning("Sync-conflict copy taken", metadata: ["photo.path": "\(file.relativePath)"])
        }
    }

    /// After a full scan: problems of files that are gone no longer need a person.
    package func forgetVanishedProblems() {
        try? store.prunePathProblems { FileManager.default.fileExists(atPath: $0) }
    }

    private func record(pathProblem path: String, code: PhotoError.Code, message: String) {
        logger.warning("Photo cannot be read", metadata: ["photo.path": "\(path)", "reason": "\(message)"])
        try? store.recordPathProblem(path: path, code: code, message: message, size: nil, mtime: nil, now: time.now)
    }

    static func relativePath(of path: String, under base: URL) -> String {
        let prefix =
            base.standardizedFileURL.path.hasSuffix("/")
            ? base.standardizedFileURL.path : base.standardizedFileURL.path + "/"
        let full = URL(fileURLWithPath: path).standardizedFileURL.path
        return full.hasPrefix(prefix)
            ? String(full.dropFirst(prefix.count)) : URL(fileURLWithPath: path).lastPathComponent
    }

    /// A file's size and modification time, as sightings record them; nil (with `errno` set) when it cannot be seen.
    static func sizeAndMTime(_ path: String) -> (size: Int64, mtime: Double)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (Int64(info.st_size), Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    // MARK: Provider health

    /// Where this pipeline's providers' health is kept and written.
    var health: StoredProviderHealth {
        StoredProviderHealth(store: providers, probeMax: settings.probeMax, time: time, logger: logger)
    }

    func setProviderHealth(_ health: ProviderHealth) { self.health.set(health) }

    // MARK: Heartbeat

    /// Jobs claimed by this process and not yet committed: their leases are kept alive.
    var photosInHand: Int { jobsInHand.withLock { $0.count } }
    func holdLeases(on ids: [Int64]) { jobsInHand.withLock { $0.formUnion(ids) } }
    func dropLeases(on ids: [Int64]) { jobsInHand.withLock { $0.subtract(ids) } }

    /// Extends the leases of every job in hand until cancelled.
    package func heartbeatLoop() async {
        for await _ in AsyncTimerSequence(interval: .seconds(max(5, settings.lease / 6)), clock: time.clock) {
            let ids = Array(jobsInHand.withLock { $0 })
            do { try store.heartbeat(jobIDs: ids, owner: owner, lease: settings.lease, now: time.now) } catch {
                logger.warning("Lease heartbeat failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// The providers' health in the database, shared by every shelfd process: the one place it is written from
/// the pipeline (a request's outcome, a daily limit reached, a paused provider asked again).
struct StoredProviderHealth: ProviderHealthRecorder {
    let store: any ProviderHealthStore
    /// The longest wait between two probes of a provider that is down.
    let probeMax: TimeInterval
    let time: TimeSource
    package let logger: Logger

    func turn(_ provider: String) -> ProviderTurn {
        do { return try store.takeTurn(provider, ceiling: probeMax, now: time.now) } catch {
            logger.error("Cannot read the provider's state", metadata: ["error": "\(error)"])
            return .open
        }
    }

    func current(_ provider: String) -> ProviderHealth? {
        try? store.providerHealth(provider)
    }

    func requested(_ provider: String, latency: Duration, outcome: String) {
        try? store.recordRequest(provider: provider, latencyMs: latency.milliseconds, outcome: outcome, now: time.now)
    }

    func answered(_ provider: String) {
        guard let health = try? store.providerHealth(provider), health.state != .ok else { return }
        if health.isOutage {
            logger.notice(
                "Provider back",
                metadata: [
                    "provider": "\(provider)", "event": "provider_back",
                    "down_since": "\(health.since.map { "\($0)" } ?? "-")",
                ])
        }
        set(ProviderHealth(name: provider, state: .ok))
    }

    /// An outage, a quota, a rate limit or a configuration problem concerns the provider, not the photo: mark
    /// it down (probed at growing intervals), or pause it (until the given time, or until the configuration
    /// changes). `probe`: the failed request was the probe of a provider already down.
    @discardableResult
    func failed(_ provider: String, error: PhotoError, probe: Bool) -> ProviderHealth? {
        switch error.disposition {
        case .retry(let after) where FailurePolicy.isOutage(error):
            return recordOutage(provider, error: error, probe: probe, retryAfter: after)
        case .providerWait(let until):
            let health = ProviderHealth(
                name: provider, state: .backoff, until: until, code: error.code.rawValue,
                message: error.message)
            set(health)
            return health
        case .providerBroken:
            let health = ProviderHealth(
                name: provider, state: .paused, until: nil, code: error.code.rawValue,
                message: error.message)
            set(health)
            return health
        case .retry, .dead:
            return nil
        }
    }

    func set(_ health: ProviderHealth) {
        do { try store.setProviderHealth(health, now: time.now) } catch {
            logger.error("Cannot record the provider's state", metadata: ["error": "\(error)"])
        }
        if health.state == .paused {
            logger.error(
                "Provider paused", metadata: ["provider": "\(health.name)", "reason": "\(health.message ?? "")"])
        } else if health.state == .backoff {
            logger.warning(
                "Provider backing off",
                metadata: [
                    "provider": "\(health.name)", "until": "\(health.until.map { "\($0)" } ?? "-")",
                    "reason": "\(health.message ?? "")",
                ])
        }
    }

    /// No connection, DNS, a timeout or a server error after the quick retries: the provider's trouble, not the
    /// photo's. The provider is marked down and probed with one real request at growing intervals.
    private func recordOutage(_ provider: String, error: PhotoError, probe: Bool, retryAfter: TimeInterval?)
        -> ProviderHealth?
    {
        let state: ProviderHealth.State = error.code == .network ? .unreachable : .unavailable
        let now = time.now
        do {
            let health = try store.recordOutage(
                provider, state: state, code: error.code.rawValue,
                message: error.shortReason, probe: probe,
                ceiling: probeMax,
                notBefore: retryAfter.map { now.addingTimeInterval($0) }, now: now)
            guard probe || health.since == now else { return health } // a request already in flight: nothing new
            logger.warning(
                probe ? "Provider still down" : "Provider down; photos wait for it without using an attempt",
                metadata: [
                    "provider": "\(provider)", "state": "\(health.state.rawValue)",
                    "reason": "\(health.message ?? "")",
                    "next_try": "\(health.until.map { "\($0)" } ?? "-")",
                    "event": "provider_\(health.state.rawValue)",
                ])
            return health
        } catch {
            logger.error("Cannot record the provider's state", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
