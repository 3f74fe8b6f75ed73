import Foundation
import Logging
import ShelfCore
import ShelfImaging
import ShelfProviders
import ShelfStore

/// One photo's answer, ready to be written.
struct PhotoAnswer: Sendable {
    var document: ResultDocument
    var resultURL: URL
    var review: Bool
}

extension Pipeline {
    /// Processes one claimed batch: every photo (requests bounded by the slots), then the result files,
    /// then one commit for the whole batch, then library.json.
    func process(batch jobs: [ClaimedJob]) async {

        let answers = await withTaskGroup(of: (JobOutcome.Result?, PhotoAnswer?, ClaimedJob).self) { group in
            for job in jobs { group.addTask { let (r, a) = await self.process(photo: job); return (r, a, job) } }
            var collected: [(JobOutcome.Result?, PhotoAnswer?, ClaimedJob)] = []
            for await item in group { collected.append(item) }
            return collected.sorted { $0.2.id < $1.2.id }
        }

        var outcomes: [JobOutcome] = []
        var written = 0
        for (result, answer, job) in answers {
            guard let answer else {
                if let result { outcomes.append(JobOutcome(job: job, result: result)) }
                continue
            }
            do {
                let data = try JSONStyle.encoder().encode(answer.document)
                try AtomicFile.write(data, to: answer.resultURL, failpointAfterTemp: written == 0 ? "mid_write" : nil)
                written += 1
                outcomes.append(JobOutcome(job: job, result: .finished(books: answer.document.books,
                                                                       resultPath: answer.resultURL.path, review: answer.review)))
            } catch {
                // The disk is full or the folder unwritable: keep the job (its answer is saved) and say so.
                logger.error("Cannot write a result", metadata: ["photo.path": "\(job.relativePath)", "error": "\(error)"])
                outcomes.append(JobOutcome(job: job, result: .failed(.internal, message: "\(error)",
                                                                     retryAt: Date().addingTimeInterval(60))))
            }
        }

        Failpoint.hit("before_commit")
        do {
            try store.finish(outcomes, reviewThreshold: settings.reviewThreshold, shelfOf: { Self.shelf(of: $0.relativePath) })
        } catch {
            // Nothing is lost: the jobs stay leased by us, go back to pending at the next start, and
            // their saved answers are replayed without a new request.
            logger.error("Cannot commit a batch", metadata: ["error": "\(error)", "batch.size": "\(jobs.count)"])
            return
        }
        writeLibrary()
        for outcome in outcomes { afterCommit(outcome) }
    }

    private func afterCommit(_ outcome: JobOutcome) {
        let job = outcome.job
        var logger = self.logger
        logger[metadataKey: "photo.path"] = "\(job.relativePath)"
        logger[metadataKey: "job.id"] = "\(job.id)"
        switch outcome.result {
        case .finished(let books, let resultPath, let review):
            logger.info("Photo done", metadata: ["books": "\(books.count)", "review": "\(review)", "result": "\(resultPath)"])
            if settings.moveAfter { moveOriginal(job) }
        case .failed(let code, let message, let retryAt):
            logger.warning("Photo failed; will retry", metadata: ["code": "\(code.rawValue)", "reason": "\(message)",
                                                                 "retry_at": "\(retryAt)"])
        case .dead(let code, let message):
            logger.error("Photo failed for good", metadata: ["code": "\(code.rawValue)", "reason": "\(message)",
                                                            "event": "photo_dead"])
        case .released:
            break
        }
    }

    /// The shelf a photo belongs to: the sub-folder of incoming/ it came from.
    static func shelf(of relativePath: String) -> String? {
        let folder = (relativePath as NSString).deletingLastPathComponent
        return folder.isEmpty ? nil : folder
    }

    /// Rewrites library.json from the database (the database is the truth; the file is its projection).
    package func writeLibrary() {
        do {
            let books = try store.library()
            let data = try JSONStyle.encoder().encode(LibraryDocument(generatedAt: Date(), books: books))
            try AtomicFile.write(data, to: settings.libraryFile)
        } catch {
            logger.error("Cannot write library.json", metadata: ["error": "\(error)"])
        }
    }

