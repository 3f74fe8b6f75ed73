/// Spaces request starts to stay under a service's requests-per-minute limit, allowing a burst of
/// `burst` requests. Shared by everything in this process that talks to the same book source. (Vision
/// providers take their turns from a count in the database instead, shared by every shelfd process:
/// ShelfStore's `takeRequestTurn`.)
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
