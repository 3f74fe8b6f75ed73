import Foundation
import ShelfCore
import Synchronization

/// A clock that moves only when a test moves it, for the machinery's `TimeSource`: sleepers wake when the clock is
/// advanced past their deadline, and the wall date moves with it. What takes minutes on the wall's clock (an
/// outage ridden out, a 60 s request window, a Batch API's polls, a lease running out) runs in milliseconds.
package final class ManualClock: Clock, Sendable {
    package struct Instant: InstantProtocol {
        package var offset: Duration
        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now: Duration = .zero
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelledEarly: Set<UInt64> = []
        var nextID: UInt64 = 0
        /// Sleeps begun and ended so far: the machinery's traffic with the clock, to tell it busy from asleep.
        var changes = 0
    }
    private let state = Mutex(State())
    /// The wall date at the clock's zero.
    package let start: Date

    package init(start: Date = Date(timeIntervalSince1970: 1_790_000_000)) {
        self.start = start
    }

    /// The time source the machinery is given: this clock, and a wall date that moves with it. Its instants count from
    /// the moment it is taken (`SomeClock`), so take it before the clock first moves and give the same to everything
    /// whose instants are compared.
    package var time: TimeSource {
        TimeSource(clock: self, wall: { [self] in start.addingTimeInterval(now.offset.seconds) })
    }

    package var now: Instant { Instant(offset: state.withLock { $0.now }) }
    package var minimumResolution: Duration { .nanoseconds(1) }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1; return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelledEarly.remove(id) != nil { return .failure(CancellationError()) }
                    state.changes += 1
                    if deadline.offset <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline.offset, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                let sleeper = state.sleepers.removeValue(forKey: id)
                if sleeper == nil { state.cancelledEarly.insert(id) }
                state.changes += 1
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// How many tasks sleep on this clock now.
    package var sleepers: Int { state.withLock { $0.sleepers.count } }

    /// When the next sleeper wakes, if any sleeps.
    package var nextDeadline: Duration? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    /// Moves the clock forward and wakes everyone whose deadline has come, earliest first.
    package func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now += duration
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            state.changes += due.count
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// Runs the clock forward while `done` is false, at most `limit` of simulated time. Time moves only while the
    /// machinery is quiet for `quiet` of real time: no sleep begun or ended, and this process's threads neither using
    /// the processors much nor waiting for one (the work woken by the last step,
    /// preparing a photo, a request to an emulator, a write to the database, has finished or gone back to sleep).
    /// Then the clock moves to the next sleeper's deadline, at most `step` at once. A process that stays busy (other
    /// tests beside this one) moves it a second at a time, each second of real time. Returns the simulated time it
    /// took; throws when `done` was not reached within `limit`.
    @discardableResult
    package func run(
        until what: String, limit: Duration, step: Duration = .seconds(60), quiet: Duration = .milliseconds(15),
        _ done: @Sendable () async throws -> Bool
    ) async throws -> Duration {
        let began = now
        var lastMove = ContinuousClock.now
        while try await !done() {
            guard began.duration(to: now) < limit else {
                throw ManualClockTimeout(description: "not within \(limit) of the manual clock: \(what)")
            }
            let before = (changes: state.withLock { $0.changes }, cpu: Self.processorTime(), wait: Self.processorWait())
            try await Task.sleep(for: quiet)
            let busy =
                state.withLock { $0.changes } != before.changes || Self.processorTime() - before.cpu > quiet / 4
                || Self.processorWait() - before.wait > quiet / 4
            if busy && ContinuousClock.now - lastMove < .seconds(1) { continue }
            let gap = nextDeadline.map { $0 - now.offset } ?? step
            advance(by: max(.milliseconds(1), min(busy ? .seconds(1) : step, gap)))
            lastMove = ContinuousClock.now
        }
        return began.duration(to: now)
    }

    /// The processor time this process has used, all threads together.
    private static func processorTime() -> Duration {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let micros =
            (Int64(usage.ru_utime.tv_sec) + Int64(usage.ru_stime.tv_sec)) * 1_000_000
            + Int64(usage.ru_utime.tv_usec) + Int64(usage.ru_stime.tv_usec)
        return .microseconds(micros)
    }

    /// How long this process's threads have waited for a processor, all together (/proc's schedstat): work starved of
    /// a processor uses none, but it is not done.
    private static func processorWait() -> Duration {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let nanoseconds = tasks.reduce(Int64(0)) { sum, task in
            let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8)
            let fields = stat?.split(separator: " ") ?? []
            return sum + (fields.count > 1 ? Int64(fields[1]) ?? 0 : 0)
        }
        return .nanoseconds(nanoseconds)
    }
}

/// The manual clock did not reach what a test waited for.
package struct ManualClockTimeout: Error, CustomStringConvertible {
    package let description: String
    package init(description: String) { self.description = description }
}
