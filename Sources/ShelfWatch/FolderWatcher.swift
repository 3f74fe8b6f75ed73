import Foundation
import Logging
import ShelfCore
import Synchronization

/// Watches the incoming folder and reports files that are complete.
///
/// Two threads of our own: the engine (scans, stability, timers; sleeps on a condition until the next
/// deadline on the watcher's clock) and, with inotify, the inotify session (blocked in `next_event(1)`). Nothing
/// blocks the cooperative pool.
package final class FolderWatcher: Sendable {
    private let root: String
    private let settings: WatchSettings
    private let logger: Logger
    private let time: TimeSource
    private let mailbox = Mailbox()
    private let stopRequested = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)

    /// `time`: the clock settle times, gathering and rescans are counted on.
    package init(root: URL, settings: WatchSettings, logger: Logger, time: TimeSource = .system) {
        self.root = canonicalRoot(root)
        self.settings = settings
        self.time = time
        var logger = logger
        logger[metadataKey: "watch.root"] = "\(self.root)"
        self.logger = logger
    }

    /// Starts watching: the startup scan first, then inotify (or polling) and periodic rescans. Call once;
    /// the stream ends after `stop()` or when the consumer stops iterating.
    package func events() -> AsyncStream<WatchEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: WatchEvent.self)
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
            logger.warning("Folder watcher already started; events() returns an empty stream")
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [self] _ in stop() }
        let engine = WatchEngine(
            root: root, settings: settings, logger: logger, time: time, mailbox: mailbox, continuation: continuation,
            inotify: InotifySession(
                root: root, mailbox: mailbox, logger: logger,
                shouldStop: { [self] in stopRequested.load(ordering: .relaxed) }))
        let thread = Thread { engine.run() }
        thread.name = "shelfd.watch"
        thread.start()
        return stream
    }

    /// Ends the stream promptly; the inotify thread lets go of the library within a second.
    package func stop() {
        stopRequested.store(true, ordering: .relaxed)
        mailbox.close()
    }

    /// A full rescan soon.
    package func requestRescan() {
        mailbox.post { $0.rescanRequested = true }
    }
}

/// The watcher's state machine; lives on the engine thread.
private struct WatchEngine: Sendable {
    let root: String
    let settings: WatchSettings
    let logger: Logger
    let time: TimeSource
    let mailbox: Mailbox
    let continuation: AsyncStream<WatchEvent>.Continuation
    let inotify: InotifySession

    func run() {
        defer { continuation.finish() }
        var state = EngineState(
            scanner: TreeScanner(root: root, rules: IgnoreRules(extra: settings.extraIgnore)),
            tracker: StabilityTracker(settle: settings.settle, now: { [clock = time.clock] in clock.now }))

        let (mode, reason) = initialMode()
        if mode == .inotify {
            inotify.start() // the startup scan runs once the watches are in place, so nothing slips between
        } else {
            announce(.poll, reason: reason, in: &state)
            fullScan(trigger: "startup", in: &state)
        }

        while let inbox = mailbox.take(until: state.nextWakeUp, on: time.clock) {
            handle(inbox, in: &state)
            if let due = state.nextFullScan, due <= time.clock.now {
                fullScan(trigger: state.mode == .poll ? "poll" : "periodic", in: &state)
            }
            let stable = state.tracker.takeStable()
            for file in stable { logger.debug("File is stable", metadata: ["watch.path": "\(file.path)"]) }
            if !stable.isEmpty { continuation.yield(.stable(stable.map { state.scanner.stableFile($0) })) }
        }
    }

    private func initialMode() -> (WatchMode, String) {
        switch settings.mode {
        case .poll:
            return (.poll, "polling: watch.mode is poll")
        case .inotify:
            return (.inotify, "inotify: watch.mode is inotify")
        case .auto:
            let fileSystem = FileSystemKind.of(path: root)
            return fileSystem.prefersPolling
                ? (.poll, "polling: \(root) is on \(fileSystem.name)")
                : (.inotify, "inotify: \(root) is on \(fileSystem.name)")
        }
    }

    private func handle(_ inbox: Inbox, in state: inout EngineState) {
        var rescan: String? = inbox.rescanRequested ? "requested" : nil
        switch inbox.watch {
        case .ready(let watches)?:
            let fileSystem = FileSystemKind.of(path: root).name
            announce(.inotify, reason: "inotify: \(root) is on \(fileSystem) (\(watches) folders watched)", in: &state)
            rescan = "startup"
        case .failed(let reason)?:
            // Polling is slower, but it never misses a file; a failed watch would.
            logger.warning("Cannot watch with inotify; polling instead", metadata: ["watch.reason": "\(reason)"])
            announce(.poll, reason: reason, in: &state)
            rescan = state.nextFullScan == nil ? "startup" : "poll"
        case nil:
            break
        }
        if inbox.overflowed {
            logger.warning("inotify queue overflowed; rescanning")
            rescan = rescan ?? "overflow"
        }
        for folder in inbox.folders where rescan == nil {
            for candidate in state.scanner.scan(folder) {
                state.tracker.sighted(candidate.path, snapshot: candidate.snapshot)
            }
        }
        for (path, hint) in inbox.files {
            if case .ignore = state.scanner.verdict(path) { continue }
            state.tracker.activity(at: path, writerOpen: hint == .unknown ? nil : hint == .open)
        }
        if let rescan { fullScan(trigger: rescan, in: &state) }
    }

    private func announce(_ mode: WatchMode, reason: String, in state: inout EngineState) {
        state.mode = mode
        logger.notice("Watching folder", metadata: ["watch.mode": "\(mode.rawValue)", "watch.reason": "\(reason)"])
        continuation.yield(.modeChanged(effective: mode, reason: reason))
    }

    private func fullScan(trigger: String, in state: inout EngineState) {
        let candidates = state.scanner.scan()
        for candidate in candidates {
            state.tracker.sighted(
                candidate.path, snapshot: candidate.snapshot,
                settledAlready: isSettledAlready(candidate.snapshot, settle: settings.settle, now: time.now))
        }
        state.tracker.keepEmitted(only: Set(candidates.map(\.path)))
        let interval = state.mode == .poll ? settings.pollInterval : settings.rescanInterval
        state.nextFullScan = time.clock.now + interval
        let metadata: Logger.Metadata = ["watch.files": "\(candidates.count)", "watch.trigger": "\(trigger)"]
        switch trigger {
        case "startup": logger.notice("Full scan finished", metadata: metadata)
        case "poll": logger.trace("Full scan finished", metadata: metadata)
        default: logger.info("Full scan finished", metadata: metadata)
        }
        continuation.yield(.rescanned(fileCount: candidates.count))
    }
}

private struct EngineState {
    var scanner: TreeScanner
    var tracker: StabilityTracker
    var mode: WatchMode = .inotify
    /// nil until the startup scan has run.
    var nextFullScan: SomeClock.Instant?

    /// A file's check waits this much longer (a tenth of the settle time, at most a quarter of a second), so that
    /// the files of a burst (a phone's sync, a copied folder) become stable at one look and are queued together.
    var gather: Duration { min(tracker.settle / 10, .milliseconds(250)) }

    var nextWakeUp: SomeClock.Instant? {
        [tracker.nextCheck.map { $0 + gather }, nextFullScan].compactMap { $0 }.min()
    }
}
