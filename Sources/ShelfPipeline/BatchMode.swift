import Foundation
import Logging
import ShelfCore
import ShelfImaging
import ShelfProviders
import ShelfStore

/// `[gemini] mode = "batch"`: due photos go to Gemini's Batch API, up to `batch_max_photos` in each Batch API job;
/// finished jobs' answers are saved in the queue's journal exactly as a synchronous answer is, then the photos are
/// processed the usual way (`process(batch:)`), which replays the saved answer: parsed, checked, enriched, written.
///
/// Never paid twice: a Batch API job and its photos are recorded before it is submitted, and its name saved as soon as
/// the provider gives it. A Batch API job with no saved name (a crash between the two) is looked for by its display
/// name in the provider's list before its photos may go again.
package struct BatchAPIJobRunner: Sendable {
    package let pipeline: Pipeline
    package let queue: any BatchAPIJobQueue
    package let client: GeminiBatchAPIClient
    package let maxPhotos: Int
    package let pollInterval: Duration
    /// A Batch API job whose submission has no answer yet is looked for this long before its photos are taken back.
    package var unsentAfter: TimeInterval = 600
    /// False in sync mode with Batch API jobs still in flight (the mode was switched back): they are collected, no
    /// new one is sent.
    package var submits = true

    package init(
        pipeline: Pipeline, queue: any BatchAPIJobQueue, client: GeminiBatchAPIClient, maxPhotos: Int,
        pollInterval: Duration
    ) {
        self.pipeline = pipeline; self.queue = queue; self.client = client; self.maxPhotos = maxPhotos
        self.pollInterval = pollInterval
    }

    private var logger: Logger { pipeline.logger }
    private var time: TimeSource { pipeline.time }
    /// The provider whose saved answers the usual path replays (same name and model as the Batch API job's requests).
    private var provider: any VisionProvider { pipeline.lineup.channels.first?.provider ?? client.provider }

    /// Rounds of polling and submitting. `untilDone` (`run --batch`): returns once no Batch API job is in flight and no photo
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
                if untilDone && ((try? queue.batchAPIJobsInFlight()) ?? []).isEmpty {
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
            // Gemini out of reach: a pass gives up after a while, leaving Batch API jobs and photos for the next one.
            if pollFailed || submitFailed {
                let since = unreachableSince ?? time.now
                unreachableSince = since
                if untilDone && time.now.timeIntervalSince(since) > pipeline.settings.maxWaitInPass {
                    return PassSummary(
                        stop: .providerWaiting(
                            until: time.now.addingTimeInterval(Double(pollInterval.components.seconds)),
                            "Gemini's Batch API cannot be reached; Batch API jobs in flight and queued photos wait for the next run or the daemon"
                        ))
                }
            } else {
                unreachableSince = nil
            }
            let inFlight = (try? queue.batchAPIJobsInFlight()) ?? []
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

    /// The daemon sends a Batch API job once photos stop arriving for a poll interval (a backlog being copied in goes
    /// as one job), or as soon as a full job's photos are waiting.
    func gathered(now: Date) -> Bool {
        guard let due = try? queue.duePhotos(now: now), due.count > 0 else { return false }
        guard due.count < maxPhotos, let newest = due.newest else { return true }
        return now.timeIntervalSince(newest) >= Double(pollInterval.components.seconds)
    }

    /// Claims due photos and submits them as Batch API jobs of up to `maxPhotos`; returns how many photos went, and whether
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
            // A photo whose answer is already saved (a Batch API job applied before a crash) is replayed, not sent again.
            let replay = jobs.filter { job in
                (try? pipeline.store.usableResponse(jobID: job.id, provider: provider.name, model: provider.model))
                    != nil
            }
            if !replay.isEmpty { await process(replay) }

            var requests: [GeminiBatchAPIClient.Request] = []
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

    /// Records the Batch API job, submits it, saves its name. False when it could not be submitted (its photos are back).
    private func submit(_ jobs: [ClaimedJob], requests: [GeminiBatchAPIClient.Request]) async -> Bool {
        let apiJob: BatchAPIJob
        do {
            apiJob = try queue.openBatchAPIJob(
                provider: provider.name, jobs: jobs, owner: pipeline.owner, now: time.now)
        } catch {
            logger.error("Cannot record a Batch API job; its photos stay queued", metadata: ["error": "\(error)"])
            _ = try? pipeline.store.finish(
                jobs.map {
                    JobOutcome(
                        job: $0, result: .released(nil, message: "Batch API job not recorded", refundAttempt: false))
                },
                shelfOf: { _ in nil }, now: time.now)
            return false
        }
        Failpoint.hit("batch_api_job_before_submit")
        do {
            let status = try await client.create(displayName: apiJob.displayName, requests: requests)
            Failpoint.hit("batch_api_job_after_submit")
            try queue.recordBatchAPIJobName(id: apiJob.id, name: status.name, state: status.state.word, now: time.now)
            pipeline.health.answered(provider.name)
            logger.info(
                "Batch API job submitted",
                metadata: [
                    "event": "batch_api_job_submitted", "batch_api_job": "\(status.name)",
                    "photos": "\(jobs.count)", "display_name": "\(apiJob.displayName)",
                ])
            return true
        } catch let error as PhotoError {
            pipeline.health.failed(provider.name, error: error, probe: false) // status shows why; submissions wait
            if FailurePolicy.isOutage(error) {
                // It may have arrived: the next round looks for it by its display name before taking the photos back.
                logger.warning(
                    "Batch API job submission unanswered; it is looked for again",
                    metadata: [
                        "display_name": "\(apiJob.displayName)", "error": "\(error.message)",
                    ])
            } else {
                logger.error(
                    "Gemini refused the Batch API job; its photos stay queued", metadata: ["error": "\(error.message)"])
                _ = try? queue.closeBatchAPIJob(
                    id: apiJob.id, state: "unsent", answered: false, owner: pipeline.owner,
                    lease: pipeline.settings.lease, now: time.now)
            }
            return false
        } catch {
            logger.error("Cannot save the Batch API job's name", metadata: ["error": "\(error)"])
            return false
        }
    }

    static func key(_ job: ClaimedJob) -> String { "job-\(job.id)" }

    // MARK: Polling

    /// Asks about every Batch API job in flight; finished ones are applied or give their photos back. True when Gemini could
    /// not be asked.
    package func pollInFlight() async -> Bool {
        guard let inFlight = try? queue.batchAPIJobsInFlight(), !inFlight.isEmpty else { return false }
        var listed: [GeminiBatchAPIJobStatus]?
        var failed = false
        for apiJob in inFlight {
            if pipeline.shutdown.isSet { return failed }
            guard let name = apiJob.name else {
                // Submitted, but its name was never saved: find it by display name, else give its photos back.
                if listed == nil { listed = try? await client.list() }
                guard let listed else { failed = true; continue }
                if let found = listed.first(where: { $0.displayName == apiJob.displayName }) {
                    try? queue.recordBatchAPIJobName(
                        id: apiJob.id, name: found.name, state: found.state.word, now: time.now)
                    logger.info(
                        "Found a Batch API job whose name was not saved", metadata: ["batch_api_job": "\(found.name)"])
                } else if time.now.timeIntervalSince(apiJob.createdAt) > unsentAfter {
                    _ = try? queue.closeBatchAPIJob(
                        id: apiJob.id, state: "unsent", answered: false, owner: pipeline.owner,
                        lease: pipeline.settings.lease, now: time.now)
                    logger.warning(
                        "A Batch API job never reached Gemini; its photos are queued again",
                        metadata: ["display_name": "\(apiJob.displayName)"])
                }
                continue
            }
            let status: GeminiBatchAPIJobStatus
            do { status = try await client.get(name) } catch {
                if error.code == .providerRejected || error.code == .providerModel { // 404: Gemini forgot it
                    close(apiJob, state: "expired")
                } else {
                    logger.warning(
                        "Cannot ask about a Batch API job; asking again later",
                        metadata: ["batch_api_job": "\(name)", "error": "\(error.message)"])
                    failed = true
                }
                continue
            }
            switch status.state {
            case .succeeded:
                await apply(apiJob, status)
            case .failed, .cancelled, .expired:
                logger.warning(
                    "Batch API job ended without answers; its photos are queued again",
                    metadata: [
                        "batch_api_job": "\(name)", "state": "\(status.state.word)",
                    ])
                close(apiJob, state: status.state.word)
            case .pending, .running, .unspecified:
                if status.state.word != apiJob.state {
                    try? queue.recordBatchAPIJobState(id: apiJob.id, state: status.state.word, now: time.now)
                }
            }
        }
        return failed
    }

    /// Photos back to the queue, their attempts refunded (the Batch API job's trouble, not theirs).
    private func close(_ apiJob: BatchAPIJob, state: String) {
        do {
            _ = try queue.closeBatchAPIJob(
                id: apiJob.id, state: state, answered: false, owner: pipeline.owner,
                lease: pipeline.settings.lease, now: time.now)
        } catch {
            logger.error("Cannot close a Batch API job", metadata: ["error": "\(error)"])
        }
    }

    /// Saves every answer in the journal first, then closes the Batch API job and processes its photos: answered ones the
    /// usual way (replaying the saved answer), the others back to the queue.
    private func apply(_ apiJob: BatchAPIJob, _ status: GeminiBatchAPIJobStatus) async {
        let lines: [GeminiBatchAPIJobLine]
        let members: [ClaimedJob]
        do {
            lines = try await client.results(of: status)
            members = try queue.batchAPIJobPhotos(id: apiJob.id)
        } catch {
            logger.warning(
                "Cannot fetch a Batch API job's results; asking again later",
                metadata: ["batch_api_job": "\(status.name)", "error": "\(error)"])
            return
        }
        var byKey: [String: GeminiBatchAPIJobLine] = [:]
        for line in lines { if let key = line.key { byKey[key] = line } }
        for job in members {
            guard case .response(_, let body) = byKey[Self.key(job)],
                (try? pipeline.store.usableResponse(jobID: job.id, provider: provider.name, model: provider.model))
                    == nil
            else { continue }
            let answers = QueueAnswers(
                store: pipeline.store, progress: JobProgress(store: pipeline.store, job: job, time: time),
                responses: pipeline.settings.responses, logger: logger, time: time)
            _ = answers.save(RawResponse(body: body, receivedAt: time.now), from: provider, latencyMs: 0)
        }
        Failpoint.hit("batch_api_job_answers_saved")
        let jobs: [ClaimedJob]
        do {
            jobs = try queue.closeBatchAPIJob(
                id: apiJob.id, state: "succeeded", answered: true, owner: pipeline.owner,
                lease: pipeline.settings.lease, now: time.now)
        } catch {
            logger.error("Cannot close a Batch API job", metadata: ["error": "\(error)"])
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
                    "A photo has no answer in the Batch API job's results; it is sent again",
                    metadata: [
                        "photo.path": "\(job.relativePath)", "batch_api_job": "\(status.name)",
                    ])
                others.append(
                    JobOutcome(
                        job: job,
                        result: .released(
                            nil, message: "no answer in the Batch API job's results",
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
            "Batch API job answered",
            metadata: [
                "event": "batch_api_job_answered", "batch_api_job": "\(status.name)",
                "answers": "\(answered.count)", "photos": "\(jobs.count)",
            ])
        if !answered.isEmpty { await process(answered) }
    }

    /// An error line: the photo's own trouble costs the attempt it was charged at submission (it goes again alone,
    /// up to `max_attempts`); the provider's trouble gives it back.
    private func ending(_ error: PhotoError, job: ClaimedJob) -> JobOutcome.Result {
        pipeline.settings.failures.outcome(
            for: error, jobID: job.id, attempts: job.attempts, charged: true, inBatchAPIJob: true, now: time.now)
    }

    // MARK: Commands

    /// `shelfd batch cancel NAME`: asks Gemini to cancel; the next poll gives the photos back.
    package func cancel(_ name: String) async throws(PhotoError) {
        try await client.cancel(name)
    }
}
