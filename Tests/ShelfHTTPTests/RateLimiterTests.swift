import ShelfHTTP
import ShelfTesting
import Synchronization
import Testing

@Suite struct RateLimiterTests {
    @Test(
        "Requests beyond the burst are spaced to stay under the per-minute limit, and no further",
        .timeLimit(.minutes(1)))
    func spacesRequests() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(requestsPerMinute: 600, burst: 2, clock: clock) // one every 100 ms, two at once
        let turns = Mutex<[Duration]>([])
        let asking = Task {
            for _ in 0..<6 {
                try await limiter.waitForTurn()
                turns.withLock { $0.append(clock.now.offset) }
            }
        }
        try await clock.run(until: "six turns are taken", limit: .seconds(10), step: .milliseconds(10)) {
            turns.withLock { $0.count } == 6
        }
        try await asking.value
        // Two go at once, the other four 100 ms apart.
        #expect(
            turns.withLock { $0 } == [
                .zero, .zero, .milliseconds(100), .milliseconds(200), .milliseconds(300), .milliseconds(400),
            ])
    }
}
