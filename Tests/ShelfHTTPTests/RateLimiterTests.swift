import ShelfHTTP
import Testing

@Suite struct RateLimiterTests {
    @Test("Requests beyond the burst are spaced to stay under the per-minute limit", .timeLimit(.minutes(1)))
    func spacesRequests() async throws {
        let limiter = RateLimiter(requestsPerMinute: 600, burst: 2) // one every 100 ms, two at once
        let started = ContinuousClock.now
        for _ in 0..<6 { try await limiter.waitForTurn() }
        // Two go at once, the other four wait 100 ms each: no faster than the limit allows.
        #expect(ContinuousClock.now - started >= .milliseconds(400))
    }
}
