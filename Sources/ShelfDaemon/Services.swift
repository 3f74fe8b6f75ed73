import AsyncAlgorithms
import Foundation
import Logging
import ServiceLifecycle
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfPipeline
import ShelfStore
import ShelfWatch
import Synchronization
import UnixSignals

/// Set by the handler `Shutdown.rememberEarlySignals` installs; read once the service group listens itself.
private let earlySignal = Atomic<Bool>(false)

/// How `watch`, `run` and `scan` stop: SIGTERM or SIGINT starts a graceful shutdown, services stop in the
/// reverse of their order, and requests in flight get `grace` to finish; then everything still running is
/// cancelled, and the photos it held go back to the queue.
package enum Shutdown {
    package static let grace: Duration = .seconds(25)

    /// Called first by a command that ends in `run` or `runPass`: a SIGTERM or SIGINT that arrives while the
    /// process starts (store opened and migrated, files caught up) is remembered, and stops the group gracefully
    /// as soon as it runs. Without it the signal's default action kills the process before the group listens.
    package static func rememberEarlySignals() {
        _ = earlySignal.load(ordering: .relaxed) // the global exists before a handler touches it
        for number in [SIGTERM, SIGINT] {
            signal(number) { _ in earlySignal.store(true, ordering: .relaxed) }
        }
    }

    /// Runs `services` in one `ServiceGroup` until they end or the process is asked to stop.
    /// A service that returns on its own ends the group (an error: the daemon's services run until stopped).
    package static func run(_ services: [any Service], grace: Duration = grace, logger: Logger) async throws {
        try await run(services.map { .init(service: $0) }, grace: grace, logger: logger)
    }

    private static func run(
        _ services: [ServiceGroupConfiguration.ServiceConfiguration], grace: Duration,
        logger: Logger
    ) async throws {
        // Services start once the group listens for signals; this one hands over a signal that came before.
        let early = ClosureService {
            if !earlySignal.load(ordering: .relaxed) { try? await gracefulShutdown() }
        }
        var configuration = ServiceGroupConfiguration(
            services: services + [.init(service: early, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = grace
        try await ServiceGroup(configuration: configuration).run()
    }

    /// `run` and `scan`: `work` is the group's one service; `stop` is what a graceful shutdown does to it.
    package static func runPass<T: Sendable>(
        grace: Duration = grace, logger: Logger, stop: @escaping @Sendable () -> Void,
        _ work: @escaping @Sendable () async -> T
    ) async throws -> T? {
        let result = Outcome<T>()
        let pass = ClosureService {
            let value = await withGracefulShutdownHandler {
                await work()
            } onGracefulShutdown: {
                stop()
            }
            result.value.withLock { $0 = value }
        }
        try await run(
            [.init(service: pass, successTerminationBehavior: .gracefullyShutdownGroup)], grace: grace, logger: logger)
        return result.value.withLock { $0 }
    }

    private final class Outcome<T: Sendable>: Sendable {
        let value = Mutex<T?>(nil)
    }
}

/// The queue's processing in `watch`: the configured provider's scheduler, the jobs stranded by a
/// stopped `--provider` process (every 60 s), and the shelves' rounds closed once quiet (every 30 s). A graceful shutdown stops both from claiming; their
/// requests in flight finish (or are cancelled when the grace ends).
package final class SchedulerService: Service {
    let pipeline: Pipeline
    let stranded: StrandedJobs
    /// True once every request in flight finished before the grace ended.
    package var drained: Bool { finished.load(ordering: .relaxed) }
    private let finished = Atomic<Bool>(false)

    /// Batch mode: photos go to Gemini's Batch API instead of a request each.
    let batchAPIJobs: BatchAPIJobRunner?

    package init(pipeline: Pipeline, stranded: StrandedJobs, batchAPIJobs: BatchAPIJobRunner? = nil) {
        self.pipeline = pipeline; self.stranded = stranded; self.batchAPIJobs = batchAPIJobs
    }

    package func run() async {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    if let runner = self.batchAPIJobs, runner.submits {
                        _ = await runner.pass(untilDone: false); return
                    }
                    _ = await self.pipeline.processQueue(untilIdle: false, keepsLeases: false)
                }
                // Sync mode with Batch API jobs left in flight from batch mode: they are still collected.
                if let runner = self.batchAPIJobs, !runner.submits {
                    group.addTask { _ = await runner.pass(untilDone: false) }
                }
                group.addTask { await self.stranded.keepFinishing() }
                group.addTask { await cancelWhenGracefulShutdown { await self.pipeline.keepClosingRounds() } }
            }
        } onGracefulShutdown: { [pipeline, stranded] in
            pipeline.stop()
            stranded.stop()
        }
        finished.store(!Task.isCancelled, ordering: .relaxed)
    }
}

