import Foundation
import Synchronization

/// At most `limit` holders at once, first come first served. `close()` turns every waiter away
/// (shutdown: photos not yet sent go back to the queue instead of waiting for a slot).
package actor RequestSlots {
    private let limit: Int
    private var inUse = 0
    private var closed = false
    private var waiters: [CheckedContinuation<Bool, Never>] = []

    package init(limit: Int) { self.limit = max(1, limit) }

    /// True when a slot was taken; false after `close()`.
    package func acquire() async -> Bool {
        if closed { return false }
        if inUse < limit { inUse += 1; return true }
        return await withCheckedContinuation { waiters.append($0) }
    }

    package func release() {
        if !closed, !waiters.isEmpty {
            waiters.removeFirst().resume(returning: true)     // the slot passes straight on
        } else {
            inUse -= 1
        }
    }

    package func close() {
        closed = true
        for waiter in waiters { waiter.resume(returning: false) }
        waiters.removeAll()
    }
}

/// Spaces request starts to stay under a provider's requests-per-minute limit, allowing a burst of
/// `burst` requests (so `concurrency` requests can start together).
package actor RateLimiter {
    private let interval: Duration
    private let burst: Int
    private var theoreticalArrival: ContinuousClock.Instant = .now

    package init(requestsPerMinute: Int, burst: Int) {
        interval = .seconds(60) / max(1, requestsPerMinute)
        self.burst = max(1, burst)
    }

    package func waitForTurn() async throws {
        let now = ContinuousClock.now
        let tat = max(theoreticalArrival, now)
        let earliest = tat - interval * (burst - 1)
        theoreticalArrival = tat + interval
        if earliest > now { try await Task.sleep(until: earliest, clock: .continuous) }
    }
}

/// Wakes the scheduler when there may be new work (a photo queued, a retry requested, shutdown).
package final class WorkSignal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    package init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    package func notify() { continuation.yield() }

    /// Returns when notified or after `timeout`, whichever comes first.
    package func wait(timeout: Duration) async {
        let stream = self.stream
        await withTaskGroup(of: Void.self) { group in
            group.addTask { var iterator = stream.makeAsyncIterator(); _ = await iterator.next() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}

/// Set once when the process is asked to stop.
package final class ShutdownFlag: Sendable {
    private let flag = Atomic(false)
    package init() {}
    package var isSet: Bool { flag.load(ordering: .acquiring) }
    package func set() { flag.store(true, ordering: .releasing) }
}
