import ShelfCore
/// Spaces request starts to stay under a service's requests-per-minute limit, allowing a burst of
/// `burst` requests. One per book source, shared by everything in the process that asks it. (Vision
/// providers take their turns from a count in the database instead, shared by every shelfd process:
/// ShelfStore's `takeRequestTurn`.)
package actor RateLimiter {
    private let interval: Duration
    private let burst: Int
    /// Any `Clock` counted in `Duration`, so that tests give a manual one.
    private let clock: SomeClock
    private var theoreticalArrival: SomeClock.Instant

    package init<C: Clock>(requestsPerMinute: Int, burst: Int, clock: C) where C.Duration == Duration {
        interval = .seconds(60) / max(1, requestsPerMinute)
        self.burst = max(1, burst)
        self.clock = SomeClock(clock)
        theoreticalArrival = self.clock.now
    }

    package func waitForTurn() async throws {
        let now = clock.now
        let tat = max(theoreticalArrival, now)
        let earliest = tat - interval * (burst - 1)
        theoreticalArrival = tat + interval
        if earliest > now { try await clock.sleep(until: earliest) }
    }
}
