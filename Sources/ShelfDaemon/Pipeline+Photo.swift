import Dispatch
import Foundation
import Logging
import ShelfCore
import ShelfDigest
import ShelfEnrichment
import ShelfHTTP
import ShelfImaging
import ShelfProviders
import ShelfStore

/// One provider's go at a photo.
enum Step: Sendable {
    case answered(ModelAnswer, ResultDocument.Run)
    case failed(PhotoError, ResultDocument.Run)
    /// The provider is paused or backing off: not asked.
    case unavailable(ProviderHealth)
    /// Shutting down before the request was sent.
    case stopped
}

/// Hybrid: the accurate provider was not asked about a photo, so its fast reading is kept for review.
struct AccurateNotAsked: Sendable {
    /// Every book of such a reading waits for a person with this reason.
    static let reviewReason = "accurate_not_asked"
    var provider: String
    var reason: String
    /// Asked again when the provider answers (not after a recheck that it already answered).
    var awaiting: Bool

    var note: String {
        "\(provider) (the accurate provider) was not asked: \(reason); this is the fast reading, every book waits for review"
            + (awaiting ? ", and the photo is read again when \(provider) answers" : "")
    }
}

/// The attempt a photo is on: charged once, just before the first request that costs anything.
/// Also keeps what was prepared for each preset, so hybrid does not prepare twice for the same one.
final class AttemptCounter: @unchecked Sendable {      // unchecked: used by one photo's task only
    private let store: Store
    private let jobID: Int64
    private(set) var attempts: Int
    private(set) var charged = false
    var prepared: [ImagePreset: PreparedPhoto] = [:]

    init(store: Store, job: ClaimedJob) { self.store = store; jobID = job.id; attempts = job.attempts }

    func chargeOnce() throws {
        guard !charged else { return }
        attempts = try store.chargeAttempt(jobID: jobID)
        charged = true
    }

    /// The signals of whatever was prepared first (they describe the photo, not the preset).
    var signals: QualitySignals? { prepared.values.first?.signals }
}

/// Preprocessing is CPU-bound C work: it runs on one queue of its own, never on the cooperative pool,
/// and one photo at a time (a 48-megapixel photo needs tens of megabytes while it is prepared).
private let imagingQueue = DispatchQueue(label: "shelfd.imaging")

func prepareOffPool(_ bytes: [UInt8], preset: ImagePreset, maxPixels: Int) async -> Result<PreparedPhoto, PhotoError> {
    await withCheckedContinuation { continuation in
        imagingQueue.async {
            continuation.resume(returning: Result { () throws(PhotoError) in
                try Preprocessor.prepare(bytes, preset: preset, maxPixels: maxPixels)
            })
        }
    }
}

