import Foundation
import PostgresNIO
import ShelfStore

// The shared request budgets (RateBuckets.swift) and the providers' health (ProviderHealth.swift) on PostgreSQL,
// with the same rules. Where SQLite holds the one write lock, a provider's row is locked (`FOR UPDATE`) for the
// transaction: workers on any machine take their turns one after another from the same row.
extension PostgresStore: RequestBudgetStore {
    /// Takes the provider's next request turn if it is due. `now` nil: the database server's clock, read once the
    /// row is locked, so workers on machines whose clocks differ still keep one spacing between requests.
    package func takeRequestTurn(provider: String, budget: RequestBudget, now: Date?) throws -> RequestTurn {
        try write { db in
            try db.execute("INSERT INTO request_budget (provider) VALUES (\(provider)) ON CONFLICT (provider) DO NOTHING")
            let row = try db.query("""
                SELECT next_start, day_ends, day_count, day_full_until, clock_timestamp() FROM request_budget
                WHERE provider = \(provider) FOR UPDATE
                """).first!
            let (storedNext, storedDayEnds, storedCount, storedFullUntil, serverNow) =
                try row.decode((Date?, Date?, Int, Date?, Date).self)
            var bucket = BudgetRow(nextStart: storedNext, dayEnds: storedDayEnds, used: storedCount, dayFullUntil: storedFullUntil)
            let turn = bucket.take(budget, now: now ?? serverNow)
            try db.execute("""
                UPDATE request_budget SET next_start = \(bucket.nextStart), day_ends = \(bucket.dayEnds), day_count = \(bucket.used),
                    day_full_until = \(bucket.dayFullUntil)
                WHERE provider = \(provider)
                """)
            return turn
        }
    }
}

extension PostgresStore: ProviderHealthStore {
    package func providerHealth(_ name: String) throws -> ProviderHealth? {
        try read { db in try readHealth(db, name, lock: false) }
    }

    package func setProviderHealth(_ health: ProviderHealth, now: Date) throws {
        try write { db in
            let previous = try readHealth(db, health.name, lock: true)?.state
            try save(db, health, now: now)
            if previous != health.state {
                try addEvent(db, "provider_\(health.state.rawValue)", message: "\(health.name): \(health.message ?? "")", now: now)
            }
        }
    }

    /// Whether a request may go to the provider now; while it is down, one probe per interval across every worker.
    package func takeTurn(_ name: String, ceiling: TimeInterval, now: Date) throws -> ProviderTurn {
        // Most of the time the provider is fine: a plain read says so without locking its row.
        guard let seen = try providerHealth(name), seen.isOutage || seen.isInForce(at: now) else { return .open }
        return try write { db in
            guard let health = try readHealth(db, name, lock: true) else { return .open }
            if health.isInForce(at: now) { return .wait(health) }
            guard health.isOutage else { return .open }
            let interval = ProviderHealth.probeInterval(failedProbes: health.probes + 1, ceiling: ceiling)
            try db.execute("UPDATE provider_state SET until = \(now.addingTimeInterval(interval)), updated_at = \(now) WHERE name = \(name)")
            return .probe
        }
    }

    package func recordOutage(_ name: String, state: ProviderHealth.State, code: String, message: String, probe: Bool,
                              ceiling: TimeInterval, notBefore: Date?, now: Date) throws -> ProviderHealth {
        try write { db in
            let current = try readHealth(db, name, lock: true)
            guard let health = ProviderHealth.outage(after: current, name: name, state: state, code: code, message: message,
                                                     probe: probe, ceiling: ceiling, notBefore: notBefore, now: now)
            else { return current! }
            try save(db, health, now: now)
            if current?.isOutage != true {
                try addEvent(db, "provider_\(state.rawValue)", message: "\(name): \(message)", now: now)
            }
            return health
        }
    }

    package func recordRequest(provider: String, latencyMs: Int, outcome: String, now: Date) throws {
        try write { db in
            try db.execute("INSERT INTO request (provider, at, latency_ms, outcome) VALUES (\(provider), \(now), \(latencyMs), \(outcome))")
            try db.execute("DELETE FROM request WHERE id <= (SELECT MAX(id) - 1000 FROM request)")
        }
    }

    package func liftPause(_ name: String) throws {
        if let health = try providerHealth(name), health.state == .paused {
            try setProviderHealth(ProviderHealth(name: name, state: .ok), now: Date())
        }
    }

    private func readHealth(_ db: Session, _ name: String, lock: Bool) throws -> ProviderHealth? {
        guard let row = try db.query("""
            SELECT state, until, code, message, since, probes FROM provider_state WHERE name = \(name)
            \(unescaped: lock ? "FOR UPDATE" : "")
            """).first else { return nil }
        let (state, until, code, message, since, probes) = try row.decode((String, Date?, String?, String?, Date?, Int).self)
        guard let state = ProviderHealth.State(rawValue: state) else { return nil }
        return ProviderHealth(name: name, state: state, until: until, code: code, message: message, since: since, probes: probes)
    }

    private func save(_ db: Session, _ health: ProviderHealth, now: Date) throws {
        try db.execute("""
            INSERT INTO provider_state (name, state, until, code, message, since, probes, updated_at)
            VALUES (\(health.name), \(health.state.rawValue), \(health.until), \(health.code), \(health.message),
                    \(health.since), \(health.probes), \(now))
            ON CONFLICT (name) DO UPDATE SET state = excluded.state, until = excluded.until, code = excluded.code,
                message = excluded.message, since = excluded.since, probes = excluded.probes, updated_at = excluded.updated_at
            """)
    }
}
