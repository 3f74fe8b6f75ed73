import Foundation
import Logging
import ShelfCore
import ShelfTesting
import ShelfWatch
import Synchronization
import Testing

/// Everything a watcher emitted, with the time it arrived.
final class EventRecorder: Sendable {
    private let log = Mutex<[(at: ContinuousClock.Instant, event: WatchEvent)]>([])

    func append(_ event: WatchEvent) {
        log.withLock { $0.append((.now, event)) }
    }

    var events: [WatchEvent] { log.withLock { $0.map(\.event) } }

    var stable: [(at: ContinuousClock.Instant, file: StableFile)] {
        log.withLock { entries in
            entries.flatMap { entry -> [(at: ContinuousClock.Instant, file: StableFile)] in
                guard case .stable(let files) = entry.event else { return [] }
                return files.map { (entry.at, $0) }
            }
        }
    }

    func stable(named name: String) -> [StableFile] {
        stable.map(\.file).filter { ($0.path as NSString).lastPathComponent == name }
    }

    var rescans: [Int] {
        events.compactMap { if case .rescanned(let count) = $0 { count } else { nil } }
    }

    var modes: [(WatchMode, String)] {
        events.compactMap { if case .modeChanged(let mode, let reason) = $0 { (mode, reason) } else { nil } }
    }

    /// Checks `condition` every 20 ms until it holds; throws after `timeout`.
    func wait(for what: String, timeout: Duration = .seconds(10), until condition: () -> Bool) async throws {
        try await waitUntil(what, timeout: timeout, every: .milliseconds(20), condition)
    }

    func waitForStartupScan() async throws {
        try await wait(for: "the startup scan") { !rescans.isEmpty }
    }

    func waitForStable(_ name: String) async throws {
        try await wait(for: "\(name) to be stable") { !stable(named: name).isEmpty }
    }
}

extension WatchSettings {
    static func testing(_ mode: WatchMode = .inotify, ignore: [String] = []) -> WatchSettings {
        WatchSettings(
            mode: mode, settle: .milliseconds(300), pollInterval: .milliseconds(300),
            rescanInterval: .seconds(3600), extraIgnore: ignore)
    }
}

/// Runs a real watcher on `root` for the duration of `body`, on `time` (the machine's, or a test's manual clock); stops
/// it and waits for its stream to end.
func withWatcher(
    _ root: URL, _ settings: WatchSettings = .testing(), time: TimeSource = .system,
    _ body: (FolderWatcher, EventRecorder) async throws -> Void
) async throws {
    let watcher = FolderWatcher(
        root: root, settings: settings,
        logger: Logger(label: "test.watch") { _ in SwiftLogNoOpLogHandler() }, time: time)
    let recorder = EventRecorder()
    let stream = watcher.events()
    let reader = Task {
        for await event in stream { recorder.append(event) }
    }
    do {
        try await body(watcher, recorder)
    } catch {
        watcher.stop()
        await reader.value
        throw error
    }
    watcher.stop()
    await reader.value
}

/// Drops a last file and waits for it: events for files written earlier have been handled by then, so a
/// duplicate or an ignored file would have shown up.
func dropSentinel(in root: URL, _ recorder: EventRecorder) async throws {
    try writeFileAtomically("zz-sentinel.jpg", in: root)
    try await recorder.waitForStable("zz-sentinel.jpg")
}

/// Writes through a temporary name outside the watched tree and renames into place.
func writeFileAtomically(_ relativePath: String, in root: URL, bytes: Int = 2048) throws {
    let staging = root.deletingLastPathComponent().appendingPathComponent(".staging-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: staging) }
    let source = try writeFakePhoto("file", in: staging, bytes: bytes)
    try FileManager.default.moveItem(at: source, to: root.appendingPathComponent(relativePath))
}