    private func moveOriginal(_ job: ClaimedJob) {
        for path in job.paths where FileManager.default.fileExists(atPath: path.path) {
            let target = settings.processed.appendingPathComponent(path.relativePath)
            do {
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                guard !FileManager.default.fileExists(atPath: target.path) else { continue }
                try FileManager.default.moveItem(atPath: path.path, toPath: target.path)
            } catch {
                logger.warning("Cannot move a finished photo", metadata: ["photo.path": "\(path.relativePath)", "error": "\(error)"])
            }
        }
    }

    // MARK: One photo

    /// The outcome for a photo that failed or was set aside, or the answer to write for one that worked.
    func process(photo job: ClaimedJob) async -> (JobOutcome.Result?, PhotoAnswer?) {
        let started = ContinuousClock.now
        var logger = self.logger
        logger[metadataKey: "photo.path"] = "\(job.relativePath)"
        logger[metadataKey: "photo.sha256"] = "\(job.sha256.prefix(12))"
        logger[metadataKey: "job.id"] = "\(job.id)"

        // The photo as it is now, from whichever of its paths still holds it.
        let bytes: [UInt8]
        switch readPhoto(job) {
        case .success(let data): bytes = data
        case .failure(let error): return (.dead(error.code, message: error.message), nil)
        }
        let info: PhotoInfo
        do { info = try PhotoInspector.inspect(bytes, maxPixels: settings.maxPixels) } catch {
            return (outcome(for: error, job: job, charged: false), nil)
        }

        // A saved answer is replayed, never paid for twice.
        var raw: RawResponse
        var responseFile: String
        var replayed = false
        var providerMs: Int?
        var charged = false
        var attempts = job.attempts
        let saved = try? store.usableResponse(sha256: job.sha256, provider: provider.name, model: provider.model)
        if let saved, let body = FileManager.default.contents(atPath: saved.file) {
            raw = RawResponse(body: Array(body), receivedAt: Date(), latency: nil)
            responseFile = saved.file
            replayed = true
            providerMs = saved.latencyMs
            logger.info("Replaying a saved answer", metadata: ["response": "\(saved.file)"])
        } else {
            if let saved { try? store.markResponseUnusable(id: saved.id) }      // killed before its file was written
            if let blocked = providerBlock() { return (blocked, nil) }
            guard await slots.acquire() else { return (.released(nil, message: "shutting down", refundAttempt: false), nil) }
            defer { Task { await slots.release() } }
            if shutdown.isSet { return (.released(nil, message: "shutting down", refundAttempt: false), nil) }
            do { try await rateLimiter.waitForTurn() } catch {
                return (.released(nil, message: "shutting down", refundAttempt: false), nil)
            }
            if let blocked = providerBlock() { return (blocked, nil) }
            let attempt: Int
            do { attempt = try store.chargeAttempt(jobID: job.id) } catch {
                return (.failed(.internal, message: "\(error)", retryAt: Date().addingTimeInterval(60)), nil)
            }
            charged = true
            attempts = attempt
            logger.info("Scan started", metadata: ["event": "scan_started", "provider": "\(provider.name)",
                                                   "model": "\(provider.model)", "attempt": "\(attempt)"])
            var requestStart = ContinuousClock.now
            var tries = 1
            while true {
                do {
                    raw = try await provider.send(PhotoUpload(bytes: bytes, mimeType: info.format.mimeType))
                    break
                } catch {
                    let ms = Self.milliseconds(ContinuousClock.now - requestStart)
                    try? store.recordRequest(provider: provider.name, latencyMs: ms, outcome: error.code.rawValue)
                    if Task.isCancelled {
                        return (.released(error.code, message: "stopped while the request was in flight", refundAttempt: true), nil)
                    }
                    // An overloaded server or a dropped connection is tried again at once, within this attempt.
                    guard tries < Self.triesPerAttempt, !shutdown.isSet, let delay = Self.quickRetryDelay(for: error, try: tries)
                    else { return (outcome(for: error, job: job, charged: true, attempts: attempt), nil) }
                    logger.warning("Provider request failed; trying again", metadata: [
                        "code": "\(error.code.rawValue)", "try": "\(tries)", "delay_s": "\(String(format: "%.1f", delay))"])
                    try? await Task.sleep(for: .seconds(delay))
                    do { try await rateLimiter.waitForTurn() } catch {
                        return (.released(nil, message: "shutting down", refundAttempt: true), nil)
                    }
                    tries += 1
                    requestStart = ContinuousClock.now
                }
            }
            let ms = Self.milliseconds(raw.latency ?? (ContinuousClock.now - requestStart))
            providerMs = ms
            try? store.recordRequest(provider: provider.name, latencyMs: ms, outcome: "ok")
            markProviderHealthy()
            // Save the answer before acting on it: a crash from here on replays it from disk. The row goes in
            // first, so a file on disk is always findable; a row whose file never appeared is skipped on replay.
            let file = settings.responses.appendingPathComponent("\(job.sha256)-\(job.id)-\(attempt).json")
            do {
                try store.recordResponse(jobID: job.id, sha256: job.sha256, provider: provider.name, model: provider.model,
                                         file: file.path, bytes: raw.body.count, latencyMs: ms)
                try AtomicFile.write(Data(raw.body), to: file)
            } catch {
                logger.error("Cannot save the provider's answer", metadata: ["error": "\(error)"])
            }
            responseFile = file.path
            Failpoint.hit("after_response_saved")
        }

        let answer: ModelAnswer
        do { answer = try provider.parse(raw) } catch {
            if let saved = try? store.usableResponse(sha256: job.sha256, provider: provider.name, model: provider.model) {
                try? store.markResponseUnusable(id: saved.id)
            }
            return (outcome(for: error, job: job, charged: charged, attempts: attempts), nil)
        }

        let books = BookChecker(reviewThreshold: settings.reviewThreshold).check(answer.books, source: provider.name)
        let elapsed = Self.milliseconds(ContinuousClock.now - started)
        logger.info("Scan completed", metadata: ["event": "scan_completed", "provider": "\(provider.name)",
                                                 "books": "\(books.count)", "seconds": "\(Double(elapsed) / 1000)",
                                                 "replayed": "\(replayed)"])
        let document = ResultDocument(
            photo: .init(path: job.relativePath, sha256: job.sha256, bytes: bytes.count, format: info.format.rawValue,
                         width: info.displayWidth, height: info.displayHeight, orientation: info.orientation),
            provider: provider.name, model: provider.model,
            timings: .init(queuedAt: nil, finishedAt: Date(), providerMs: providerMs, totalMs: elapsed),
            books: books, suggestions: answer.suggestions,
            notes: answer.notes + books.flatMap { $0.notes ?? [] },
            response: .init(file: responseFile, replayed: replayed))
        return (nil, PhotoAnswer(document: document, resultURL: resultURL(for: job),
                                 review: books.contains { $0.status == .needsReview }))
    }