extension Pipeline {
    /// The outcome for a photo that failed or was set aside, or the answer to write for one that worked.
    func process(photo job: ClaimedJob) async -> PhotoEnd {
        let started = ContinuousClock.now
        let bytes: [UInt8]
        switch readPhoto(job) {
        case .success(let data): bytes = data
        case .failure(let error): return .ended(.dead(error.code, message: error.message))
        }
        let info: PhotoInfo
        do { info = try PhotoInspector.inspect(bytes, maxPixels: settings.maxPixels) } catch {
            return .ended(.dead(error.code, message: error.message))
        }
        let attempt = AttemptCounter(store: store, job: job)

        let decided: (answer: ModelAnswer, run: ResultDocument.Run, runs: [ResultDocument.Run], books: [Book])
        var notAsked: AccurateNotAsked?
        switch lineup {
        case .single(let channel):
            let step = await ask(channel, job: job, bytes: bytes, info: info, attempt: attempt)
            guard case .answered(let answer, let run) = step else {
                return .ended(ending(step, channel: channel, job: job, attempt: attempt))
            }
            decided = (answer, run, [run], check(answer, source: channel.name))
        case .hybrid(let fast, let accurate, let escalateBelow):
            let first = await ask(fast, job: job, bytes: bytes, info: info, attempt: attempt)
            var runs: [ResultDocument.Run] = []
            var fastBooks: [Book] = []
            var fastAnswer: (answer: ModelAnswer, run: ResultDocument.Run)?
            var confident: (answer: ModelAnswer, run: ResultDocument.Run)?
            switch first {
            case .answered(let answer, let run):
                runs.append(run)
                fastBooks = check(answer, source: fast.name)
                fastAnswer = (answer, run)
                if !Self.needsAccurateProvider(answer, escalateBelow: escalateBelow) { confident = (answer, run) }
            case .failed(_, let run):
                runs.append(run)                   // a failed fast answer escalates (the fast provider may be paused)
            case .unavailable:
                break
            case .stopped:
                return .ended(ending(first, channel: fast, job: job, attempt: attempt))
            }
            if let confident {
                decided = (confident.answer, confident.run, runs, fastBooks)
            } else {
                logger.info("Asking the accurate provider", metadata: ["photo.path": "\(job.relativePath)",
                                                                       "provider": "\(accurate.name)"])
                let second = await ask(accurate, job: job, bytes: bytes, info: info, attempt: attempt)
                switch second {
                case .answered(let answer, let run):
                    decided = (answer, run, runs + [run], Self.merge(accurate: check(answer, source: accurate.name), fast: fastBooks))
                // The accurate provider is down, paused, out of quota or failed on this photo: the fast reading
                // is kept for a person to review, not thrown away (with no fast reading, the photo ends as usual).
                case .failed(let error, let run):
                    guard let fastAnswer else { return .ended(ending(second, channel: accurate, job: job, attempt: attempt)) }
                    notAsked = accurateNotAsked(accurate, reason: Self.shortReason(error.message),
                                                photosOwn: Self.isPhotosOwn(error), job: job)
                    decided = (fastAnswer.answer, fastAnswer.run, runs + [run], fastBooks)
                case .unavailable(let health):
                    guard let fastAnswer else { return .ended(ending(second, channel: accurate, job: job, attempt: attempt)) }
                    notAsked = accurateNotAsked(accurate, reason: Self.describe(health), photosOwn: false, job: job)
                    decided = (fastAnswer.answer, fastAnswer.run, runs, fastBooks)
                case .stopped:
                    return .ended(ending(second, channel: accurate, job: job, attempt: attempt))
                }
            }
        }

        let enrichment = await enricher.enrich(decided.books)
        SourceHealthRecord.save(enricher.sources, to: store)
        var books = enrichment.books
        var notes = decided.answer.notes + enrichment.notes
        if let notAsked {
            for index in books.indices {
                books[index].status = .needsReview
                books[index].reviewReasons = (books[index].reviewReasons ?? []) + [AccurateNotAsked.reviewReason]
            }
            notes.append(notAsked.note)
        }
        let elapsed = (ContinuousClock.now - started).milliseconds
        logger.info("Scan completed", metadata: [
            "event": "scan_completed", "photo.path": "\(job.relativePath)", "provider": "\(decided.run.provider)",
            "books": "\(books.count)", "seconds": "\(Double(elapsed) / 1000)",
            "replayed": "\(decided.run.response?.replayed ?? false)"])
        let document = ResultDocument(
            photo: .init(path: job.relativePath, sha256: job.sha256, bytes: bytes.count, format: info.format.rawValue,
                         width: info.displayWidth, height: info.displayHeight, orientation: info.orientation),
            provider: decided.run.provider, model: decided.run.model,
            timings: .init(queuedAt: nil, finishedAt: Date(), providerMs: decided.run.latencyMs, totalMs: elapsed),
            books: books,
            suggestions: SuggestionRules.combine(model: decided.answer.suggestions, measured: attempt.signals?.suggestions ?? [],
                                                 answer: decided.answer),
            notes: notes + books.flatMap { $0.notes ?? [] },
            response: decided.run.response ?? .init(file: "", replayed: false),
            runs: decided.runs, decidedBy: decided.run.provider, signals: attempt.signals)
        let location = resultLocation(for: job)
        return .answered(PhotoAnswer(document: document, resultURL: location.url, previous: location.previous,
                                     review: books.contains { $0.status == .needsReview },
                                     awaiting: notAsked?.awaiting == true ? notAsked?.provider : nil))
    }

    /// Hybrid keeps a fast reading: the photo is asked again when the accurate provider answers, once: a recheck
    /// waits again only when the accurate provider still gave no verdict on the photo.
    func accurateNotAsked(_ accurate: ProviderChannel, reason: String, photosOwn: Bool, job: ClaimedJob) -> AccurateNotAsked {
        logger.warning("Keeping the fast reading for review; the accurate provider was not asked", metadata: [
            "photo.path": "\(job.relativePath)", "provider": "\(accurate.name)", "reason": "\(reason)"])
        let again = !(photosOwn && ((try? store.isRecheck(jobID: job.id)) ?? false))
        return AccurateNotAsked(provider: accurate.name, reason: reason, awaiting: again)
    }

