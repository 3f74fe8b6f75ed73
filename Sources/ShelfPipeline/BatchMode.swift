import Foundation
import Logging
import ShelfCore
import ShelfImaging
import ShelfProviders
import ShelfStore

/// `[gemini] mode = "batch"`: due photos go to Gemini's Batch API in jobs of up to `batch_max_photos`; finished jobs'
/// answers are saved in the queue's journal exactly as a synchronous answer is, then the photos are processed the
/// usual way (`process(batch:)`), which replays the saved answer: parsed, checked, enriched, written.
///
/// Never paid twice: a batch and its photos are recorded before it is submitted, and its name saved as soon as the
/// provider gives it. A batch with no saved name (a crash between the two) is looked for by its display name in
/// the provider's list before its photos may go again.
package struct BatchRunner: Sendable {
    package let pipeline: Pipeline
    package let queue: any BatchQueue
    package let client: GeminiBatchClient
    package let maxPhotos: Int
    package let pollInterval: Duration
    /// A batch whose submission has no answer yet is looked for this long before its photos are taken back.
    package var unsentAfter: TimeInterval = 600
    /// False in sync mode with batches still in flight (the mode was switched back): they are collected, no new
    /// batch is sent.
    package var submits = true

    package init(
        pipeline: Pipeline, queue: any BatchQueue, client: GeminiBatchClient, maxPhotos: Int, pollInterval: Duration
    ) {
        self.pipeline = pipeline; self.queue = queue; self.client = client; self.maxPhotos = maxPhotos
        self.pollInterval = pollInterval
    }

    private var logger: Logger { pipeline.logger }
    private var time: TimeSource { pipeline.time }
    /// The provider whose saved answers the usual path replays (same name and model as the batch's requests).
    private var provider: any VisionProvider { pipeline.lineup.channels.first?.provider ?? client.provider }

    /// Rounds of polling and submitting. `untilDone` (`run --batch`): returns once no batch is in flight and no photo
    /// is due; otherwise (watch) until shutdown, a round every `pollInterval` or when a photo arrives.
    package func pass(untilDone: Bool) async -> PassSummary {
        async let _ = untilDone ? pipeline.heartbeatLoop() : ()
        var unreachableSince: Date?
        while true {
            pipeline.pulse.beat()
            if pipeline.shutdown.isSet { return PassSummary(stop: .shutdown) }
            let pollFailed = await beating { await pollInFlight() }
            if pipeline.shutdown.isSet { return PassSummary(stop: .shutdown) }
            // Gemini paused (a bad key), rate-limited or down: nothing is submitted until its health says so.
            if submits, let health = pipeline.gateHealth(now: time.now), health.isInForce(at: time.now) {
                if untilDone && health.state == .paused {
                    return PassSummary(stop: .providerPaused(health.message ?? "provider paused"))
                }
                if untilDone && ((try? queue.batchesInFlight()) ?? []).isEmpty {
                    return health.isOutage
                        ? PassSummary(stop: .providerDown(health))
                        : PassSummary(
                            stop: .providerWaiting(
                                until: health.until ?? time.now, health.message ?? "provider backing off"))
                }
            }
            let open = !(pipeline.gateHealth(now: time.now)?.isInForce(at: time.now) ?? false)
            let (submitted, submitFailed) =
                submits && open && (untilDone || gathered(now: time.now))
                ? await beating { await submitDue() } : (0, false)
            // Gemini out of reach: a pass gives up after a while, leaving batches and photos for the next one.
            if pollFailed || submitFailed {
                let since = unreachableSince ?? time.now
                unreachableSince = since
                if untilDone && time.now.timeIntervalSince(since) > pipeline.settings.maxWaitInPass {
                    return PassSummary(
                        stop: .providerWaiting(
                            until: time.now.addingTimeInterval(Double(pollInterval.components.seconds)),
                            "Gemini's Batch API cannot be reached; batches in flight and queued photos wait for the next run or the daemon"
                        ))
                }
            } else {
                unreachableSince = nil
            }
            let inFlight = (try? queue.batchesInFlight()) ?? []
            if untilDone && inFlight.isEmpty && submitted == 0 {
                guard let retry = try? pipeline.store.nextRetryDate() else { return PassSummary(stop: .idle) }
                if retry.timeIntervalSince(time.now) > pipeline.settings.maxWaitInPass {
                    return PassSummary(stop: .retriesLater(retry))
                }
                _ = await pipeline.wake.wait(timeout: .seconds(max(0.05, retry.timeIntervalSince(time.now))))
                continue
            }
            if submits {
                _ = await pipeline.wake.wait(timeout: pollInterval)
            } else {
                // Beside the scheduler, which owns the wake-ups: a plain sleep, a second at a time to see a stop.
                let until = time.clock.now.advanced(by: pollInterval)
                while time.clock.now < until && !pipeline.shutdown.isSet { try? await time.sleep(for: .seconds(1)) }
            }
        }
    }

    /// A round can take minutes (preparing hundreds of photos, applying their answers): the loop is alive meanwhile
    /// for the systemd watchdog, as the scheduler is while its batches are processed.
    private func beating<T: Sendable>(_ body: () async -> T) async -> T {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [pulse = pipeline.pulse] in
                while !Task.isCancelled {
                    pulse.beat()
                    try? await time.sleep(for: .seconds(5))
                }
            }
            let result = await body()
            group.cancelAll()
            return result
        }
    }

    /// Photos processed the usual way, a claim's worth (`batch_size`) at a time: each commit and its files stay small.
    private func process(_ jobs: [ClaimedJob]) async {
        var start = 0
        while start < jobs.count {
            let end = min(jobs.count, start + max(1, pipeline.settings.batchSize))
            await pipeline.process(batch: Array(jobs[start..<end]))
            start = end
        }
    }

    // MARK: Submitting

    /// The daemon sends a batch once photos stop arriving for a poll interval (a backlog being copied in goes as one
    /// batch), or as soon as a full batch is waiting.
    func gathered(now: Date) -> Bool {
        guard let due = try? queue.duePhotos(now: now), due.count > 0 else { return false }
        guard due.count < maxPhotos, let newest = due.newest else { return true }
        return now.timeIntervalSince(newest) >= Double(pollInterval.components.seconds)
    }

    /// Claims due photos and submits them as batches of up to `maxPhotos`; returns how many photos went, and whether
    /// Gemini failed to answer (or refused) a submission.
    func submitDue() async -> (sent: Int, failed: Bool) {
        var sent = 0
        while !pipeline.shutdown.isSet {
            let jobs: [ClaimedJob]
            do {
                jobs = try pipeline.store.claim(
                    limit: maxPhotos, provider: provider.name, choice: nil, owner: pipeline.owner,
                    lease: pipeline.settings.lease, now: time.now)
            } catch {
                logger.error("Cannot claim jobs", metadata: ["error": "\(error)"])
                return (sent, false)
            }
            guard !jobs.isEmpty else { return (sent, false) }
            pipeline.holdLeases(on: jobs.map(\.id))
            defer { pipeline.dropLeases(on: jobs.map(\.id)) }
            // A photo whose answer is already saved (a batch applied before a crash) is replayed, not sent again.
            let replay = jobs.filter { job in
                (try? pipeline.store.usableResponse(jobID: job.id, provider: provider.name, model: provider.model))
                    != nil
            }
            if !replay.isEmpty { await process(replay) }

            var requests: [GeminiBatchClient.Request] = []
            var ready: [ClaimedJob] = []
            var unprepared: [ClaimedJob] = []
            for job in jobs where !replay.contains(job) {
                guard case .success(let bytes) = pipeline.readPhoto(job),
                    case .success(let photo) = await prepareOffPool(
                        bytes, preset: client.provider.preset,
                        maxPixels: pipeline.settings.maxPixels)
                else {
                    unprepared.append(job)
                    continue
                }
                requests.append(
                    .init(key: Self.key(job), photo: PhotoUpload(bytes: photo.jpeg, mimeType: "image/jpeg")))
                ready.append(job)
            }
            // The usual path ends a photo that cannot be read or prepared, before any request.
            if !unprepared.isEmpty { await process(unprepared) }
            guard !ready.isEmpty else { continue }
            guard await submit(ready, requests: requests) else { return (sent, true) }
            sent += ready.count
            if jobs.count < maxPhotos { return (sent, false) }
        }
        return (sent, false)
    }

    /// Records the batch, submits it, saves its name. False when it could not be submitted (its photos are back).
    private func submit(_ jobs: [ClaimedJob], requests: [GeminiBatchClient.Request]) async -> Bool {
        let batch: ProviderBatch
        do {
            batch = try queue.openBatch(provider: provider.name, jobs: jobs, owner: pipeline.owner, now: time.now)
        } catch {
            logger.error("Cannot record a batch; its photos stay queued", metadata: ["error": "\(error)"])
            _ = try? pipeline.store.finish(
                jobs.map {
                    JobOutcome(job: $0, result: .released(nil, message: "batch not recorded", refundAttempt: false))
                },
                shelfOf: { _ in nil }, now: time.now)
            return false
        }
        Failpoint.hit("batch_before_submit")
        do {
            let status = try await client.create(displayName: batch.displayName, requests: requests)
            Failpoint.hit("batch_after_submit")
            try queue.recordBatchName(id: batch.id, name: status.name, state: status.state.word, now: time.now)
            pipeline.health.answered(provider.name)
            logger.info(
                "Batch submitted",
                metadata: [
                    "event": "batch_submitted", "batch": "\(status.name)",
                    "photos": "\(jobs.count)", "display_name": "\(batch.displayName)",
                ])
            return true
        } catch let error as PhotoError {
            pipeline.health.failed(provider.name, error: error, probe: false) // status shows why; submissions wait
            if FailurePolicy.isOutage(error) {
                // It may have arrived: the next round looks for it by its display name before taking the photos back.
                logger.warning(
                    "Batch submission unanswered; it is looked for again",
                    metadata: [
                        "display_name": "\(batch.displayName)", "error": "\(error.message)",
                    ])
            } else {
                logger.error(
                    "Gemini refused the batch; its photos stay queued", metadata: ["error": "\(error.message)"])
                _ = try? queue.closeBatch(
                    id: batch.id, state: "unsent", answered: false, owner: pipeline.owner,
                    lease: pipeline.settings.lease, now: time.now)
            }
            return false
        } catch {
            logger.error("Cannot save the batch's name", metadata: ["error": "\(error)"])
            return false
        }
    }

    static func key(_ job: ClaimedJob) -> String { "job-\(job.id)" }

    // MARK: Polling

    /// Asks about every batch in flight; finished ones are applied or give their photos back. True when Gemini could
    /// not be asked.
    package func pollInFlight() async -> Bool {
        guard let batches = try? queue.batchesInFlight(), !batches.isEmpty else { return false }
        var listed: [GeminiBatchStatus]?
        var failed = false
        for batch in batches {
            if pipeline.shutdown.isSet { return failed }
            guard let name = batch.name else {
                // Submitted, but its name was never saved: find it by display name, else give its photos back.
                if listed == nil { listed = try? await client.list() }
                guard let listed else { failed = true; continue }
                if let found = listed.first(where: { $0.displayName == batch.displayName }) {
                    try? queue.recordBatchName(id: batch.id, name: found.name, state: found.state.word, now: time.now)
                    logger.info("Found a batch whose name was not saved", metadata: ["batch": "\(found.name)"])
                } else if time.now.timeIntervalSince(batch.createdAt) > unsentAfter {
                    _ = try? queue.closeBatch(
                        id: batch.id, state: "unsent", answered: false, owner: pipeline.owner,
                        lease: pipeline.settings.lease, now: time.now)
                    logger.warning(
                        "A batch never reached Gemini; its photos are queued again",
                        metadata: ["display_name": "\(batch.displayName)"])
                }
                continue
            }
            let status: GeminiBatchStatus
            do { status = try await client.get(name) } catch {
                if error.code == .providerRejected || error.code == .providerModel { // 404: Gemini forgot it
                    close(batch, state: "expired")
                } else {
                    logger.warning(
                        "Cannot ask about a batch; asking again later",
                        metadata: ["batch": "\(name)", "error": "\(error.message)"])
                    failed = true
                }
                continue
            }
            switch status.state {
            case .succeeded:
                await apply(batch, status)
            case .failed, .cancelled, .expired:
                logger.warning(
                    "Batch ended without answers; its photos are queued again",
                    metadata: [
                        "batch": "\(name)", "state": "\(status.state.word)",
                    ])
                close(batch, state: status.state.word)
            case .pending, .running, .unspecified:
                if status.state.word != batch.state {
                    try? queue.recordBatchState(id: batch.id, state: status.state.word, now: time.now)
                }
            }
        }
        return failed
    }

    /// Photos back to the queue, their attempts refunded (the batch's trouble, not theirs).
    private func close(_ batch: ProviderBatch, state: String) {
        do {
            _ = try queue.closeBatch(
                id: batch.id, state: state, answered: false, owner: pipeline.owner,
                lease: pipeline.settings.lease, now: time.now)
        } catch {
            logger.error("Cannot close a batch", metadata: ["error": "\(error)"])
        }
    }

    /// Saves every answer in the journal first, then closes the batch and processes its photos: answered ones the
    /// usual way (replaying the saved answer), the others back to the queue.
    private func apply(_ batch: ProviderBatch, _ status: GeminiBatchStatus) async {
        let lines: [GeminiBatchLine]
        let members: [ClaimedJob]
        do {
            lines = try await client.results(of: status)
            members = try queue.batchJobs(id: batch.id)
        } catch {
            logger.warning(
                "Cannot fetch a batch's results; asking again later",
                metadata: ["batch": "\(status.name)", "error": "\(error)"])
            return
        }
        var byKey: [String: GeminiBatchLine] = [:]
        for line in lines { if let key = line.key { byKey[key] = line } }
        for job in members {
            guard case .response(_, let body) = byKey[Self.key(job)],
                (try? pipeline.store.usableResponse(jobID: job.id, provider: provider.name, model: provider.model))
                    == nil
            else { continue }
            let stages = StageRecorder(store: pipeline.store, job: job, time: time)
            let answers = QueueAnswers(
                store: pipeline.store, job: job,
                attempt: AttemptCounter(store: pipeline.store, job: job, stages: stages, time: time), stages: stages,
                responses: pipeline.settings.responses, logger: logger, time: time)
            _ = answers.save(RawResponse(body: body, receivedAt: time.now), from: provider, latencyMs: 0)
        }
        Failpoint.hit("batch_answers_saved")
        let jobs: [ClaimedJob]
        do {
            jobs = try queue.closeBatch(
                id: batch.id, state: "succeeded", answered: true, owner: pipeline.owner,
                lease: pipeline.settings.lease, now: time.now)
        } catch {
            logger.error("Cannot close a batch", metadata: ["error": "\(error)"])
            return
        }
        pipeline.holdLeases(on: jobs.map(\.id))
        defer { pipeline.dropLeases(on: jobs.map(\.id)) }
        var answered: [ClaimedJob] = []
        var others: [JobOutcome] = []
        for job in jobs {
            switch byKey[Self.key(job)] {
            case .response?:
                answered.append(job)
            case .error(_, let code, let state, let message)?:
                others.append(
                    JobOutcome(
                        job: job, result: ending(client.error(code: code, status: state, message: message), job: job)))
            case .broken?, nil:
                logger.warning(
                    "A photo has no answer in the batch's results; it is sent again",
                    metadata: [
                        "photo.path": "\(job.relativePath)", "batch": "\(status.name)",
                    ])
                others.append(
                    JobOutcome(
                        job: job,
                        result: .released(
                            nil, message: "no answer in the batch's results",
                            refundAttempt: true)))
            }
        }
        if !others.isEmpty {
            do {
                try pipeline.store.finish(
                    others, shelfOf: { ReviewDocument.Photo.shelf(of: $0.relativePath) }, now: time.now)
            } catch {
                logger.error("Cannot put photos back in the queue", metadata: ["error": "\(error)"])
            }
        }
        logger.info(
            "Batch answered",
            metadata: [
                "event": "batch_answered", "batch": "\(status.name)",
                "answers": "\(answered.count)", "photos": "\(jobs.count)",
            ])
        if !answered.isEmpty { await process(answered) }
    }

    /// An error line: the photo's own trouble costs the attempt it was charged at submission (it goes again alone,
    /// up to `max_attempts`); the provider's trouble gives it back.
    private func ending(_ error: PhotoError, job: ClaimedJob) -> JobOutcome.Result {
        pipeline.settings.failures.outcome(
            for: error, jobID: job.id, attempts: job.attempts, charged: true, inBatch: true, now: time.now)
    }

    // MARK: Commands

    /// `shelfd batch cancel NAME`: asks Gemini to cancel; the next poll gives the photos back.
    package func cancel(_ name: String) async throws(PhotoError) {
        try await client.cancel(name)
    }
}
