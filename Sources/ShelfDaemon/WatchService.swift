import Dispatch
import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfProviders
import ShelfStore
import ShelfWatch

extension Configuration {
    package var watchSettings: WatchSettings {
        WatchSettings(mode: ShelfWatch.WatchMode(rawValue: watch.mode.rawValue) ?? .auto, settle: .milliseconds(watch.settleMs),
                      pollInterval: .seconds(watch.pollIntervalS), rescanInterval: .seconds(watch.rescanIntervalS),
                      extraIgnore: watch.ignore)
    }
}

/// `shelfd watch`: startup rescan, watch, process until SIGTERM/SIGINT, then let requests in flight
/// finish (up to `grace`), put the rest back in the queue, and return.
package struct WatchService {
    package var runtime: Runtime
    package var logger: Logger
    package var grace: Duration = .seconds(25)

    package init(runtime: Runtime, logger: Logger) { self.runtime = runtime; self.logger = logger }

    package func run() async throws {
        let config = runtime.config
        guard let lock = try DaemonLock.acquire(stateFolder: config.paths.state) else {
            let pid = (try? runtime.store.daemonRecord()?.pid).flatMap { $0 }.map { " (pid \($0))" } ?? ""
            throw StartupError("shelfd is already watching\(pid) with the state folder \(config.paths.state). Stop it first, or use 'shelfd status'.")
        }
        defer { withExtendedLifetime(lock) {} }
        let pipeline = runtime.pipeline
        let store = runtime.store
        let owner = ProcessIdentity.current
        try store.registerDaemon(pid: getpid(), owner: owner, watchMode: nil)
        defer { try? store.unregisterDaemon(owner: owner) }
        pipeline.writeLibrary()

        let watcher = FolderWatcher(root: URL(fileURLWithPath: config.paths.incoming), settings: config.watchSettings,
                                    logger: Logger(label: "shelfd.watch"))
        let signals = SignalWatch(signals: [SIGTERM, SIGINT]) { signal in
            logger.notice("Stopping", metadata: ["signal": "\(signal == SIGTERM ? "SIGTERM" : "SIGINT")"])
            SystemdNotify.send("STOPPING=1")
            pipeline.shutdown.set()
            pipeline.wake.notify()
            watcher.stop()
        }
        defer { signals.cancel() }
        logger.notice("Watching", metadata: ["incoming": "\(config.paths.incoming)", "provider": "\(pipeline.lineup.name)",
                                            "model": "\(pipeline.lineup.model)"])

        let scheduler = Task { await pipeline.processQueue(untilIdle: false) }
        let watching = Task {
            var ready = false
            for await event in watcher.events() {
                switch event {
                case .stable(let file):
                    pipeline.ingest(path: file.path, syncConflict: file.isSyncConflict)
                case .modeChanged(let mode, let reason):
                    logger.notice("Watch mode", metadata: ["watch.mode": "\(mode.rawValue)", "reason": "\(reason)"])
                    try? store.updateDaemon(owner: owner, watchMode: mode.rawValue)
                case .rescanned(let count):
                    logger.debug("Full scan done", metadata: ["files": "\(count)"])
                    pipeline.forgetVanishedProblems()
                    if !ready {
                        ready = true                    // the startup scan is queued: systemd may call us started
                        SystemdNotify.send("READY=1")
                        announceStatus(config: config)
                    }
                }
            }
        }
        let housekeeping = Task { await keepSystemdInformed(config: config, chosen: runtime.chosen.provider, store: store) }
        let pruning = Task { [runtime] in await runtime.pruning.daily() }
        let stranded = Task { [runtime] in await StrandedJobs(runtime: runtime).keepFinishing() }

        // Graceful stop: in-flight requests get `grace` to finish, then they are cancelled (and released).
        let result = await withTaskGroup(of: PassSummary?.self) { group in
            group.addTask {
                let summary = await scheduler.value
                await stranded.value                    // its batches in flight finish too
                return summary
            }
            group.addTask {
                await pipeline.shutdown.wait()
                try? await Task.sleep(for: grace)
                scheduler.cancel()
                stranded.cancel()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        watcher.stop()
        watching.cancel()
        housekeeping.cancel()
        pruning.cancel()
        _ = await watching.value
        let released = try store.releaseLeases(owner: owner)
        pipeline.writeLibrary()
        logger.notice("Stopped", metadata: ["released": "\(released)", "drained": "\(result != nil)"])
    }

    private func announceStatus(config: Configuration) {
        if let status = try? StatusReport.build(config: config) {
            SystemdNotify.send("STATUS=\(StatusReport.summary(status))")
        }
    }

    /// STATUS= every few seconds when it changes, and WATCHDOG=1 while the database answers.
    private func keepSystemdInformed(config: Configuration, chosen: Configuration.Provider, store: Store) async {
        let watchdog = SystemdNotify.watchdogInterval
        var last = ""
        var stuck = false
        while !Task.isCancelled {
            try? await Task.sleep(for: min(watchdog ?? .seconds(10), .seconds(10)))
            if let watchdog {
                // Fed only while the scheduler's loop turns (or rests) and the database answers: a hung
                // loop stops the pings, and systemd restarts the daemon after WatchdogSec.
                let alive = runtime.pipeline.pulse.isAlive(resting: runtime.pipeline.wake, within: watchdog * 2)
                if alive, (try? store.queueCounts()) != nil {
                    SystemdNotify.send("WATCHDOG=1")
                    stuck = false
                } else if !alive && !stuck {
                    stuck = true
                    logger.error("The scheduler's loop is stuck; the systemd watchdog will restart shelfd",
                                 metadata: ["event": "scheduler_stuck"])
                }
            }
            if let line = try? StatusReport.summary(config: config, chosen: chosen, store: store), line != last {
                SystemdNotify.send("STATUS=\(line)"); last = line
            }
            try? store.updateDaemon(owner: ProcessIdentity.current, watchMode: nil)
        }
    }
}

/// Runs `handler` on a dispatch queue for each listed signal (instead of the default: dying).
final class SignalWatch {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "shelfd.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    func cancel() { sources.forEach { $0.cancel() } }
}
