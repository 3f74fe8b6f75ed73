import Foundation
import Logging
import ServiceLifecycle
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfOutputs
import ShelfPipeline
import ShelfProviders
import ShelfStore
import ShelfWatch

extension Configuration {
    package var watchSettings: WatchSettings {
        WatchSettings(
            mode: ShelfWatch.WatchMode(rawValue: watch.mode.rawValue) ?? .auto, settle: .milliseconds(watch.settleMs),
            pollInterval: .seconds(watch.pollIntervalS), rescanInterval: .seconds(watch.rescanIntervalS),
            extraIgnore: watch.ignore)
    }
}

/// `shelfd watch`: startup rescan, watch, process until SIGTERM/SIGINT, then let requests in flight
/// finish (up to `grace`), put the rest back in the queue, and return.
package struct WatchService {
    package var runtime: Runtime
    package var logger: Logger
    package var grace: Duration = Shutdown.grace
    /// Services of other targets that live as long as the daemon (the web server).
    package var companions: [any Service]

    package init(runtime: Runtime, logger: Logger, companions: [any Service] = []) {
        self.runtime = runtime; self.logger = logger; self.companions = companions
    }

    package func run() async throws {
        let config = runtime.config
        guard let lock = try DaemonLock.acquire(stateFolder: config.paths.state) else {
            let here = (try? runtime.store.workers.all())?.first { $0.host == ProcessIdentity.host }
            let pid = here.map { " (pid \($0.pid))" } ?? ""
            throw StartupError(
                "shelfd is already watching\(pid) with the state folder \(config.paths.state). Stop it first, or use 'shelfd status'."
            )
        }
        defer { withExtendedLifetime(lock) {} }
        let pipeline = runtime.pipeline
        let store = runtime.store
        let owner = ProcessIdentity.current
        let now = pipeline.time.now
        // Workers killed without a word: those of this machine that are gone, and any silent for ten minutes.
        let isAlive = ProcessIdentity.aliveCheck(sharedStore: store.isShared)
        for gone in try store.workers.all() where !isAlive(gone.owner) {
            try store.workers.unregister(owner: gone.owner)
        }
        try store.workers.forget(silentSince: now.addingTimeInterval(-600))
        try store.workers.register(
            WorkerRecord(
                owner: owner, host: ProcessIdentity.host, pid: getpid(), version: ShelfdVersion.current,
                since: now, writesFiles: pipeline.settings.writesFiles, heartbeat: now))
        defer { try? store.workers.unregister(owner: owner) }
        pipeline.writeLibrary(full: true) // whatever a crash left between a commit and its files

        logger.notice(
            "Watching",
            metadata: [
                "incoming": "\(config.paths.incoming)", "provider": "\(pipeline.lineup.name)",
                "model": "\(pipeline.lineup.model)",
            ])

        // Started in this order, stopped in the reverse one on SIGTERM/SIGINT: the notice, the watcher (nothing
        // new is queued), the scheduler (nothing more is claimed; requests in flight get `grace`), then the
        // prune, the lease heartbeat and the systemd notifier, which go on while batches drain.
        let scheduler = SchedulerService(
            pipeline: pipeline, stranded: StrandedJobs(runtime: runtime),
            batchAPIJobs: try runtime.batchAPIJobRunner())
        let jobNotifications: [any Service] =
            config.store.postgres.map { url in
                [
                    JobNotificationService(
                        endpoint: StoreAccess.endpoint(url, secrets: runtime.secrets), pipeline: pipeline,
                        logger: logger)
                ]
            } ?? []
        // On a shared store, the nodes that write the files for people push; the others leave it to them.
        let hardcover: [any Service] =
            config.hardcover.push == .background && pipeline.settings.writesFiles
            ? HardcoverDesk(config: config, secrets: runtime.secrets, store: store, time: pipeline.time).map {
                [
                    HardcoverService(
                        desk: $0, time: pipeline.time, worksChanged: pipeline.worksChanged,
                        logger: Logger(label: "shelfd.hardcover"))
                ]
            } ?? []
            : []
        let services: [any Service] =
            [
                SystemdNotifierService(runtime: runtime, logger: logger),
                LeaseHeartbeatService(pipeline: pipeline),
                PruningService(pruning: runtime.pruning),
            ] + (store.isShared && pipeline.settings.writesFiles ? [SharedFilesService(pipeline: pipeline)] : []) + [
                scheduler
            ] + jobNotifications + [
                WatcherService(runtime: runtime, logger: logger)
            ] + hardcover + companions + [
                StopNotice(logger: logger)
            ]
        var failure: (any Error)?
        do { try await Shutdown.run(services, grace: grace, logger: logger) } catch { failure = error }
        let released = try store.queue.releaseLeases(owner: owner, now: pipeline.time.now)
        pipeline.writeLibrary()
        pipeline.files.flush()
        logger.notice("Stopped", metadata: ["released": "\(released)", "drained": "\(scheduler.drained)"])
        if let failure { throw failure }
    }
}
