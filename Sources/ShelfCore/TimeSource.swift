import Foundation

/// Where the machinery reads the time and waits, passed in and never read from the wall inside it: the wall's
/// `Date` for what is recorded (a photo's attempt, a provider's next try, a lease's end), and a clock for sleeps,
/// deadlines, backoff, polls and pauses. The daemon runs on `system`; tests give a manual clock they advance, so a
/// two-minute outage is ridden out in a fraction of a second.
package struct TimeSource: Sendable {
    /// The clock every sleep and deadline is taken on.
    package let clock: SomeClock
    private let wall: @Sendable () -> Date

    /// `wall` is the date for records; on a manual clock it moves with the clock.
    package init<C: Clock>(clock: C, wall: @escaping @Sendable () -> Date) where C.Duration == Duration {
        self.clock = SomeClock(clock)
        self.wall = wall
    }

    /// The machine's own time: `Date()` and the continuous clock (which counts while the machine sleeps).
    package static let system = TimeSource(clock: ContinuousClock(), wall: { Date() })

    /// The wall-clock date, for records.
    package var now: Date { wall() }

    /// Sleeps on the clock; throws `CancellationError` when the task is cancelled.
    package func sleep(for duration: Duration) async throws {
        try await clock.sleep(for: duration)
    }
}

/// Any clock counted in `Duration`, behind one type, so that the code taking a `TimeSource` is not generic over it.
/// An instant is the time since the clock was wrapped.
package struct SomeClock: Clock {
    package struct Instant: InstantProtocol {
        package var offset: Duration
        package init(offset: Duration) { self.offset = offset }
        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        package static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }
        package static func - (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: .zero - rhs) }
        package static func - (lhs: Instant, rhs: Instant) -> Duration { rhs.duration(to: lhs) }
        package static func += (lhs: inout Instant, rhs: Duration) { lhs = lhs + rhs }
    }

    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void
    package let minimumResolution: Duration

    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleeper = { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) }
        minimumResolution = clock.minimumResolution
    }

    package var now: Instant { Instant(offset: elapsed()) }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleeper(deadline.offset)
    }
}

extension Date {
    /// The time of day as `status`, the overview and a provider's state say it: "10:02:11", on this machine's zone.
    package var timeOfDay: String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter.string(from: self)
    }
}
