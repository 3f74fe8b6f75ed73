import Foundation
import ShelfCore

/// What the inotify thread and the public API hand to the engine thread. Events for one path are merged,
/// so a burst of IN_MODIFY costs one `stat`, not thousands.
struct Inbox {
    enum WriterHint { case unknown, open, closed }
    enum WatchOutcome { case ready(watches: Int), failed(reason: String) }

    var files: [String: WriterHint] = [:]
    /// Folders that just got their watches: scan them for files that arrived before the watch.
    var folders: [String] = []
    var rescanRequested = false
    var overflowed = false
    var watch: WatchOutcome?

    var isEmpty: Bool {
        files.isEmpty && folders.isEmpty && !rescanRequested && !overflowed && watch == nil
    }

    mutating func file(_ path: String, hint: WriterHint) {
        files[path] = hint == .unknown ? (files[path] ?? .unknown) : hint
    }
}

/// A condition-guarded `Inbox`; the engine sleeps on it until a post, a deadline on the watcher's clock, or `close()`.
final class Mailbox: @unchecked Sendable { // unchecked: `inbox` and `closed` are only touched under `condition`
    private let condition = NSCondition()
    private var inbox = Inbox()
    private var closed = false

    func post(_ update: (inout Inbox) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        update(&inbox)
        condition.signal()
    }

    /// Wakes the engine to look at its deadline.
    private func wake() {
        condition.lock()
        defer { condition.unlock() }
        condition.signal()
    }

    func close() {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        condition.signal()
    }

    /// Waits for posts (or `deadline` on `clock`) and takes them all; nil once closed. The deadline is kept by a task
    /// sleeping on the clock, so a test's manual clock wakes the engine as the machine's would.
    func take(until deadline: SomeClock.Instant?, on clock: SomeClock) -> Inbox? {
        let alarm = deadline.map { deadline in
            Task { [self] in
                try await clock.sleep(until: deadline)
                wake()
            }
        }
        defer { alarm?.cancel() }
        condition.lock()
        defer { condition.unlock() }
        while !closed && inbox.isEmpty {
            if let deadline, clock.now >= deadline { break }
            condition.wait()
        }
        if closed { return nil }
        defer { inbox = Inbox() }
        return inbox
    }
}
