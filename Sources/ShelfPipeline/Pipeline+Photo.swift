import Foundation
import Logging
import ShelfCore
import ShelfDigest
import ShelfEnrichment
import ShelfImaging
import ShelfOutputs
import ShelfProviders
import ShelfStore
import Synchronization

/// The attempt a photo is on: charged once, just before the first request that costs anything.
final class AttemptCounter: AttemptMeter, @unchecked Sendable { // unchecked: used by one photo's task only
    private let store: any JobSteps
    private let jobID: Int64
    private let stages: StageRecorder
    private(set) var attempts: Int
    private(set) var charged = false
    private let time: TimeSource

    init(store: any JobSteps, job: ClaimedJob, stages: StageRecorder, time: TimeSource) {
        self.store = store; jobID = job.id; attempts = job.attempts; self.stages = stages; self.time = time
    }

    func charge() throws -> Int {
        guard !charged else { return attempts }
        charged(attempts: try store.chargeAttempt(jobID: jobID, now: time.now))
        return attempts
    }

    var unchargedJob: Int64? { charged ? nil : jobID }

    func charged(attempts: Int) {
        self.attempts = attempts
        charged = true
        stages.recorded(.asking) // by the charge's own statement
    }
}

/// The steps of one photo, recorded in the queue as it reaches them (each once: hybrid asks twice).
final class StageRecorder: Sendable {
    private let store: any JobSteps
    private let jobID: Int64
    private let last = Mutex<JobStage?>(nil)
    private let time: TimeSource

    init(store: any JobSteps, job: ClaimedJob, time: TimeSource) {
        self.store = store; jobID = job.id; self.time = time
    }

    func reached(_ stage: JobStage) {
        guard
            last.withLock({ last in
                defer { last = stage }; return last != stage
            })
        else { return }
        try? store.recordStage(stage, jobIDs: [jobID], now: time.now) // the overview's, not worth failing a photo for
    }

    /// The stage was written with another change of the job (an attempt charged, an answer saved): reaching it
    /// writes nothing more.
    func recorded(_ stage: JobStage) {
        last.withLock { $0 = stage }
    }
}

/// A job's answers, saved in responses/ and the queue before they are acted on: a crash replays them.
struct QueueAnswers: AnswerJournal {
    let store: any AnswerLedger
    let job: ClaimedJob
    let attempt: AttemptCounter
    let stages: StageRecorder
    let responses: URL
    let logger: Logger
    let time: TimeSource

    var logsAnsweredRequests: Bool { true }

    func saved(from provider: any VisionProvider) -> SavedAnswer? {
        // An answer saved from here on is this run's own: one before it is one the claim saw.
        guard job.mayHaveAnswer,
            let saved = try? store.usableResponse(jobID: job.id, provider: provider.name, model: provider.model)
        else { return nil }
        // The file here, else (another machine's worker saved it) the copy in the database.
        guard let body = FileManager.default.contents(atPath: saved.file).map(Array.init) ?? saved.body else {
            try? store.markResponseUnusable(id: saved.id) // killed before its file was written
            return nil
        }
        return SavedAnswer(
            id: saved.id, raw: RawResponse(body: body, receivedAt: time.now, latency: nil),
            file: saved.file, latencyMs: saved.latencyMs)
    }

    /// The row goes in first, so a file on disk is always findable; a row whose file never appeared is
    /// skipped on replay.
    func save(_ raw: RawResponse, from provider: any VisionProvider, latencyMs: Int) -> SavedAnswer {
        let file = responses.appendingPathComponent("\(job.sha256)-\(job.id)-\(attempt.attempts)-\(provider.name).json")
        var id: Int64?
        do {
            id = try store.recordResponse(
                jobID: job.id, sha256: job.sha256, provider: provider.name,
                model: provider.model, file: file.path, bytes: raw.body.count,
                body: store.isShared ? raw.body : nil, latencyMs: latencyMs,
                request: raw.latency != nil, now: time.now) // a Batch API job's answer came by no request of its own
            stages.recorded(.matching)
            try AtomicFile.write(Data(raw.body), to: file)
        } catch {
            logger.error("Cannot save the provider's answer", metadata: ["error": "\(error)"])
        }
        Failpoint.hit("after_response_saved")
        return SavedAnswer(id: id, raw: raw, file: file.path, latencyMs: latencyMs)
    }

    func discard(_ saved: SavedAnswer) {
        if let id = saved.id { try? store.markResponseUnusable(id: id) }
    }
}

extension Pipeline {
    /// How this pipeline reads photos: its lineup, its request slots, its providers' health in the database.
    var reader: PhotoReader {
        var reader = PhotoReader(
            lineup: lineup, enricher: enricher, reviewThreshold: settings.reviewThreshold,
            maxPixels: settings.maxPixels, health: health, time: time, slots: slots,
            shouldStop: { [shutdown] in shutdown.isSet })
        reader.barcodes = settings.barcodes
        return reader
    }

