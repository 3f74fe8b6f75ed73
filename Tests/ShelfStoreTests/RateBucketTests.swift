import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

@Suite(.postgresServer, .serialized) struct RateBucketTests {
    /// 31 a minute: one every 2 s ((60 s + `RequestBudget.travelMargin`) ÷ 31), a whole number of seconds, so that
    /// times read back from the database compare exactly. The provider's day ends at `dayEnd`.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let dayEnd = start.addingTimeInterval(3_600)
    static func budget(perDay: Int? = nil, perMinute: Int = 31) -> RequestBudget {
        RequestBudget(requestsPerMinute: perMinute, perDay: perDay) { now in
            now < dayEnd ? dayEnd : dayEnd.addingTimeInterval(86_400)
        }
    }

    @Test(
        "Two processes take their turns from one bucket: requests start (60 s + a margin) ÷ the limit apart, whoever asks",
        arguments: StoreKind.allCases)
    func processesShareOneBucket(kind: StoreKind) throws {
        try withTwoProcesses(kind) { store, other throws in
            let t0 = Self.start, budget = Self.budget(), step = budget.interval
            #expect(try store.providers.takeRequestTurn(provider: "gemini", budget: budget, now: t0) == .granted)
            #expect(
                try other.providers.takeRequestTurn(provider: "gemini", budget: budget, now: t0.addingTimeInterval(1))
                    == .notBefore(t0.addingTimeInterval(step)))
            #expect(
                try other.providers.takeRequestTurn(
                    provider: "gemini", budget: budget, now: t0.addingTimeInterval(step)) == .granted)
            #expect(
                try store.providers.takeRequestTurn(
                    provider: "gemini", budget: budget, now: t0.addingTimeInterval(step))
                    == .notBefore(t0.addingTimeInterval(2 * step)))
            // Another provider has a bucket of its own.
            #expect(
                try store.providers.takeRequestTurn(
                    provider: "cloudflare", budget: budget, now: t0.addingTimeInterval(step)) == .granted)
        }
    }

    @Test(
        "A turn taken for a photo charges its attempt in the same transaction, and marks it asking; a turn not due charges nothing",
        arguments: StoreKind.allCases)
    func turnChargesTheAttempt(kind: StoreKind) throws {
        try withStore(kind) { store, _ throws in
            try store.queue.queuePhoto("p", now: Self.start)
            let job = try store.queue.claimOne(now: Self.start)
            let budget = Self.budget(), t0 = Self.start
            let first = try store.providers.takeRequestTurn(
                provider: "gemini", budget: budget, charging: job.id, now: t0)
            #expect(first.turn == .granted && first.attempts == 1)
            #expect(try store.queue.progress(now: Date()).photos.first?.stage == .asking)
            let early = try store.providers.takeRequestTurn(
                provider: "gemini", budget: budget, charging: job.id, now: t0.addingTimeInterval(1))
            #expect(early.turn == .notBefore(t0.addingTimeInterval(budget.interval)) && early.attempts == nil)
            #expect(
                try store.queue.chargeAttempt(jobID: job.id, now: t0.addingTimeInterval(2)) == 2, "one charge so far")
        }
    }

    @Test(
        "No 60 s holds more than the limit, with a margin for each request's travel to the provider",
        arguments: StoreKind.allCases)
    func anySixtySecondsHoldsTheLimit(kind: StoreKind) throws {
        try withTwoProcesses(kind) { store, other throws in
            let limit = 12, budget = Self.budget(perMinute: limit)
            // Two processes, each asking again the moment it is told to (or 0.3 s after a turn, its next photo ready).
            var granted: [Date] = []
            var asks = [(store, Self.start), (other, Self.start.addingTimeInterval(0.1))]
            for _ in 0..<1_000 where granted.count < 4 * limit {
                let next = asks[0].1 <= asks[1].1 ? 0 : 1
                let (process, at) = asks[next]
                switch try process.providers.takeRequestTurn(provider: "gemini", budget: budget, now: at) {
                case .granted: granted.append(at); asks[next].1 = at.addingTimeInterval(0.3)
                case .notBefore(let turn): asks[next].1 = turn
                case .dayUsedUp: Issue.record("no daily limit was set"); return
                }
            }
            #expect(granted.count == 4 * limit, "four minutes' worth")
            // Any `limit + 1` turns span more than a minute by the margin: one sent slower than the next by less than
            // the margin still arrives outside the minute of the turn `limit` before it.
            let spans = zip(granted, granted.dropFirst(limit)).map { $1.timeIntervalSince($0) }
            #expect(RequestBudget.travelMargin > 0)
            #expect(
                spans.allSatisfy { $0 >= 60 + RequestBudget.travelMargin - 0.001 }, "shortest: \(spans.min() ?? 0) s")
        }
    }

    @Test(
        "A waiting request reserves nothing: a photo that gives up leaves no turn for the others to wait out",
        arguments: StoreKind.allCases)
    func waitingReservesNothing(kind: StoreKind) throws {
        try withStore(kind) { store, _ throws in
            let t0 = Self.start, budget = Self.budget()
            #expect(try store.providers.takeRequestTurn(provider: "gemini", budget: budget, now: t0) == .granted)
            for _ in 0..<5 { // five photos ask, then stop waiting
                #expect(
                    try store.providers.takeRequestTurn(
                        provider: "gemini", budget: budget, now: t0.addingTimeInterval(1))
                        == .notBefore(t0.addingTimeInterval(budget.interval)))
            }
            #expect(
                try store.providers.takeRequestTurn(
                    provider: "gemini", budget: budget, now: t0.addingTimeInterval(budget.interval)) == .granted)
        }
    }

    @Test(
        "The daily limit counts every process's requests and starts again when the provider's day ends",
        arguments: StoreKind.allCases)
    func dailyLimitAcrossProcesses(kind: StoreKind) throws {
        try withTwoProcesses(kind) { store, other throws in
            let budget = Self.budget(perDay: 3)
            var now = Self.start
            for process in [store, other, store] {
                #expect(try process.providers.takeRequestTurn(provider: "gemini", budget: budget, now: now) == .granted)
                now += budget.interval
            }
            #expect(
                try other.providers.takeRequestTurn(provider: "gemini", budget: budget, now: now)
                    == .dayUsedUp(until: Self.dayEnd, used: 3))
            #expect(try store.providers.requestsToday(provider: "gemini", now: now)?.used == 3)
            #expect(
                try store.providers.takeRequestTurn(provider: "gemini", budget: budget, now: Self.dayEnd) == .granted)
            #expect(try store.providers.requestsToday(provider: "gemini", now: Self.dayEnd)?.used == 1)
        }
    }

    @Test("A clock set back does not leave the provider waiting for the old time", arguments: StoreKind.allCases)
    func clockSetBack(kind: StoreKind) throws {
        try withStore(kind) { store, _ throws in
            let budget = Self.budget()
            #expect(
                try store.providers.takeRequestTurn(provider: "gemini", budget: budget, now: Self.start) == .granted)
            #expect(
                try store.providers.takeRequestTurn(provider: "gemini", budget: budget, now: Self.start - 600)
                    == .granted)
        }
    }

    @Test(
        "Raising the daily limit lifts its pause at the next start; a quota the provider reported stands",
        arguments: StoreKind.allCases)
    func raisedLimitLiftsThePause(kind: StoreKind) throws {
        try withStore(kind) { store, _ throws in
            var now = Self.start
            for _ in 0..<2 {
                _ = try store.providers.takeRequestTurn(provider: "gemini", budget: Self.budget(perDay: 2), now: now)
                now += Self.budget().interval
            }
            guard
                case .dayUsedUp(let until, _) = try store.providers.takeRequestTurn(
                    provider: "gemini", budget: Self.budget(perDay: 2), now: now)
            else { Issue.record("the limit of 2 was not reached"); return }
            try store.providers.setProviderHealth(
                ProviderHealth(
                    name: "gemini", state: .backoff, until: until, code: "provider_quota",
                    message: "daily limit"), now: Date())
            try store.providers.liftDailyLimitPause(provider: "gemini", budget: Self.budget(perDay: 2), now: now)
            #expect(try store.providers.providerHealth("gemini")?.state == .backoff, "the same limit: the pause stands")
            try store.providers.liftDailyLimitPause(provider: "gemini", budget: Self.budget(perDay: 5), now: now)
            #expect(try store.providers.providerHealth("gemini")?.state == .ok)

            let later = Self.dayEnd.addingTimeInterval(60) // Gemini's own daily quota: not ours to lift
            try store.providers.setProviderHealth(
                ProviderHealth(
                    name: "gemini", state: .backoff, until: later.addingTimeInterval(3_600),
                    code: "provider_quota", message: "Gemini's daily quota is used up"), now: Date())
            try store.providers.liftDailyLimitPause(provider: "gemini", budget: Self.budget(), now: later)
            #expect(try store.providers.providerHealth("gemini")?.state == .backoff)
        }
    }
}
