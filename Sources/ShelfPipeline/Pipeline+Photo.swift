import Foundation
import Logging
import ShelfCore
import ShelfDigest
import ShelfEnrichment
import ShelfImaging
import ShelfOutputs
import ShelfProviders
import ShelfStore

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
        let progress = JobProgress(store: store, job: job, time: time)
        let answers = QueueAnswers(
            store: store, progress: progress, responses: settings.responses, logger: logger, time: time)
        var reader = self.reader
        reader.onStage = { progress.reached($0) }
        var read: ReadPhoto
        switch await reader.read(bytes, journal: answers, meter: progress, logger: logger) {
        case .read(let done): read = done
        case .unread(let step, let channel, _):
            return .ended(ending(step, channel: channel, progress: progress))
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
            timings: .init(
                queuedAt: job.queuedAt, finishedAt: time.now, providerMs: read.decided.latencyMs, totalMs: elapsed),
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
    func ending(_ step: Step, channel: ProviderChannel, progress: JobProgress) -> JobOutcome.Result {
        switch step {
        case .answered: preconditionFailure("an answer is not an ending")
        case .failed(let error, _):
            settings.failures.outcome(
                for: error, jobID: progress.job.id, attempts: progress.attempts, charged: progress.charged,
                now: time.now)
        case .unavailable: .released(nil, message: "provider unavailable", refundAttempt: progress.charged)
        case .stopped: .released(nil, message: "shutting down", refundAttempt: progress.charged)
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
