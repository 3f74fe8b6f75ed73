import Foundation
import InMemoryLogging
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon
import ShelfStore
import ShelfPipeline
import ShelfTesting

/// shelfd's machinery in the test's own process, set up from a `ShelfRoot`'s configuration as `watch` sets it up
/// (`Runtime.start`), on a manual clock: the real store, the real providers' clients against the emulators, the real
/// scheduler. Only the clock is the test's, so an outage of minutes, a 60 s window or a lease running out passes in
/// milliseconds. The watcher and the process around it are the binary's: the tests that run it show those.
package final class InProcessShelf: Sendable {
    package let root: ShelfRoot
    package let clock: ManualClock
    package let runtime: Runtime
    package let config: Configuration
    package let secrets: Secrets
    private let logs: InMemoryLogHandler

    package var pipeline: Pipeline { runtime.pipeline }

    /// `owner`: a worker's name of its own, for several in one test (the default is this process's).
    package init(_ root: ShelfRoot, clock: ManualClock, owner: String = ProcessIdentity.current) throws {
        self.root = root
        self.clock = clock
        (config, secrets) = try root.configuration()
        var handler = InMemoryLogHandler()
        handler.logLevel = .info
        logs = handler
        runtime = try Runtime.start(
            config: config, secrets: secrets, logger: Logger(label: "shelfd") { [handler] _ in handler },
            time: clock.time, owner: owner)
    }

    /// What the pipeline logged, a line per entry ("level message key=value …").
    package var logText: String {
        logs.entries.map { entry in
            "\(entry.level) \(entry.message) "
                + entry.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }.joined(separator: "\n")
    }

    /// Records every photo in incoming/, as the watcher hands the pipeline the files that have settled.
    package func recordIncoming() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.incoming.path).sorted()
        pipeline.ingest(names.map { Pipeline.IncomingFile(path: root.incoming.appendingPathComponent($0).path) })
    }

    /// The jobs per state, read on the pipeline's open store (cheap enough to ask at every step of the clock).
    package func queue() throws -> QueueCounts {
        try runtime.store.status.queueCounts(now: clock.time.now)
    }

    /// What `shelfd status --json` says at this moment of the manual clock.
    package func status() throws -> StatusDocument {
        try StatusReport.build(config: config, secrets: secrets, now: clock.time.now)
    }

    /// `watch`'s scheduler runs while `body` does, and is stopped (gracefully) after it.
    @discardableResult
    package func watching<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let scheduler = Task { await pipeline.processQueue(untilIdle: false) }
        do {
            let result = try await body()
            pipeline.stop()
            _ = await scheduler.value
            return result
        } catch {
            pipeline.stop()
            scheduler.cancel()
            _ = await scheduler.value
            throw error
        }
    }

    /// Runs the manual clock until `condition` holds (see `ManualClock.run`). When it does not, the error says what
    /// `otherwise` tells of the state it was left in.
    @discardableResult
    package func runClock(
        until what: String, within limit: Duration, step: Duration = .seconds(60),
        _ condition: @Sendable () async throws -> Bool, otherwise: () throws -> String = { "" }
    ) async throws -> Duration {
        do {
            return try await clock.run(until: what, limit: limit, step: step, condition)
        } catch let timeout as ManualClockTimeout {
            let state = (try? otherwise()) ?? ""
            throw state.isEmpty ? timeout : ManualClockTimeout(description: "\(timeout.description); \(state)")
        }
    }
}
