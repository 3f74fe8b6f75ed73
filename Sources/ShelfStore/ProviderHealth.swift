import Foundation

/// Whether a provider is being asked, and if not, until when and why.
package struct ProviderHealth: Sendable, Equatable, Codable {
    package enum State: String, Sendable, Codable { case ok, backoff, paused }
    package var name: String
    package var state: State
    /// Backoff or pause end; nil for a configuration problem (paused until the configuration changes).
    package var until: Date?
    package var code: String?
    package var message: String?

    package init(name: String, state: State, until: Date? = nil, code: String? = nil, message: String? = nil) {
        self.name = name; self.state = state; self.until = until; self.code = code; self.message = message
    }

    /// Whether it keeps the provider (or book source) from being asked at `now`: a pause until the
    /// configuration changes, a backoff until its end.
    package func isInForce(at now: Date) -> Bool {
        switch state {
        case .ok: false
        case .paused: true
        case .backoff: until.map { $0 > now } ?? true
        }
    }
}

extension Store {
    package func setProviderHealth(_ health: ProviderHealth, now: Date = Date()) throws {
        try write { db in
            let previous = try db.queryOne("SELECT state FROM provider_state WHERE name = ?", [health.name])?.string("state")
            try db.execute("""
                INSERT INTO provider_state (name, state, until, code, message, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET state = excluded.state, until = excluded.until, code = excluded.code,
                    message = excluded.message, updated_at = excluded.updated_at
                """, [health.name, health.state.rawValue, health.until, health.code, health.message, now])
            if previous != health.state.rawValue {
                try Self.addEvent(db, "provider_\(health.state.rawValue)", message: "\(health.name): \(health.message ?? "")", now: now)
            }
        }
    }

    /// A fresh process re-reads keys and configuration: a pause for a configuration problem is lifted (it
    /// comes back at the first request if the problem is still there). Backoffs and quota waits stand.
    package func liftPause(_ name: String) throws {
        if let health = try providerHealth(name), health.state == .paused {
            try setProviderHealth(ProviderHealth(name: name, state: .ok))
        }
    }

    package func providerHealth(_ name: String) throws -> ProviderHealth? {
        try read { db in
            guard let row = try db.queryOne("SELECT * FROM provider_state WHERE name = ?", [name]),
                  let state = ProviderHealth.State(rawValue: row.string("state") ?? "") else { return nil }
            return ProviderHealth(name: name, state: state, until: row.date("until"), code: row.string("code"),
                                  message: row.string("message"))
        }
    }

    /// One provider request, for the latency figures of `status`. Keeps the newest 1,000.
    package func recordRequest(provider: String, latencyMs: Int, outcome: String, now: Date = Date()) throws {
        try write { db in
            try db.execute("INSERT INTO request (provider, at, latency_ms, outcome) VALUES (?, ?, ?, ?)",
                           [provider, now, latencyMs, outcome])
            try db.execute("DELETE FROM request WHERE id <= (SELECT MAX(id) - 1000 FROM request)")
        }
    }
}