/// Keeps the leases of the photos in hand alive; it stops after the scheduler, so draining batches keep theirs.
struct LeaseHeartbeatService: Service {
    let pipeline: Pipeline
    func run() async { await cancelWhenGracefulShutdown { await pipeline.heartbeatLoop() } }
}

/// On a shared store, the node that writes the files for people keeps them current from the database: the result
/// of every photo any worker finished, and library.json, review/ and exports/ whenever the library or the review
/// queue changed (another worker's batch, a decision made on another machine). A turn is two small queries when
/// nothing changed; it comes every `interval`, or sooner when `pipeline.filesWake` is notified.
struct SharedFilesService: Service {
    let pipeline: Pipeline
    var interval: Duration = .seconds(3)

    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await pipeline.keepFilesCurrent()
                await pipeline.filesWake.wait(timeout: interval)
            }
        }
    }
}

/// The daily prune (`[pipeline] keep_days`).
struct PruningService: Service {
    let pruning: Pruning
    func run() async { await pruning.daily() }
}

/// The folder watcher: stable files are queued; once the startup scan is queued, systemd hears READY=1.
struct WatcherService: Service {
    let runtime: Runtime
    let logger: Logger

    func run() async {
        let config = runtime.config, pipeline = runtime.pipeline, store = runtime.store
        let watcher = FolderWatcher(
            root: URL(fileURLWithPath: config.paths.incoming), settings: config.watchSettings,
            logger: Logger(label: "shelfd.watch"), time: pipeline.time)
        await withTaskCancellationOrGracefulShutdownHandler {
            var ready = false
            for await event in watcher.events() {
                switch event {
                case .stable(let files):
                    pipeline.ingest(files.map { Pipeline.IncomingFile(path: $0.path, syncConflict: $0.isSyncConflict) })
                case .modeChanged(let mode, let reason):
                    logger.notice("Watch mode", metadata: ["watch.mode": "\(mode.rawValue)", "reason": "\(reason)"])
                    try? store.workers.heartbeat(
                        owner: ProcessIdentity.current, watchMode: mode.rawValue, now: pipeline.time.now)
                case .rescanned(let count):
                    logger.debug("Full scan done", metadata: ["files": "\(count)"])
                    pipeline.forgetVanishedProblems()
                    if !ready {
                        ready = true // the startup scan is queued: systemd may call us started
                        // The status line goes first, so whoever hears READY=1 already has it.
                        if let status = try? StatusReport.build(config: config, now: pipeline.time.now) {
                            SystemdNotify.send("STATUS=\(StatusReport.summary(status))")
                        }
                        SystemdNotify.send("READY=1")
                    }
                }
            }
        } onCancelOrGracefulShutdown: {
            watcher.stop()
        }
    }
}

/// Tells systemd how things are: STATUS= every few seconds when it changes, and WATCHDOG=1 while the
/// scheduler's loop lives and the database answers. It stops last, so the pings go on while batches drain.
struct SystemdNotifierService: Service {
    let runtime: Runtime
    let logger: Logger

    func run() async {
        let config = runtime.config, store = runtime.store, pipeline = runtime.pipeline
        let watchdog = SystemdNotify.watchdogInterval
        var last = ""
        var stuck = false
        let ticks = AsyncTimerSequence(
            interval: min(watchdog ?? .seconds(10), .seconds(10)), clock: pipeline.time.clock)
        for await _ in ticks.cancelOnGracefulShutdown() {
            if let watchdog {
                // Fed only while the scheduler's loop turns (or rests) and the database answers: a hung
                // loop stops the pings, and systemd restarts the daemon after WatchdogSec.
                let alive = pipeline.pulse.isAlive(resting: pipeline.wake, within: watchdog * 2)
                if alive, (try? store.status.queueCounts(now: pipeline.time.now)) != nil {
                    SystemdNotify.send("WATCHDOG=1")
                    stuck = false
                } else if !alive && !stuck {
                    stuck = true
                    logger.error(
                        "The scheduler's loop is stuck; the systemd watchdog will restart shelfd",
                        metadata: ["event": "scheduler_stuck"])
                }
            }
            if let line = try? StatusReport.summary(
                config: config, chosen: runtime.chosen.provider, store: store, now: pipeline.time.now),
                line != last
            {
                SystemdNotify.send("STATUS=\(line)"); last = line
            }
            try? store.workers.heartbeat(owner: ProcessIdentity.current, watchMode: nil, now: pipeline.time.now)
        }
    }
}

/// The first to hear of a stop (it is last in the group): says so in the log and to systemd.
package struct StopNotice: Service {
    let logger: Logger
    package init(logger: Logger) { self.logger = logger }

    package func run() async {
        do { try await gracefulShutdown() } catch { return } // cancelled: the group ends some other way
        logger.notice("Stopping")
        SystemdNotify.send("STOPPING=1")
    }
}
