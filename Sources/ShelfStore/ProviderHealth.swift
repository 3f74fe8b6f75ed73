import Foundation
import ShelfCore
import Synchronization

/// Whether a provider is being asked, and if not, until when and why.
package struct ProviderHealth: Sendable, Equatable, Codable {
    /// `unreachable` (no connection, DNS, timeout) and `unavailable` (5xx): an outage, ridden out with probes.
    package enum State: String, Sendable, Codable { case ok, backoff, paused, unreachable, unavailable }
    package var name: String
    package var state: State
    /// Backoff or pause end, or an outage's next probe; nil for a configuration problem (paused until the
    /// configuration changes).
    package var until: Date?
    package var code: String?
    package var message: String?
    /// When the outage began (unreachable, unavailable).
    package var since: Date?
    /// Probes that failed since the outage began: the next interval doubles with each.
    package var probes: Int

    package init(
        name: String, state: State, until: Date? = nil, code: String? = nil, message: String? = nil,
        since: Date? = nil, probes: Int = 0
    ) {
        self.name = name; self.state = state; self.until = until; self.code = code; self.message = message
        self.since = since; self.probes = probes
    }

    /// An outage: the provider did not answer, or answered only with server errors.
    package var isOutage: Bool { state == .unreachable || state == .unavailable }

    /// Why the provider is not being asked, in words: "unreachable since 10:02:11 (could not connect …)".
    package var summary: String {
        let since = self.since.map { " since \($0.timeOfDay)" } ?? ""
        let until = self.until.map { " until \($0.timeOfDay)" } ?? ""
        let why = message.map { " (\($0))" } ?? ""
        return isOutage ? "\(state.rawValue)\(since)\(why)" : "\(state.rawValue)\(until)\(why)"
    }

    /// Whether it keeps the provider (or book source) from being asked at `now`: a pause until the
    /// configuration changes, a backoff until its end.
    package func isInForce(at now: Date) -> Bool {
        switch state {
        case .ok: false
        case .paused: true
        case .backoff, .unreachable, .unavailable: until.map { $0 > now } ?? true
        }
    }

    /// The wait before the probe after `failedProbes` failed ones: 5 s doubling up to `ceiling`, ±20 % jitter
    /// (so several machines that lost the same provider do not come back in step).
    package static func probeInterval(failedProbes: Int, ceiling: TimeInterval) -> TimeInterval {
        let base = min(ceiling, 5 * pow(2, Double(min(failedProbes, 20))))
        return max(0.5, base * Double.random(in: 0.8...1.2))
    }
}

/// Whether a request may go to a provider now.
package enum ProviderTurn: Sendable, Equatable {
    case open
    /// The provider is down and this request is the one probe: the next one waits a full interval.
    case probe
    case wait(ProviderHealth)
}

/// The providers' and book sources' shared state: their health (outages and their probes, pauses, backoffs), the
/// request budgets every process takes its turns from, and the requests' latencies. A concern of the store with a
/// type of its own over the shared database (`Store.providers`): what holds it can do nothing else with the store.
package struct ProviderState: ProviderHealthStore, RequestBudgetStore, StoreConcern {
    let database: Store
}

extension ProviderState {
    /// One provider request in the caller's transaction; the oldest beyond 1,000 go, a hundred at a time (one
    /// statement in a hundred), so the table stays small without a second statement per request.
    static func logRequest(_ db: any DatabaseConnection, provider: String, latencyMs: Int, outcome: String, now: Date)
        throws
    {
        let id = try db.insert(
            "INSERT INTO request (provider, at, latency_ms, outcome) VALUES (?, ?, ?, ?)",
            [provider, now, latencyMs, outcome])
        if id % 100 == 0 { try db.execute("DELETE FROM request WHERE id <= ?", [id - 1000]) }
    }
}

extension ProviderState {
    package func setProviderHealth(_ health: ProviderHealth, now: Date) throws {
        defer { forgetFine(health.name) }
        try database.write { db in
            let previous = try db.queryOne("SELECT state FROM provider_state WHERE name = ?", [health.name])?.string(
                "state")
            try Self.saveHealth(db, health, now: now)
            if previous != health.state.rawValue {
                try PhotoQueue.addEvent(
                    db, "provider_\(health.state.rawValue)", message: "\(health.name): \(health.message ?? "")",
                    now: now)
            }
        }
    }

    /// Writes a provider's whole state row (inside the caller's transaction).
    private static func saveHealth(_ db: any DatabaseConnection, _ health: ProviderHealth, now: Date) throws {
        try db.upsert(
            into: "provider_state", key: "name",
            [
                "name": health.name, "state": health.state.rawValue, "until": health.until, "code": health.code,
                "message": health.message, "since": health.since, "probes": health.probes, "updated_at": now,
            ])
    }