    /// Why a provider is not being asked, in words: "unreachable since 10:02:11 (could not connect …)".
    static func describe(_ health: ProviderHealth) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        let since = health.since.map { " since \(formatter.string(from: $0))" } ?? ""
        let until = health.until.map { " until \(formatter.string(from: $0))" } ?? ""
        let why = health.message.map { " (\($0))" } ?? ""
        return health.isOutage ? "\(health.state.rawValue)\(since)\(why)" : "\(health.state.rawValue)\(until)\(why)"
    }

    /// How a photo ends when a provider gave no answer.
    func ending(_ step: Step, channel: ProviderChannel, job: ClaimedJob, attempt: AttemptCounter) -> JobOutcome.Result {
        switch step {
        case .answered: preconditionFailure("an answer is not an ending")
        case .failed(let error, _): outcome(for: error, job: job, channel: channel, attempt: attempt)
        case .unavailable: .released(nil, message: "provider unavailable", refundAttempt: attempt.charged)
        case .stopped: .released(nil, message: "shutting down", refundAttempt: attempt.charged)
        }
    }

    func check(_ answer: ModelAnswer, source: String) -> [Book] {
        BookChecker(reviewThreshold: settings.reviewThreshold).check(answer.books, source: source)
    }

    /// Hybrid's rule: ask the accurate provider when the fast one saw no book at all, or any book below
    /// `escalateBelow` (a failed fast answer escalates too, before this is asked).
    static func needsAccurateProvider(_ answer: ModelAnswer, escalateBelow: Double) -> Bool {
        answer.books.isEmpty || answer.books.contains { $0.confidence < escalateBelow }
    }

    /// Hybrid: the accurate provider's reading wins for every book both saw; books only the fast one saw
    /// stay, marked with its name as their source.
    static func merge(accurate: [Book], fast: [Book]) -> [Book] {
        accurate + fast.filter { book in !accurate.contains { $0.isSameWork(as: book) } }
    }

    /// Asks one provider: its saved answer if there is one (never paid twice), else a request.
    func ask(_ channel: ProviderChannel, job: ClaimedJob, bytes: [UInt8], info: PhotoInfo,
             attempt: AttemptCounter) async -> Step {
        let provider = channel.provider
        var logger = self.logger
        logger[metadataKey: "photo.path"] = "\(job.relativePath)"
        logger[metadataKey: "job.id"] = "\(job.id)"
        logger[metadataKey: "provider"] = "\(provider.name)"
        var run = ResultDocument.Run(provider: provider.name, model: provider.model, books: nil, latencyMs: nil,
                                     response: nil, sent: nil, error: nil)

        let saved = try? store.usableResponse(jobID: job.id, provider: provider.name, model: provider.model)
        let raw: RawResponse
        var savedID: Int64?                        // the answer on disk, made unusable if it is not an answer
        if let saved, let body = FileManager.default.contents(atPath: saved.file) {
            raw = RawResponse(body: Array(body), receivedAt: Date(), latency: nil)
            savedID = saved.id
            run.response = .init(file: saved.file, replayed: true)
            run.latencyMs = saved.latencyMs
            logger.info("Replaying a saved answer", metadata: ["response": "\(saved.file)"])
        } else {
            if let saved { try? store.markResponseUnusable(id: saved.id) }      // killed before its file was written
            // A provider that is down is asked by one photo per probe interval; the others wait in the queue.
            var probing = false
            switch turn(channel) {
            case .wait(let health): return .unavailable(health)
            case .probe: probing = true
            case .open: break
            }
            // Upright, resized to the provider's preset, no metadata (no GPS position leaves the machine).
            var preset = provider.preset
            var prepared: PreparedPhoto
            if let done = attempt.prepared[preset] { prepared = done } else {
                switch await prepareOffPool(bytes, preset: preset, maxPixels: settings.maxPixels) {
                case .success(let photo): prepared = photo; attempt.prepared[preset] = photo
                case .failure(let error): run.error = error.description; return .failed(error, run)
                }
            }
            guard await slots.acquire() else { return .stopped }
            defer { slots.release() }
            if shutdown.isSet { return .stopped }
            // The turn is taken holding the slot: at most `concurrency` photos of this process wait for one, and
            // the request goes out the moment it is granted.
            switch await waitForTurn(on: channel, probing: probing, logger: logger) {
            case .granted: break
            case .stopped: return .stopped
            case .unavailable(let health): return .unavailable(health)
            }
            if !probing {                                  // it may have gone down while this photo waited
                switch turn(channel) {
                case .wait(let health): return .unavailable(health)
                case .probe: probing = true
                case .open: break
                }
            }
            do { try attempt.chargeOnce() } catch {
                return .failed(PhotoError(.internal, "\(error)", disposition: .retry(after: 60)), run)
            }
            logger.info("Scan started", metadata: ["event": "scan_started", "model": "\(provider.model)",
                                                   "attempt": "\(attempt.attempts)"])
            var sent = await send(PhotoUpload(bytes: prepared.jpeg, mimeType: "image/jpeg"), to: channel, probe: probing,
                                  logger: logger)
            if case .failure(let error) = sent, error.code == .photoTooLarge {
                // The provider's own limit is lower than its preset: shrink once and try again.
                preset = ImagePreset(maxSide: preset.maxSide * 7 / 10, quality: preset.minQuality,
                                     targetBytes: preset.targetBytes.lowerBound / 2...preset.targetBytes.upperBound / 2,
                                     minQuality: preset.minQuality)
                logger.warning("Photo too large for the provider; sending a smaller one", metadata: ["max_side": "\(preset.maxSide)"])
                if case .success(let smaller) = await prepareOffPool(bytes, preset: preset, maxPixels: settings.maxPixels) {
                    prepared = smaller
                    switch await waitForTurn(on: channel, probing: probing, logger: logger) {      // a second request: a turn of its own
                    case .granted:
                        sent = await send(PhotoUpload(bytes: prepared.jpeg, mimeType: "image/jpeg"), to: channel, probe: probing,
                                          logger: logger)
                    case .stopped: return .stopped
                    case .unavailable(let health): return .unavailable(health)
                    }
                }
            }
            run.sent = .init(width: prepared.width, height: prepared.height, quality: prepared.quality, bytes: prepared.jpeg.count)
            switch sent {
            case .success(let response): raw = response
            case .failure(let error):
                if Task.isCancelled { return .stopped }              // the grace period ran out: back to the queue
                run.error = error.description
                // Pause before the slot is given back, so no photo waiting for it is sent to a provider
                // that has just said no.
                recordProviderTrouble(error, channel: channel, probe: probing)
                return .failed(error, run)
            }
            let ms = (raw.latency ?? .zero).milliseconds
            run.latencyMs = ms
            markHealthy(channel)
            // Save the answer before acting on it: a crash from here on replays it from disk. The row goes in
            // first, so a file on disk is always findable; a row whose file never appeared is skipped on replay.
            let file = settings.responses.appendingPathComponent("\(job.sha256)-\(job.id)-\(attempt.attempts)-\(provider.name).json")
            do {
                savedID = try store.recordResponse(jobID: job.id, sha256: job.sha256, provider: provider.name,
                                                   model: provider.model, file: file.path, bytes: raw.body.count, latencyMs: ms)
                try AtomicFile.write(Data(raw.body), to: file)
            } catch {
                logger.error("Cannot save the provider's answer", metadata: ["error": "\(error)"])
            }
            run.response = .init(file: file.path, replayed: false)
            Failpoint.hit("after_response_saved")
        }

        do {
            let answer = try provider.parse(raw)
            run.books = answer.books.count
            return .answered(answer, run)
        } catch {
            if let savedID { try? store.markResponseUnusable(id: savedID) }
            run.error = error.description
            return .failed(error, run)
        }
    }

    /// One request through the channel's quick retries, each recorded for the latency figures of `status`.
    /// A probe of a provider that is down is one request: no quick retries.
    private func send(_ upload: PhotoUpload, to channel: ProviderChannel, probe: Bool,
                      logger: Logger) async -> Result<RawResponse, PhotoError> {
        await channel.send(upload, logger: logger, shouldStop: { probe || shutdown.isSet }) { latency, outcome in
            try? store.recordRequest(provider: channel.name, latencyMs: latency.milliseconds, outcome: outcome)
        }
    }

    private func readPhoto(_ job: ClaimedJob) -> Result<[UInt8], PhotoError> {
        var lastError = PhotoError(.photoVanished, "the photo is no longer in incoming/ (it was \(job.relativePath))",
                                   disposition: .dead)
        for path in job.paths {
            switch Self.readFile(path.path) {
            case .success(let bytes):
                if SHA256.hex(of: bytes) == job.sha256 { return .success(bytes) }
                lastError = PhotoError(.photoVanished, "\(path.relativePath) was replaced by a different photo", disposition: .dead)
            case .failure(let error):
                if error.code != .photoVanished { lastError = error }
            }
        }
        return .failure(lastError)
    }

    /// What the queue does with a photo error (DESIGN §5).
    func outcome(for error: PhotoError, job: ClaimedJob, channel: ProviderChannel, attempt: AttemptCounter) -> JobOutcome.Result {
        let attempts = attempt.attempts, charged = attempt.charged
        switch error.disposition {
        case .dead:
            return .dead(error.code, message: error.message)
        case .retry where Self.isOutage(error):
            // Already recorded against the provider when the request failed: the photo waits, uncharged.
            return .released(error.code, message: error.message, refundAttempt: charged)
        case .retry(let after):
            if attempts >= settings.maxAttempts {
                return .dead(error.code, message: "\(error.message) (gave up after \(attempts) attempts; 'shelfd retry \(job.id)' tries again)")
            }
            let delay = after ?? Self.backoff(attempt: attempts)
            return .failed(error.code, message: error.message, retryAt: Date().addingTimeInterval(delay))
        case .providerWait, .providerBroken:
            recordProviderTrouble(error, channel: channel)
            return .released(error.code, message: error.message, refundAttempt: charged)
        }
    }

    /// No connection, DNS, a timeout or a 5xx: the provider's trouble (DESIGN §5), never charged to the photo.
    static func isOutage(_ error: PhotoError) -> Bool {
        guard case .retry = error.disposition else { return false }
        return error.code == .network || error.code == .providerUnavailable
    }

    /// Whether a failure is the photo's own: the provider answered about this photo (unreadable, too large,
    /// blocked, an answer that never parses).
    static func isPhotosOwn(_ error: PhotoError) -> Bool {
        switch error.disposition {
        case .dead: true
        case .retry: !isOutage(error)
        case .providerWait, .providerBroken: false
        }
    }

    /// An outage, a quota, a rate limit or a configuration problem concerns the provider, not the photo: mark
    /// it down (probed at growing intervals), or pause it (until the given time, or until the configuration
    /// changes). `probe`: the failed request was the probe of a provider already down.
    func recordProviderTrouble(_ error: PhotoError, channel: ProviderChannel, probe: Bool = false) {
        switch error.disposition {
        case .retry(let after) where Self.isOutage(error):
            recordOutage(error, channel: channel, probe: probe, retryAfter: after)
        case .providerWait(let until):
            setProviderHealth(ProviderHealth(name: channel.name, state: .backoff, until: until, code: error.code.rawValue,
                                             message: error.message))
        case .providerBroken:
            setProviderHealth(ProviderHealth(name: channel.name, state: .paused, until: nil, code: error.code.rawValue,
                                             message: error.message))
        case .retry, .dead:
            break
        }
    }

    /// Requests per attempt for transient failures (5xx, network) before the provider is marked down.
    static let triesPerAttempt = 3

    /// The wait before trying again within an attempt: the server's Retry-After when it gives one (up to
    /// 30 s), else 1 s, 2 s … with ±20 % jitter. Nil when the error is not worth an immediate retry.
    static func quickRetryDelay(for error: PhotoError, try number: Int) -> TimeInterval? {
        guard error.code == .providerUnavailable || error.code == .network,
              case .retry(let after) = error.disposition else { return nil }
        if let after { return after <= 30 ? after : nil }
        return pow(2, Double(number - 1)) * Double.random(in: 0.8...1.2)
    }

    /// Exponential backoff with ±20 % jitter: 2 s, 4 s, 8 s … capped at 5 minutes.
    static func backoff(attempt: Int) -> TimeInterval {
        let base = min(300, pow(2, Double(max(1, attempt))))
        return base * Double.random(in: 0.8...1.2)
    }

}
