import Foundation
import Logging
import ShelfCore
import ShelfOutputs
import ShelfProviders
import ShelfStore

/// A job's answers, saved in responses/ and the queue before they are acted on: a crash replays them.
struct QueueAnswers: AnswerJournal {
    let store: any AnswerLedger
    /// The job, and the attempt its answers are filed under.
    let progress: JobProgress
    let responses: URL
    let logger: Logger
    let time: TimeSource

    var job: ClaimedJob { progress.job }

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
        let file = responses.appendingPathComponent(
            "\(job.sha256)-\(job.id)-\(progress.attempts)-\(provider.name).json")
        var id: Int64?
        do {
            id = try store.recordResponse(
                jobID: job.id, sha256: job.sha256, provider: provider.name,
                model: provider.model, file: file.path, bytes: raw.body.count,
                body: store.isShared ? raw.body : nil, latencyMs: latencyMs,
                request: raw.latency != nil, now: time.now) // a Batch API job's answer came by no request of its own
            progress.recorded(.matching)
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
