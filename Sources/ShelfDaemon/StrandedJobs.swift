import AsyncAlgorithms
import Foundation
import Logging
import ServiceLifecycle
import ShelfConfig
import ShelfCore
import ShelfEnrichment
import ShelfPipeline
import ShelfStore
import Synchronization

/// Finishes jobs left behind by a `scan --provider P` or `rescan --provider P` that stopped before it was
/// done (killed, stopped, crashed): `watch` and `run` take them whatever their own provider, and ask the
/// provider each job asked for. Its lineup is built the first time it is needed, then kept.
package final class StrandedJobs: Sendable {
    private let runtime: Runtime
    /// The pipelines built so far; after `stop()`, a pipeline built later starts stopped.
    private let pipelines = Mutex<(built: [String: Pipeline], stopped: Bool)>(([:], false))
    /// How each provider's last pass ended: a wait that goes on is logged once, not every minute.
    private let lastStops = Mutex<[String: PassSummary.Stop]>([:])

    package init(runtime: Runtime) { self.runtime = runtime }

    /// Processes every stranded job until none is due (or the process is stopping). Returns how each
    /// provider's pass ended.
    @discardableResult
    package func finish() async -> [String: PassSummary.Stop] {
        let main = runtime.pipeline
        let choices: [String]
        do {
            choices = try runtime.store.queue.strandedProviderChoices(
                isAlive: ProcessIdentity.aliveCheck(sharedStore: runtime.store.isShared))
        } catch {
            main.logger.warning("Cannot look for stranded jobs", metadata: ["error": "\(error)"])
            return [:]
        }
        var stops: [String: PassSummary.Stop] = [:]
        for choice in choices where !main.shutdown.isSet {
            guard let pipeline = pipeline(for: choice) else { continue }
            let last = lastStops.withLock { $0[choice] }
            if last == nil || last == .idle {
                main.logger.notice(
                    "Finishing jobs another process left unfinished",
                    metadata: ["event": "stranded_jobs", "provider": "\(choice)"])
            }
            let stop = await pipeline.processQueue(untilIdle: true).stop
            stops[choice] = stop
            lastStops.withLock { $0[choice] = stop }
            if stop != .idle && stop != .shutdown && stop != last {
                main.logger.warning(
                    "Jobs that asked for another provider wait",
                    metadata: [
                        "provider": "\(choice)", "stop": "\(stop)",
                    ])
            }
        }
        return stops
    }

    /// `watch`: at start, then every `interval`, until graceful shutdown or cancellation.
    package func keepFinishing(every interval: Duration = .seconds(60)) async {
        await finish()
        for await _ in AsyncTimerSequence(interval: interval, clock: runtime.pipeline.time.clock)
            .cancelOnGracefulShutdown()
        {
            await finish()
        }
    }

    /// The process is stopping: passes in progress stop claiming, their requests in flight finish.
    package func stop() {
        let built = pipelines.withLock { state in
            state.stopped = true
            return Array(state.built.values)
        }
        for pipeline in built { pipeline.stop() }
    }

    /// The pipeline for jobs that asked for `choice`: the configured settings, sources and owner, that
    /// provider's lineup. It stops when the main pipeline does.
    private func pipeline(for choice: String) -> Pipeline? {
        if let known = pipelines.withLock({ $0.built[choice] }) { return known }
        let main = runtime.pipeline
        guard let kind = Configuration.Provider(rawValue: choice) else {
            main.logger.error(
                "Jobs ask for an unknown provider; 'shelfd rescan --provider' them again",
                metadata: ["provider": "\(choice)"])
            return nil
        }
        let pipeline: Pipeline
        do {
            let lineup = try Runtime.makeLineup(
                config: runtime.config, secrets: runtime.secrets, logger: main.logger,
                choice: kind, memory: StoredProviderMemory(store: runtime.store),
                limits: runtime.store, time: main.time)
            try Runtime.checkKeys(
                of: lineup, store: runtime.store, secrets: runtime.secrets, logger: main.logger, now: main.time.now)
            pipeline = Pipeline(
                settings: main.settings, store: runtime.store.queue, library: runtime.store.library,
                providers: runtime.store.providers,
                sharedResults: runtime.store.results, lineup: lineup, choice: kind,
                enricher: main.enricher, logger: main.logger, owner: main.owner,
                time: main.time, onIdle: main.onIdle)
        } catch {
            main.logger.error(
                "Cannot set up the provider stranded jobs asked for",
                metadata: ["provider": "\(choice)", "error": "\(error)"])
            return nil
        }
        let stopped = pipelines.withLock { state in
            state.built[choice] = pipeline
            return state.stopped
        }
        if stopped || main.shutdown.isSet { pipeline.stop() } // a stop of the process stops this pipeline too
        return pipeline
    }
}
