import AsyncAlgorithms
import Foundation
import Logging
import ServiceLifecycle
import ShelfConfig
import ShelfCore
import ShelfPipeline
import ShelfStore

/// Keeps the database small: the events and saved raw answers of photos finished more than `keepDays` ago
/// are forgotten (`[pipeline] keep_days`; 0 keeps them). Results, the library and its history stay.
package struct Pruning: Sendable {
    package var store: Store
    /// The folder of saved raw answers: only files inside it are deleted.
    package var responses: URL
    package var keepDays: Int
    package var logger: Logger
    /// The date "finished more than `keepDays` ago" is counted from, and the clock of the daily prune.
    package var time: TimeSource

    package init(store: Store, responses: URL, keepDays: Int, logger: Logger, time: TimeSource) {
        self.store = store; self.responses = responses; self.keepDays = keepDays; self.logger = logger; self.time = time
    }

    /// One prune; returns what it removed (nil when off, or the database could not be written).
    @discardableResult
    package func prune() -> PruneReport? {
        guard keepDays > 0 else { return nil }
        let report: PruneReport
        do {
            report = try store.maintenance.prune(
                finishedBefore: time.now.addingTimeInterval(-Double(keepDays) * 86_400))
        } catch {
            logger.warning("Cannot prune old events and saved answers", metadata: ["error": "\(error)"])
            return nil
        }
        let folder = responses.standardizedFileURL.path + "/"
        var deleted = 0
        for file in report.responseFiles where URL(fileURLWithPath: file).standardizedFileURL.path.hasPrefix(folder) {
            if (try? FileManager.default.removeItem(atPath: file)) != nil { deleted += 1 }
        }
        if report.events + report.responses > 0 {
            logger.notice(
                "Pruned finished photos' events and saved answers",
                metadata: [
                    "keep_days": "\(keepDays)", "events": "\(report.events)", "responses": "\(report.responses)",
                    "files": "\(deleted)",
                ])
        }
        return report
    }

    /// `watch`: at start, then once a day, until graceful shutdown or cancellation.
    package func daily() async {
        prune()
        for await _ in AsyncTimerSequence(interval: .seconds(86_400), clock: time.clock).cancelOnGracefulShutdown() {
            prune()
        }
    }
}

extension Runtime {
    /// The prune `[pipeline] keep_days` asks for, on this runtime's store and responses folder.
    package var pruning: Pruning {
        Pruning(
            store: store, responses: URL(fileURLWithPath: config.paths.responses), keepDays: config.pipeline.keepDays,
            logger: pipeline.logger, time: pipeline.time)
    }
}
