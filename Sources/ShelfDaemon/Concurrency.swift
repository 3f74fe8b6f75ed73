import Foundation
import Synchronization

/// At most `limit` holders at once, first come first served. `close()` turns every waiter away
/// (shutdown: photos not yet sent go back to the queue instead of waiting for a slot).
package final class RequestSlots: Sendable {
    private struct State {
        var inUse = 0
        var closed = false
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }
    private let limit: Int
    private let state = Mutex(State())

    package init(limit: Int) { self.limit = max(1, limit) }

    /// True when a slot was taken; false after `close()`.
    package func acquire() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer: Bool? = state.withLock { state in
                if state.closed { return false }
                if state.inUse < limit { state.inUse += 1; return true }
                state.waiters.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Gives a slot back; it passes straight to the first waiter.
    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if !state.closed, !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.inUse -= 1
            return nil
        }
        next?.resume(returning: true)
    }

    package func close() {
        let waiters = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }
}

/// Wakes the scheduler when there may be new work (a photo queued, a batch finished, shutdown).
/// A notify with nobody waiting is kept, so the next wait returns at once.
package final class WorkSignal: Sendable {
    private struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waits in progress, and those whose timeout fired before their continuation was stored.
        var outstanding: Set<UInt64> = []
        var expired: Set<UInt64> = []
        var nextID: UInt64 = 0
    }
    private let state = Mutex(State())

    package init() {}

    package func notify() {
        let waiting = state.withLock { state in
            if state.waiters.isEmpty { state.pending = true }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Returns when notified or after `timeout`, whichever comes first.
    package func wait(timeout: Duration) async {
        let id: UInt64? = state.withLock { state in
            if state.pending { state.pending = false; return nil }
            state.nextID += 1
            state.outstanding.insert(state.nextID)
            return state.nextID
        }
        guard let id else { return }
        let timer = Task { [self] in
            do { try await Task.sleep(for: timeout) } catch { return }
            expire(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.pending || state.expired.remove(id) != nil {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            expire(id)
        }
        timer.cancel()
        state.withLock { state in
            state.outstanding.remove(id)
            state.expired.remove(id)
        }
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLock { state in
            if let waiter = state.waiters.removeValue(forKey: id) { return Optional(waiter) }
            if state.outstanding.contains(id) { state.expired.insert(id) }
            return nil
        }
        waiter?.resume()
    }
}

/// Set once when the process is asked to stop; tasks can wait for it.
package final class ShutdownFlag: Sendable {
    private let state = Mutex<(set: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    package init() {}

    package var isSet: Bool { state.withLock { $0.set } }

    package func set() {
        let waiters = state.withLock { state in
            state.set = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once `set()` has been called.
    package func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = state.withLock { state in
                if state.set { return true }
                state.waiters.append(continuation)
                return false
            }
            if already { continuation.resume() }
        }
    }
}