    /// A fresh process re-reads keys and configuration: a pause for a configuration problem is lifted (it
    /// comes back at the first request if the problem is still there). Backoffs and quota waits stand.
    package func liftPause(_ name: String, now: Date) throws {
        if let health = try providerHealth(name), health.state == .paused {
            try setProviderHealth(ProviderHealth(name: name, state: .ok), now: now)
        }
    }

    /// The provider's state. Most reads (each photo's turn and answer, the scheduler's gate) find it fine: a
    /// fine state read less than a second ago is taken as it is, so they cost no round trip; any other state is read
    /// every time, and this store's own writes are seen at once. Another process's outage is seen within a second.
    package func providerHealth(_ name: String) throws -> ProviderHealth? {
        let now = ContinuousClock.now
        if let fine = database.fineProviders.withLock({ $0[name] }), now - fine.read < .seconds(1) {
            return fine.health
        }
        let health = try database.readStatement { db in try providerHealthIn(db, name) }
        database.fineProviders.withLock { fine in
            if health == nil || health?.state == .ok { fine[name] = (health, now) } else { fine[name] = nil }
        }
        return health
    }

    /// This store changed the provider's state: the next read asks the database.
    private func forgetFine(_ name: String) {
        _ = database.fineProviders.withLock { $0.removeValue(forKey: name) }
    }

    /// Whether a request may go to the provider now. While it is down, the first request after the probe time
    /// is the probe, and the probe time moves on by the next interval at once, in the same transaction: however many
    /// photos or processes are waiting, one request goes out per interval.
    package func takeTurn(_ name: String, ceiling: TimeInterval, now: Date) throws -> ProviderTurn {
        // Most of the time the provider is fine: a read says so without taking the write lock.
        let seen = try providerHealth(name)
        guard let seen, seen.isOutage || seen.isInForce(at: now) else { return .open }
        defer { forgetFine(name) }
        return try database.write { db in
            guard let health = try providerHealthIn(db, name) else { return .open }
            if health.isInForce(at: now) { return .wait(health) }
            guard health.isOutage else { return .open }
            let interval = ProviderHealth.probeInterval(failedProbes: health.probes + 1, ceiling: ceiling)
            try db.execute(
                "UPDATE provider_state SET until = ?, updated_at = ? WHERE name = ?",
                [now.addingTimeInterval(interval), now, name])
            return .probe
        }
    }

    /// An outage seen by a request: the provider becomes unreachable or unavailable (since now), or, when it
    /// already was and this request was the probe, its next probe waits twice as long. A request that was
    /// already in flight when the outage began changes nothing.
    package func recordOutage(
        _ name: String, state: ProviderHealth.State, code: String, message: String, probe: Bool,
        ceiling: TimeInterval, notBefore: Date? = nil, now: Date
    ) throws -> ProviderHealth {
        defer { forgetFine(name) }
        return try database.write { db in
            let current = try providerHealthIn(db, name)
            guard
                let health = ProviderHealth.outage(
                    after: current, name: name, state: state, code: code, message: message,
                    probe: probe, ceiling: ceiling, notBefore: notBefore, now: now)
            else { return current! }
            try Self.saveHealth(db, health, now: now)
            if current?.isOutage != true {
                try PhotoQueue.addEvent(db, "provider_\(state.rawValue)", message: "\(name): \(message)", now: now)
            }
            return health
        }
    }

    private func providerHealthIn(_ db: any DatabaseConnection, _ name: String) throws -> ProviderHealth? {
        guard let row = try db.queryOne("SELECT * FROM provider_state WHERE name = ?", [name]) else { return nil }
        return ProviderHealth(
            name: name, state: try row.required("state", of: "provider_state"), until: row.date("until"),
            code: row.string("code"),
            message: row.string("message"), since: row.date("since"), probes: Int(row.int("probes") ?? 0))
    }

    /// One provider request, for the latency figures of `status`. Keeps the newest 1,000 (and up to 99 more).
    package func recordRequest(provider: String, latencyMs: Int, outcome: String, now: Date) throws {
        try database.write { db in
            try ProviderState.logRequest(db, provider: provider, latencyMs: latencyMs, outcome: outcome, now: now)
        }
    }
}

extension ProviderHealth {
    /// The rule of an outage seen by a request, for every store: the provider becomes unreachable or unavailable
    /// (since now), or, when it already was and this request was the probe, its next probe waits twice as long.
    /// Nil: nothing changes (the outage is in force and this request was not its probe).
    package static func outage(
        after current: ProviderHealth?, name: String, state: State, code: String, message: String,
        probe: Bool, ceiling: TimeInterval, notBefore: Date?, now: Date
    ) -> ProviderHealth? {
        var health: ProviderHealth
        if let current, current.isOutage {
            guard probe else { return nil }
            health = current
            health.probes += 1
        } else {
            health = ProviderHealth(name: name, state: state, since: now)
        }
        health.state = state; health.code = code; health.message = message
        var next = now.addingTimeInterval(probeInterval(failedProbes: health.probes, ceiling: ceiling))
        if let notBefore, notBefore > next { next = notBefore }
        health.until = next
        return health
    }
}
