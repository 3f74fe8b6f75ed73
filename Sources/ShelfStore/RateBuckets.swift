import Foundation

/// A provider's limits as shelfd.toml sets them: requests per minute, and optionally per day.
package struct RequestBudget: Sendable {
    /// Requests start at least this far apart: (60 s + `travelMargin`) ÷ requests_per_minute. Any `limit + 1`
    /// consecutive turns then span more than a minute by the margin, so no 60 s the provider counts (any 60 s,
    /// not clock minutes) holds more than the limit.
    package var interval: TimeInterval
    /// Requests per provider day; nil or 0: no daily limit.
    package var perDay: Int?
    /// When the provider's day starts again after a moment (Gemini: midnight Pacific; Cloudflare: midnight UTC).
    package var dayEnds: @Sendable (Date) -> Date

    package init(requestsPerMinute: Int, perDay: Int? = nil, dayEnds: @escaping @Sendable (Date) -> Date) {
        interval = (60 + Self.travelMargin) / Double(max(1, requestsPerMinute))
        self.perDay = perDay.flatMap { $0 > 0 ? $0 : nil }
        self.dayEnds = dayEnds
    }

    /// A turn taken at t reaches the provider some time later (the task resumes, the attempt is recorded, the
    /// request is uploaded), and not the same time later for every request: one that travels faster than the one
    /// `limit` turns before it must still land outside that one's minute. On loopback the spread is about 20 ms
    /// (RateLimitTests prints it); 2 s leaves room for a loaded machine, a busy database between the turn and the
    /// send, and a slow uplink, for 3 % fewer requests than the limit.
    package static let travelMargin: TimeInterval = 2
}

/// What asking for a request's turn gave.
package enum RequestTurn: Sendable, Equatable {
    /// The request may start now; it is counted.
    case granted
    /// Another request holds the provider until then: ask again at that time.
    case notBefore(Date)
    /// The daily limit is reached until the provider's day ends.
    case dayUsedUp(until: Date, used: Int)
}

// One bucket per provider in the database, not one per process: `watch`, the nightly `run` beside it, `scan`,
// `rescan` and `eval` all ask the same provider with the same key, and the provider counts them together.
// (The other way, `run` and `scan` handing their photos to a running daemon, would leave `eval` and a daemon
// that is not running outside the rule, and needs a channel between processes that the queue already is.)
//
// A turn is taken only when it is due (no reservation ahead): a process that stops, or finds the provider
// paused, never leaves a turn unused in the bucket for the others to wait out.
/// A provider's bucket as stored (one row per provider, in either store), and the rule of taking a turn from it.
package struct BudgetRow: Sendable {
    package var nextStart: Date?
    package var dayEnds: Date?
    package var used: Int
    package var dayFullUntil: Date?

    package init(nextStart: Date?, dayEnds: Date?, used: Int, dayFullUntil: Date?) {
        self.nextStart = nextStart; self.dayEnds = dayEnds; self.used = used; self.dayFullUntil = dayFullUntil
    }

    /// Takes the next turn if it is due at `now`, counting it; the row changes as it is to be stored again.
    package mutating func take(_ budget: RequestBudget, now: Date) -> RequestTurn {
        var nextStart = self.nextStart ?? now
        var dayEnds = self.dayEnds ?? budget.dayEnds(now)
        if now >= dayEnds {
            dayEnds = budget.dayEnds(now)
            used = 0
        }
        // More than one interval ahead (and a second for clock slew) can only be a clock set back: start from now.
        if nextStart > now.addingTimeInterval(budget.interval + 1) { nextStart = now }
        let turn: RequestTurn
        if let perDay = budget.perDay, used >= perDay {
            turn = .dayUsedUp(until: dayEnds, used: used)
        } else if nextStart > now {
            turn = .notBefore(nextStart)
        } else {
            nextStart = now.addingTimeInterval(budget.interval)
            used += 1
            turn = .granted
        }
        if case .dayUsedUp(let until, _) = turn { dayFullUntil = until }
        self.nextStart = nextStart
        self.dayEnds = dayEnds
        return turn
    }
}

extension ProviderState {
    /// Takes the provider's next request turn if it is due: in one IMMEDIATE transaction, reads when the
    /// next request may start and how many were sent this provider day, and counts this one. `now` (for
    /// tests) defaults to the time the transaction starts: read before it, it could be older than a turn
    /// another process granted while this one waited for the lock.
    package func takeRequestTurn(provider: String, budget: RequestBudget, now: Date? = nil) throws -> RequestTurn {
        try database.write { db in try Self.takeTurn(db, provider: provider, budget: budget, now: now ?? Date()) }
    }

    package func takeRequestTurn(
        provider: String, budget: RequestBudget, charging jobID: Int64,
        now: Date? = nil
    ) throws -> (turn: RequestTurn, attempts: Int?) {
        try database.write { db in
            let now = now ?? Date()
            let turn = try Self.takeTurn(db, provider: provider, budget: budget, now: now)
            guard turn == .granted else { return (turn, nil) }
            return (turn, try PhotoQueue.chargeAttempt(db, jobID: jobID, now: now))
        }
    }

    private static func takeTurn(
        _ db: any DatabaseConnection, provider: String, budget: RequestBudget,
        now: Date
    ) throws -> RequestTurn {
        let row = try db.queryOne(
            "SELECT next_start, day_ends, day_count FROM request_budget WHERE provider = ?", [provider])
        var bucket = BudgetRow(
            nextStart: row?.date("next_start"), dayEnds: row?.date("day_ends"),
            used: Int(row?.int("day_count") ?? 0), dayFullUntil: row?.date("day_full_until"))
        let turn = bucket.take(budget, now: now)
        try db.execute(
            """
            INSERT INTO request_budget (provider, next_start, day_ends, day_count, day_full_until) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(provider) DO UPDATE SET next_start = excluded.next_start, day_ends = excluded.day_ends,
                day_count = excluded.day_count, day_full_until = excluded.day_full_until
            """, [provider, bucket.nextStart, bucket.dayEnds, bucket.used, bucket.dayFullUntil])
        return turn
    }

    /// A fresh process reads shelfd.toml again: when the provider waits for the daily limit and the limit now
    /// allows more today (raised, or turned off), the wait is lifted. A quota the provider itself reported stands.
    package func liftDailyLimitPause(provider: String, budget: RequestBudget, now: Date) throws {
        guard let health = try providerHealth(provider), health.state == .backoff, let until = health.until,
            until > now,
            let row = try database.read({
                try $0.queryOne("SELECT * FROM request_budget WHERE provider = ?", [provider])
            }),
            row.date("day_full_until") == until
        else { return }
        let used = Int(row.int("day_count") ?? 0)
        if let perDay = budget.perDay, used >= perDay { return }
        try setProviderHealth(ProviderHealth(name: provider, state: .ok), now: now)
    }

    /// Requests sent to the provider this provider day, and when that day ends; nil before the first.
    package func requestsToday(provider: String, now: Date) throws -> (used: Int, dayEnds: Date)? {
        try database.readStatement { db in
            guard
                let row = try db.queryOne(
                    "SELECT day_ends, day_count FROM request_budget WHERE provider = ?", [provider]),
                let dayEnds = row.date("day_ends"), dayEnds > now
            else { return nil }
            return (Int(row.int("day_count") ?? 0), dayEnds)
        }
    }
}
