import Foundation
import ShelfCore

/// A job that needs attention: failed (will retry) or dead (will not).
package struct JobProblem: Sendable, Equatable {
    package var jobID: Int64
    package var state: JobState
    package var code: String
    package var message: String
    package var path: String
    package var attempts: Int
    package var retryAt: Date?
}

/// A photo's latest job: its state, result file, the failure's code and message when it failed, and its provider.
package typealias FinishedJob = (
    state: JobState, resultPath: String?, code: String?, message: String?, provider: String
)

/// What `status`, the overview and `/metrics` read of the queue: counts, problems, latencies, and the stamp that
/// says whether anything changed. A concern of the store with a type of its own over the shared database
/// (`Store.status`).
package struct StatusQueries: StoreConcern {
    let database: Store

    /// A stamp that moves whenever the database changes, whoever changed it: SQLite's `data_version` (another
    /// connection's commit) with this connection's own changed rows. Nil on PostgreSQL, which keeps no such number.
    /// A status built at one stamp is the status until it moves (and the clock's second, for its ages).
    package func changeStamp() throws -> String? {
        guard database.engine == .sqlite else { return nil }
        return try database.readStatement { db in
            try db.queryOne(
                "SELECT (SELECT data_version FROM pragma_data_version) AS version, total_changes() AS changes", [])
        }.map { "\($0.int("version") ?? 0):\($0.int("changes") ?? 0)" }
    }

    /// The processes holding jobs in progress, each with how many it holds: a row per holder, read over the leased jobs.
    package func leaseHolders() throws -> [String: Int] {
        try database.readStatement { db in
            var holders: [String: Int] = [:]
            for row in try db.query(
                "SELECT lease_owner, COUNT(*) AS n FROM job WHERE state = 'leased' GROUP BY lease_owner", [])
            {
                holders[row.string("lease_owner") ?? "", default: 0] += Int(row.int("n") ?? 0)
            }
            return holders
        }
    }

    /// The jobs per state, read from the counts the triggers keep (`tally`): the same cost at any library size.
    package func queueCounts(now: Date) throws -> QueueCounts {
        try database.readStatement { db in try Self.tally(db, now: now).counts }
    }

    /// The counts and the current pass, in one statement: `tally`'s rows, and the oldest pending job by its own index.
    static func tally(_ db: any DatabaseConnection, now: Date) throws -> (
        counts: QueueCounts, pass: QueueProgress.Pass?
    ) {
        var counts = QueueCounts()
        var total = 0, finished = 0
        var started: Date?
        for row in try db.query(
            """
            SELECT name, n, at FROM tally
            UNION ALL SELECT 'oldest_pending', 0, (SELECT created_at FROM job WHERE state = 'pending' ORDER BY created_at LIMIT 1)
            """)
        {
            let n = Int(row.int("n") ?? 0)
            switch row.string("name") {
            case "pending": counts.pending = n
            case "leased": counts.leased = n
            case "done": counts.done = n
            case "review": counts.review = n
            case "failed_retryable": counts.failed = n
            case "dead": counts.dead = n
            case "pass_total": total = n; started = row.date("at")
            case "pass_finished": finished = n
            case "oldest_pending":
                counts.oldestPendingSeconds = row.double("at").map { max(0, Int(now.timeIntervalSince1970 - $0)) }
            default: break
            }
        }
        // The pass lasts while a photo waits, is in hand or waits to retry.
        let open = counts.pending + counts.leased + counts.failed
        let pass = open > 0 ? started.map { QueueProgress.Pass(startedAt: $0, total: total, finished: finished) } : nil
        return (counts, pass)
    }

    package func jobProblems(limit: Int = 50) throws -> [JobProblem] {
        try database.readStatement { db in
            try db.query(
                """
                SELECT j.id, j.state, j.error_code, j.error_message, j.attempts, j.not_before, p.relative_path
                FROM job j JOIN photo p ON p.sha256 = j.sha256
                WHERE j.state IN ('dead', 'failed_retryable') ORDER BY j.updated_at DESC LIMIT ?
                """, [limit]
            ).map { row in
                JobProblem(
                    jobID: try row.required("id", of: "job"), state: try row.required("state", of: "job"),
                    code: row.string("error_code") ?? "unknown",
                    message: row.string("error_message") ?? "", path: row.string("relative_path") ?? "",
                    attempts: Int(row.int("attempts") ?? 0), retryAt: row.date("not_before"))
            }
        }
    }

    package func pathProblems(limit: Int = 50) throws -> [(path: String, code: String, message: String)] {
        try database.readStatement { db in
            try db.query("SELECT path, code, message FROM path_problem ORDER BY at DESC LIMIT ?", [limit]).map {
                ($0.string("path") ?? "", $0.string("code") ?? "", $0.string("message") ?? "")
            }
        }
    }

    /// p50 and p95 of the newest successful requests, in milliseconds.
    package func latencyPercentiles(provider: String, window: Int = 100) throws -> (p50: Int, p95: Int)? {
        try database.readStatement { db in
            let values = try db.query(
                """
                SELECT latency_ms FROM request WHERE provider = ? AND outcome = 'ok' ORDER BY id DESC LIMIT ?
                """, [provider, window]
            ).compactMap { $0.int("latency_ms") }.map(Int.init).sorted()
            guard !values.isEmpty else { return nil }
            func percentile(_ p: Double) -> Int {
                values[min(values.count - 1, Int((Double(values.count - 1) * p).rounded()))]
            }
            return (percentile(0.5), percentile(0.95))
        }
    }
}

extension PhotoQueue {
    /// The newest finished job whose result is at this path.
    package func jobID(resultPath: String) throws -> Int64? {
        try readStatement { db in
            try db.queryOne("SELECT id FROM job WHERE result_path = ? ORDER BY id DESC LIMIT 1", [resultPath])?.int(
                "id")
        }
    }

    /// The newest finished photos with their result files, newest first (for the tips `status` shows): walked from
    /// job_finished's newest end (`+state` keeps SQLite off job_state, which would read every finished job).
    package func recentResults(limit: Int) throws -> [(relativePath: String, resultPath: String, finishedAt: Date)] {
        try readStatement { db in
            try db.query(
                """
                SELECT p.relative_path, j.result_path, j.finished_at FROM job j JOIN photo p ON p.sha256 = j.sha256
                WHERE \(db.engine == .sqlite ? "+" : "")j.state IN ('done', 'review') AND j.result_path IS NOT NULL
                    AND j.finished_at IS NOT NULL
                ORDER BY j.finished_at DESC, j.id DESC LIMIT ?
                """, [limit]
            ).compactMap { row in
                guard let path = row.string("relative_path"), let result = row.string("result_path"),
                    let finished = row.date("finished_at")
                else { return nil }
                return (path, result, finished)
            }
        }
    }

    /// The result file of each finished photo, for `scan` to print what it found.
    package func finishedJob(sha256: String) throws -> FinishedJob? {
        try readStatement { db in
            guard
                let row = try db.queryOne(
                    """
                    SELECT state, result_path, error_code, error_message, provider FROM job WHERE sha256 = ? ORDER BY id DESC LIMIT 1
                    """, [sha256])
            else { return nil }
            return (
                try row.required("state", of: "job"), row.string("result_path"), row.string("error_code"),
                row.string("error_message"),
                row.string("provider") ?? ""
            )
        }
    }
}