    /// results/<sub-path>/<name>.json; a different photo that had the same name gets its hash appended.
    func resultURL(for job: ClaimedJob) -> URL {
        let relative = (job.relativePath as NSString).deletingPathExtension
        let url = settings.results.appendingPathComponent(relative + ".json")
        guard let data = FileManager.default.contents(atPath: url.path),
              let existing = try? JSONStyle.decoder().decode(ResultDocument.self, from: data),
              existing.photo.sha256 != job.sha256 else { return url }
        return settings.results.appendingPathComponent(relative + "-\(job.sha256.prefix(8)).json")
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
    func outcome(for error: PhotoError, job: ClaimedJob, charged: Bool, attempts: Int? = nil) -> JobOutcome.Result {
        let attempts = attempts ?? job.attempts
        switch error.disposition {
        case .dead:
            return .dead(error.code, message: error.message)
        case .retry(let after):
            if attempts >= settings.maxAttempts {
                return .dead(error.code, message: "\(error.message) (gave up after \(attempts) attempts; 'shelfd retry \(job.id)' tries again)")
            }
            let delay = after ?? Self.backoff(attempt: attempts)
            return .failed(error.code, message: error.message, retryAt: Date().addingTimeInterval(delay))
        case .providerWait(let until):
            setProviderHealth(ProviderHealth(name: provider.name, state: .backoff, until: until, code: error.code.rawValue,
                                             message: error.message))
            return .released(error.code, message: error.message, refundAttempt: charged)
        case .providerBroken:
            setProviderHealth(ProviderHealth(name: provider.name, state: .paused, until: nil, code: error.code.rawValue,
                                             message: error.message))
            return .released(error.code, message: error.message, refundAttempt: charged)
        }
    }

    /// Requests per attempt for transient failures (5xx, network): a short outage costs no attempt.
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

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
