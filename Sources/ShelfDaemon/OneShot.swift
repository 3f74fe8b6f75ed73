import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDigest
import ShelfOutputs
import ShelfPipeline
import ShelfProviders
import ShelfStore
import ShelfWatch

/// `shelfd run` and `shelfd scan`: queue what is there, process everything due, and report.
package struct OneShot {
    package var runtime: Runtime
    package var logger: Logger
    /// `run --batch`: due photos go to Gemini's Batch API and the pass waits for the Batch API jobs' answers.
    package var batchMode = false

    package init(runtime: Runtime, logger: Logger, batchMode: Bool = false) {
        self.runtime = runtime; self.logger = logger; self.batchMode = batchMode
    }

    /// What a pass did, for the command to print and to pick its exit code.
    package struct Report: Sendable {
        package var queued: Int
        package var stop: PassSummary.Stop
        package var status: StatusDocument
        /// A sentence for a person when the pass could not finish everything.
        package var warning: String?
    }

    /// `run`: rescan incoming/, then process.
    package func run() async throws -> Report {
        runtime.pruning.prune()
        let files = await scanOnce(
            root: URL(fileURLWithPath: runtime.config.paths.incoming), settings: runtime.config.watchSettings,
            time: runtime.time)
        let queued = runtime.pipeline.ingest(
            files.map { Pipeline.IncomingFile(path: $0.path, syncConflict: $0.isSyncConflict) }
        )
        .count(where: { if case .queued = $0 { true } else { false } })
        runtime.pipeline.forgetVanishedProblems()
        return try await process(queued: queued)
    }

    /// `scan PATH…`: queue these files (folders: every image file under them), then process.
    /// Returns the photos' hashes in the order given, for printing their books.
    package func scan(paths: [String]) async throws -> (Report, [(path: String, sha256: String?)]) {
        var photos: [(String, String?)] = []
        var queued = 0
        let settings = runtime.config.watchSettings
        for path in paths {
            let url = URL(fileURLWithPath: path).standardizedFileURL
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
                throw StartupError("\(path): no such file or folder.")
            }
            let files: [(String, URL)] =
                isFolder.boolValue
                ? await scanOnce(root: url, settings: settings, time: runtime.time).map { ($0.path, url) }
                    .sorted { $0.0 < $1.0 }
                : [(url.path, url.deletingLastPathComponent())]
            for (file, base) in files {
                let incoming = URL(fileURLWithPath: runtime.config.paths.incoming)
                let under = file.hasPrefix(incoming.standardizedFileURL.path + "/") ? incoming : base
                if case .queued = runtime.pipeline.ingest(path: file, relativeTo: under) { queued += 1 }
                let sha = try runtime.store.queue.knownSighting(path: file)?.sha256
                // `scan --provider P` on a photo another provider already read: read it again with P.
                if let choice = runtime.pipeline.choice, let sha,
                    let job = try runtime.store.queue.finishedJob(sha256: sha),
                    job.state == .done || job.state == .review, job.provider != choice.rawValue,
                    try runtime.store.queue.rescan(sha256: sha, providerChoice: choice.rawValue, now: runtime.time.now)
                        != nil
                {
                    queued += 1
                }
                photos.append((file, sha))
            }
        }
        return (try await process(queued: queued), photos)
    }

    /// `rescan PHOTO…`: each photo (a path, or the start of its hash) gets a new job, with this process's
    /// provider; then the queue is processed. Earlier results are kept under results/.history/.
    package func rescan(photos: [String]) async throws -> (Report, [(path: String, sha256: String?)]) {
        var found: [(String, String?)] = []
        var queued = 0
        for photo in photos {
            switch try PhotoRescan.queue(
                photo, providerChoice: runtime.pipeline.choice?.rawValue, store: runtime.store, now: runtime.time.now)
            {
            case .queued(_, let sha):
                queued += 1
                found.append((photo, sha))
            case .alreadyQueued(let sha):
                found.append((photo, sha)) // already queued: it is processed below
            }
        }
        return (try await process(queued: queued), found)
    }

    private func process(queued: Int) async throws -> Report {
        let pipeline = runtime.pipeline
        let stranded = StrandedJobs(runtime: runtime)
        let runner = try runtime.batchAPIJobRunner(force: batchMode)
        // SIGTERM/SIGINT: the same graceful stop as the daemon's (nothing more claimed, requests in flight
        // get the grace to finish). Batch API jobs in flight go on at the provider; the next pass or the daemon polls
        // them.
        let summary =
            try await Shutdown.runPass(
                logger: logger,
                stop: {
                    pipeline.stop(); stranded.stop()
                }
            ) {
                if let runner, runner.submits { return await runner.pass(untilDone: true) }
                _ = await runner?.pollInFlight() // sync mode: Batch API jobs left from batch mode are collected
                let summary = await pipeline.processQueue(untilIdle: true)
                if pipeline.choice == nil && summary.stop != .shutdown {
                    await stranded.finish() // what a stopped `--provider` process left
                }
                return summary
            } ?? PassSummary(stop: .shutdown)
        _ = try runtime.store.queue.releaseLeases(owner: ProcessIdentity.current, now: runtime.time.now)
        pipeline.closeDueRounds()
        pipeline.writeLibrary(full: true)
        let now = runtime.time.now
        let status = try StatusReport.build(config: runtime.config, now: now)
        let formatter = ISO8601DateFormatter()
        let unrecorded = pipeline.unrecorded
        if unrecorded.count > 0 {
            return Report(
                queued: queued, stop: summary.stop, status: status,
                warning:
                    "\(unrecorded.count) photo\(unrecorded.count == 1 ? "" : "s") (\(unrecorded.first.joined(separator: ", "))) "
                    + "could not be recorded in the database (see the log); they stay in incoming/ for the next run.")
        }
        let warning: String? =
            switch summary.stop {
            case .idle: nil
            case .shutdown: "Stopped before the queue was empty; the rest stays queued."
            case .providerPaused(let reason): "\(pipeline.lineup.name) is paused: \(reason)"
            case .providerWaiting(let until, let reason):
                "\(pipeline.lineup.name) asks to wait until \(formatter.string(from: until)) (\(reason)); queued photos stay queued. Run again later."
            case .retriesLater(let date):
                "Some photos failed and are retried at \(formatter.string(from: date)) or later; see 'shelfd status'."
            case .providerDown:
                (status.providers.compactMap { StatusReport.outageSentence($0, now: now) }.first
                    ?? "\(pipeline.lineup.name) is down")
                    + ". Nothing is lost: the photos stay queued, no attempt used, for the next run or the daemon."
            }
        // Hybrid finished every photo with the fast provider while the accurate one is down: say so.
        if warning == nil, status.providers.count > 1, let accurate = status.providers.last,
            let down = StatusReport.outageSentence(accurate, now: now)
        {
            return Report(
                queued: queued, stop: summary.stop, status: status,
                warning: down + ". The fast readings wait for review and are read again when it answers.")
        }
        return Report(queued: queued, stop: summary.stop, status: status, warning: warning)
    }
}
