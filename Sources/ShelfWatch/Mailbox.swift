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

/// A condition-guarded `Inbox`; the engine sleeps on it until a post, a deadline or `close()`.
final class Mailbox: @unchecked Sendable {   // unchecked: `inbox` and `closed` are only touched under `condition`
    private let condition = NSCondition()
    private var inbox = Inbox()
    private var closed = false

    func post(_ update: (inout Inbox) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        update(&inbox)
        condition.signal()
    }

    func close() {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        condition.signal()
    }

    /// Waits for posts (or `deadline`) and takes them all; nil once closed.
    func take(until deadline: ContinuousClock.Instant?) -> Inbox? {
        condition.lock()
        defer { condition.unlock() }
        while !closed && inbox.isEmpty {
            guard let deadline else {
                condition.wait()
                continue
            }
            let remaining = deadline - .now
            if remaining <= .zero { break }
            _ = condition.wait(until: Date(timeIntervalSinceNow: remaining.seconds))
        }
        if closed { return nil }
        defer { inbox = Inbox() }
        return inbox
    }
}
