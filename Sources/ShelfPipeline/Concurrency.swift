import Foundation
import ShelfCore
import Synchronization

/// At most `limit` holders at once, first come first served. `close()` turns every waiter away
/// (shutdown: photos not yet sent go back to the queue instead of waiting for a slot).
/// Hand-made: an async semaphore that can be closed; neither swift-async-algorithms nor the standard
/// library has one.
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
///
/// Hand-made on purpose: swift-async-algorithms' `AsyncChannel` is a rendezvous (a send waits for a
/// receiver, nothing is kept), and cancelling a wait on an `AsyncStream` (the timeout) ends the stream for
/// good. The scheduler needs a kept wake, a wait with a timeout, and `restingUntil`, which tells the
/// systemd watchdog that a loop waiting here rests rather than hangs.
package final class WorkSignal: Sendable {
    private struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        /// Waits in progress (with when their timeout ends), and those whose timeout fired before their
        /// continuation was stored.
        var outstanding: [UInt64: SomeClock.Instant] = [:]
        var expired: Set<UInt64> = []
        var nextID: UInt64 = 0
    }
    private let state = Mutex(State())
    /// The clock the waits' timeouts run on.
    private let clock: SomeClock

    package init(clock: SomeClock) { self.clock = clock }

    package func notify() {
        let waiting = state.withLock { state in
            if state.waiters.isEmpty { state.pending = true }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiting { waiter.resume(returning: true) }
    }

    /// Returns when notified (true) or after `timeout` (false), whichever comes first.
    @discardableResult
    package func wait(timeout: Duration) async -> Bool {
        let id: UInt64? = state.withLock { state in
            if state.pending { state.pending = false; return nil }
            state.nextID += 1
            state.outstanding[state.nextID] = clock.now.advanced(by: timeout)
            return state.nextID
        }
        guard let id else { return true }
        // The timer and the wait race as two children; the first to end decides, the other is cancelled.
        let notified = await withTaskGroup(of: Bool.self) { group in
            group.addTask { [clock] in
                try? await clock.sleep(for: timeout); return false
            }
            group.addTask { await self.waitForNotify(id) }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        state.withLock { state in
            state.outstanding[id] = nil
            state.expired.remove(id)
        }
        return notified
    }

    /// Until `notify()` (true), or until the wait is cancelled (false).
    private func waitForNotify(_ id: UInt64) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let resumeNow: Bool? = state.withLock { state in
                    if state.pending { state.pending = false; return true }
                    if state.expired.remove(id) != nil { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            expire(id)
        }
    }

    /// While someone waits: when the latest of their timeouts ends (a wait is a loop resting, not stuck).
    package var restingUntil: SomeClock.Instant? {
        state.withLock { $0.outstanding.values.max() }
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLock { state in
            if let waiter = state.waiters.removeValue(forKey: id) { return Optional(waiter) }
            if state.outstanding[id] != nil { state.expired.insert(id) }
            return nil
        }
        waiter?.resume(returning: false)
    }
}

/// The scheduler's loop beats at each turn: a loop that neither turns nor rests is stuck (the watchdog).
package final class LoopPulse: Sendable {
    private let last = Mutex<SomeClock.Instant?>(nil)
    private let clock: SomeClock

    package init(clock: SomeClock) { self.clock = clock }

    package func beat() { last.withLock { $0 = clock.now } }

    /// True when the loop turned within `margin`, or rests on `wake` for a time not yet `margin` past.
    package func isAlive(resting wake: WorkSignal, within margin: Duration) -> Bool {
        let now = clock.now
        if let until = wake.restingUntil, now < until.advanced(by: margin) { return true }
        guard let last = last.withLock({ $0 }) else { return false }
        return last.duration(to: now) < margin
    }
}

/// Set once when the process is asked to stop (the services' graceful shutdown sets it): the scheduler's
/// loop and the photo reader read it at every turn.
package final class ShutdownFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    package init() {}

    package var isSet: Bool { flag.load(ordering: .acquiring) }
    package func set() { flag.store(true, ordering: .releasing) }
}