    /// The outcome for a photo that failed or was set aside, or the answer to write for one that worked.
    func process(photo job: ClaimedJob) async -> PhotoEnd {
        let started = time.clock.now
        Failpoint.hit("reading_photo", photo: job.relativePath)
        let bytes: [UInt8]
        switch readPhoto(job) {
        case .success(let data): bytes = data
        case .failure(let error): return .ended(.dead(error.code, message: error.message))
        }
        let info: PhotoInfo
        do { info = try PhotoInspector.inspect(bytes, maxPixels: settings.maxPixels) } catch {
            return .ended(.dead(error.code, message: error.message))
        }
        var logger = self.logger
        logger[metadataKey: "photo.path"] = "\(job.relativePath)"
        logger[metadataKey: "job.id"] = "\(job.id)"
        let stages = StageRecorder(store: store, job: job, time: time)
        let attempt = AttemptCounter(store: store, job: job, stages: stages, time: time)
        let answers = QueueAnswers(
            store: store, job: job, attempt: attempt, stages: stages, responses: settings.responses,
            logger: logger, time: time)
        var reader = self.reader
        reader.onStage = { stages.reached($0) }
        var read: ReadPhoto
        switch await reader.read(bytes, journal: answers, meter: attempt, logger: logger) {
        case .read(let done): read = done
        case .unread(let step, let channel, _):
            return .ended(ending(step, channel: channel, job: job, attempt: attempt))
        }
        SourceHealthRecord.save(enricher.sources, to: providers, now: time.now)
        // Hybrid keeps a fast reading: the photo is asked again when the accurate provider answers, once: a recheck
        // waits again only when the accurate provider still gave no verdict on the photo.
        let recheck = read.notAsked != nil && ((try? store.isRecheck(jobID: job.id)) ?? false)
        if recheck, let error = read.notAsked?.error, FailurePolicy.isPhotosOwn(error) {
            read.notAsked?.awaiting = false
        }
        let notes = read.notes + [read.notAsked?.note].compactMap { $0 }
        let books = read.books
        let elapsed = started.duration(to: time.clock.now).milliseconds
        logger.info(
            "Scan completed",
            metadata: [
                "event": "scan_completed", "provider": "\(read.decided.provider)",
                "books": "\(books.count)", "seconds": "\(Double(elapsed) / 1000)",
                "replayed": "\(read.decided.response?.replayed ?? false)",
            ])
        let document = ResultDocument(
            photo: .init(
                path: job.relativePath, sha256: job.sha256, bytes: bytes.count, format: info.format.rawValue,
                width: info.displayWidth, height: info.displayHeight, orientation: info.orientation),
            provider: read.decided.provider, model: read.decided.model,
            timings: .init(queuedAt: nil, finishedAt: time.now, providerMs: read.decided.latencyMs, totalMs: elapsed),
            books: books,
            suggestions: SuggestionRules.combine(
                model: read.answer.suggestions, measured: read.signals?.suggestions ?? [],
                answer: read.answer),
            notes: notes + books.flatMap { $0.notes ?? [] },
            response: read.decided.response ?? .init(file: "", replayed: false),
            runs: read.runs, decidedBy: read.decided.provider, signals: read.signals,
            unreadSpines: read.unread.isEmpty ? nil : read.unread)
        let location = resultLocation(for: job)
        let review = books.contains { $0.status == .needsReview }
        // A recheck that still could not ask the accurate provider wrote the same fast reading as the result it
        // replaces: that one is not kept in the history again (a long outage would leave a copy per probe).
        let stillWaiting = recheck && read.notAsked?.awaiting == true
        return .answered(
            PhotoAnswer(
                document: document, resultURL: location.url, previous: stillWaiting ? nil : location.previous,
                awaiting: read.notAsked?.awaiting == true ? read.notAsked?.provider : nil,
                photo: review ? bytes : nil))
    }

    /// How a photo ends when a provider gave no answer.
    func ending(_ step: Step, channel: ProviderChannel, job: ClaimedJob, attempt: AttemptCounter) -> JobOutcome.Result {
        switch step {
        case .answered: preconditionFailure("an answer is not an ending")
        case .failed(let error, _):
            settings.failures.outcome(
                for: error, jobID: job.id, attempts: attempt.attempts, charged: attempt.charged, now: time.now)
        case .unavailable: .released(nil, message: "provider unavailable", refundAttempt: attempt.charged)
        case .stopped: .released(nil, message: "shutting down", refundAttempt: attempt.charged)
        }
    }

    /// The photo's bytes, read once for the whole job: the reader, the result and the review crops use them.
    func readPhoto(_ job: ClaimedJob) -> Result<[UInt8], PhotoError> {
        var lastError = PhotoError(
            .photoVanished, "the photo is no longer in incoming/ (it was \(job.relativePath))",
            disposition: .dead)
        for path in job.paths {
            // The file is the one hashed when it was seen (same size and time, as ingest judges it): its bytes are
            // that photo without hashing them again. Otherwise they are hashed to know.
            // As the claim read the sighting (a store that gave no stamps is asked).
            let seen = path.sighting(of: job.sha256) ?? (try? store.knownSighting(path: path.path)) ?? nil
            let unchanged =
                seen.map { seen in
                    seen.sha256 == job.sha256
                        && Self.sizeAndMTime(path.path).map { $0 == (seen.size, seen.mtime) } == true
                } ?? false
            switch PhotoFile.read(path.path) {
            case .success(let bytes):
                if unchanged && Int64(bytes.count) == seen?.size { return .success(bytes) }
                if SHA256.hex(of: bytes) == job.sha256 { return .success(bytes) }
                lastError = PhotoError(
                    .photoVanished, "\(path.relativePath) was replaced by a different photo", disposition: .dead)
            case .failure(let error):
                if error.code != .photoVanished { lastError = error }
            }
        }
        // Found by a worker on another machine: the image it stored for the rest.
        if store.isShared, let stored = try? store.photoImage(sha256: job.sha256) { return .success(stored) }
        return .failure(lastError)
    }

}
