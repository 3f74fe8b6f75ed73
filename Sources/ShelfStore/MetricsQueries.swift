import Foundation

/// What `/metrics` and `/healthz` read at scrape time: the facts the daemon already keeps, so `shelfd web` alone
/// reports the same. A concern of the store with a type of its own (`Store.metrics`).
package struct MetricsQueries: StoreConcern {
    let database: Store

    /// True when the database answers a query (`/healthz`).
    package func isAnswering() -> Bool {
        (try? database.read { db in try db.queryOne("SELECT 1 AS one")?.int("one") }) == 1
    }

    /// Every provider request ever recorded, by provider and outcome (`ok`, `quota`, `server_error`, …).
    package func requestCounts() throws -> [(provider: String, outcome: String, count: Int)] {
        try database.readStatement { db in
            try db.query(
                "SELECT provider, outcome, COUNT(*) AS n FROM request GROUP BY provider, outcome ORDER BY provider, outcome"
            )
            .map { ($0.string("provider") ?? "", $0.string("outcome") ?? "", Int($0.int("n") ?? 0)) }
        }
    }

    /// The latency of every answered request, by provider, in milliseconds (counted per distinct value).
    package func answeredLatencies() throws -> [(provider: String, latencyMs: Int, count: Int)] {
        try database.readStatement { db in
            try db.query(
                """
                SELECT provider, latency_ms, COUNT(*) AS n FROM request WHERE outcome = 'ok' GROUP BY provider, latency_ms
                """
            ).map { ($0.string("provider") ?? "", Int($0.int("latency_ms") ?? 0), Int($0.int("n") ?? 0)) }
        }
    }
}
