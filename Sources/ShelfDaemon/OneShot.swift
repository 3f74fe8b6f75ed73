import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfProviders
import ShelfStore
import ShelfWatch

/// `shelfd run` and `shelfd scan`: queue what is there, process everything due, and report.
package struct OneShot {
    package var runtime: Runtime
    package var logger: Logger

    package init(runtime: Runtime, logger: Logger) { self.runtime = runtime; self.logger = logger }

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
        let files = await scanOnce(root: URL(fileURLWithPath: runtime.config.paths.incoming), settings: runtime.config.watchSettings)
        var queued = 0
        for file in files {
            if case .queued = runtime.pipeline.ingest(path: file.path, syncConflict: file.isSyncConflict) { queued += 1 }
        }
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
            let files: [(String, URL)] = isFolder.boolValue
                ? await scanOnce(root: url, settings: settings).map { ($0.path, url) }.sorted { $0.0 < $1.0 }
                : [(url.path, url.deletingLastPathComponent())]
            for (file, base) in files {
                let incoming = URL(fileURLWithPath: runtime.config.paths.incoming)
                let under = file.hasPrefix(incoming.standardizedFileURL.path + "/") ? incoming : base
                if case .queued = runtime.pipeline.ingest(path: file, relativeTo: under) { queued += 1 }
                photos.append((file, try runtime.store.knownSighting(path: file)?.sha256))
            }
        }
        return (try await process(queued: queued), photos)
    }

    private func process(queued: Int) async throws -> Report {
        let pipeline = runtime.pipeline
        let signals = SignalWatch(signals: [SIGTERM, SIGINT]) { _ in
            pipeline.shutdown.set()
            pipeline.wake.notify()
        }
        defer { signals.cancel() }
        let summary = await pipeline.processQueue(untilIdle: true)
        _ = try runtime.store.releaseLeases(owner: ProcessIdentity.current)
        pipeline.writeLibrary()
        let status = try StatusReport.build(config: runtime.config)
        let formatter = ISO8601DateFormatter()
        let warning: String? = switch summary.stop {
        case .idle: nil
        case .shutdown: "Stopped before the queue was empty; the rest stays queued."
        case .providerPaused(let reason): "\(pipeline.lineup.name) is paused: \(reason)"
        case .providerWaiting(let until, let reason):
            "\(pipeline.lineup.name) asks to wait until \(formatter.string(from: until)) (\(reason)); queued photos stay queued. Run again later."
        case .retriesLater(let date):
            "Some photos failed and are retried at \(formatter.string(from: date)) or later; see 'shelfd status'."
        }
        return Report(queued: queued, stop: summary.stop, status: status, warning: warning)
    }
}
