import Foundation
import ShelfCore

/// Decides when a file is complete: its snapshot (size, mtime, inode) must stay unchanged for `settle`
/// after the last sign of activity. Time (the watcher's clock) and `stat` are injected so the rules can be tested
/// without waiting.
///
/// Not thread-safe; the watcher uses it from its engine thread only.
package struct StabilityTracker {
    package struct Stable: Sendable, Equatable {
        package var path: String
        package var snapshot: FileSnapshot
    }

    private struct Pending {
        var snapshot: FileSnapshot
        var since: SomeClock.Instant
        var writerOpen: Bool
    }

    package let settle: Duration
    /// How long a file still open for writing (IN_MODIFY seen, IN_CLOSE_WRITE not yet) must stay unchanged
    /// before we stop waiting for the close, in case that event was lost.
    package let openWriterLimit: Duration
    private let now: () -> SomeClock.Instant
    private let stat: (String) -> FileSnapshot?
    private var pending: [String: Pending] = [:]
    /// What was emitted, so a rescan does not emit an unchanged file again.
    private var emitted: [String: FileSnapshot] = [:]

    package init(
        settle: Duration,
        openWriterLimit: Duration = .seconds(60),
        now: @escaping () -> SomeClock.Instant,
        stat: @escaping (String) -> FileSnapshot? = FileSnapshot.of(path:)
    ) {
        self.settle = settle
        self.openWriterLimit = max(openWriterLimit, settle)
        self.now = now
        self.stat = stat
    }

    /// Number of files waiting to become stable.
    package var pendingCount: Int { pending.count }

    /// When `takeStable()` may next return something, or nil when nothing is pending.
    package var nextCheck: SomeClock.Instant? {
        pending.values.map { $0.since + quietPeriod($0) }.min()
    }

    /// An event on `path` (inotify): restarts its quiet period. `writerOpen` is true after IN_CREATE or
    /// IN_MODIFY, false after IN_CLOSE_WRITE or IN_MOVED_TO, nil when the event says nothing about it.
    package mutating func activity(at path: String, writerOpen: Bool?) {
        guard let snapshot = stat(path) else {
            forget(path)
            return
        }
        if pending[path] == nil, emitted[path] == snapshot { return } // already emitted, unchanged since
        emitted[path] = nil
        let open = writerOpen ?? pending[path]?.writerOpen ?? false
        pending[path] = Pending(snapshot: snapshot, since: now(), writerOpen: open)
    }

    /// A scan found `path`. An unchanged pending file keeps its quiet period running; `settledAlready`
    /// (a file last modified long ago) makes a newly seen file due at once.
    package mutating func sighted(_ path: String, snapshot: FileSnapshot, settledAlready: Bool = false) {
        if emitted[path] == snapshot { return }
        if let entry = pending[path], entry.snapshot == snapshot { return }
        emitted[path] = nil
        let now = now()
        pending[path] = Pending(
            snapshot: snapshot, since: settledAlready ? now - settle : now,
            writerOpen: pending[path]?.writerOpen ?? false)
    }

    package mutating func forget(_ path: String) {
        pending[path] = nil
        emitted[path] = nil
    }

    /// After a full scan: forget emitted files that are gone, so the record does not grow forever.
    package mutating func keepEmitted(only seen: Set<String>) {
        emitted = emitted.filter { seen.contains($0.key) }
    }

    /// Files whose quiet period has passed and whose re-stat still matches. A file that changed starts
    /// over; a file that disappeared is dropped silently.
    package mutating func takeStable() -> [Stable] {
        let now = now()
        var stable: [Stable] = []
        for (path, entry) in pending where now - entry.since >= quietPeriod(entry) {
            guard let current = stat(path) else {
                pending[path] = nil
                continue
            }
            if current != entry.snapshot {
                pending[path] = Pending(snapshot: current, since: now, writerOpen: entry.writerOpen)
                continue
            }
            pending[path] = nil
            emitted[path] = current
            stable.append(Stable(path: path, snapshot: current))
        }
        return stable.sorted { $0.path < $1.path }
    }

    private func quietPeriod(_ entry: Pending) -> Duration {
        entry.writerOpen ? openWriterLimit : settle
    }
}
