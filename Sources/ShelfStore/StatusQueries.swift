import Foundation

/// How many jobs are in each state.
package struct QueueCounts: Sendable, Equatable, Codable {
    package var pending = 0, leased = 0, done = 0, review = 0, failed = 0, dead = 0
    /// Age of the oldest job waiting to be claimed.
    package var oldestPendingSeconds: Int?
    package init() {}
}

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

/// The running daemon, as it registered itself.
package struct DaemonRecord: Sendable, Equatable {
    package var pid: Int32
    package var owner: String
    package var since: Date
    package var watchMode: String?
    package var heartbeat: Date
}

extension Store {
    package func queueCounts(now: Date = Date()) throws -> QueueCounts {
        try read { db in
            var counts = QueueCounts()
            for row in try db.query("SELECT state, COUNT(*) AS n FROM job GROUP BY state") {
                let n = Int(row.int("n") ?? 0)
                switch JobState(rawValue: row.string("state") ?? "") {
                case .pending: counts.pending = n
                case .leased: counts.leased = n
                case .done: counts.done = n
                case .review: counts.review = n
                case .failedRetryable: counts.failed = n
                case .dead: counts.dead = n
                case nil: break
                }
            }
            if let oldest = try db.queryOne("SELECT MIN(created_at) AS t FROM job WHERE state = 'pending'")?.double("t") {
                counts.oldestPendingSeconds = max(0, Int(now.timeIntervalSince1970 - oldest))
            }
            return counts
        }
    }

    package func jobProblems(limit: Int = 50) throws -> [JobProblem] {
        try read { db in
            try db.query("""
                SELECT j.id, j.state, j.error_code, j.error_message, j.attempts, j.not_before, p.relative_path
                FROM job j JOIN photo p ON p.sha256 = j.sha256
                WHERE j.state IN ('dead', 'failed_retryable') ORDER BY j.updated_at DESC LIMIT ?
                """, [limit]).compactMap { row in
                guard let id = row.int("id"), let state = JobState(rawValue: row.string("state") ?? "") else { return nil }
                return JobProblem(jobID: id, state: state, code: row.string("error_code") ?? "unknown",
                                  message: row.string("error_message") ?? "", path: row.string("relative_path") ?? "",
                                  attempts: Int(row.int("attempts") ?? 0), retryAt: row.date("not_before"))
            }
        }
    }

    package func pathProblems(limit: Int = 50) throws -> [(path: String, code: String, message: String)] {
        try read { db in
            try db.query("SELECT path, code, message FROM path_problem ORDER BY at DESC LIMIT ?", [limit]).map {
                ($0.string("path") ?? "", $0.string("code") ?? "", $0.string("message") ?? "")
            }
        }
    }

    /// p50 and p95 of the newest successful requests, in milliseconds.
    package func latencyPercentiles(provider: String, window: Int = 100) throws -> (p50: Int, p95: Int)? {
        try read { db in
            let values = try db.query("""
                SELECT latency_ms FROM request WHERE provider = ? AND outcome = 'ok' ORDER BY id DESC LIMIT ?
                """, [provider, window]).compactMap { $0.int("latency_ms") }.map(Int.init).sorted()
            guard !values.isEmpty else { return nil }
            func percentile(_ p: Double) -> Int { values[min(values.count - 1, Int((Double(values.count - 1) * p).rounded()))] }
            return (percentile(0.5), percentile(0.95))
        }
    }

    package func registerDaemon(pid: Int32, owner: String, watchMode: String?, now: Date = Date()) throws {
        try write { db in
            try db.execute("""
                INSERT INTO daemon (id, pid, owner, since, watch_mode, heartbeat) VALUES (1, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET pid = excluded.pid, owner = excluded.owner, since = excluded.since,
                    watch_mode = excluded.watch_mode, heartbeat = excluded.heartbeat
                """, [Int(pid), owner, now, watchMode, now])
        }
    }

    package func updateDaemon(owner: String, watchMode: String?, now: Date = Date()) throws {
        try write { db in
            try db.execute("UPDATE daemon SET watch_mode = COALESCE(?, watch_mode), heartbeat = ? WHERE owner = ?",
                           [watchMode, now, owner])
        }
    }

    package func unregisterDaemon(owner: String) throws {
        try write { db in try db.execute("DELETE FROM daemon WHERE owner = ?", [owner]) }
    }

    package func daemonRecord() throws -> DaemonRecord? {
        try read { db in
            guard let row = try db.queryOne("SELECT * FROM daemon WHERE id = 1"), let pid = row.int("pid") else { return nil }
            return DaemonRecord(pid: Int32(pid), owner: row.string("owner") ?? "", since: row.date("since") ?? Date(),
                                watchMode: row.string("watch_mode"), heartbeat: row.date("heartbeat") ?? Date())
        }
    }

    /// The newest finished job whose result is at this path.
    package func jobID(resultPath: String) throws -> Int64? {
        try read { db in
            try db.queryOne("SELECT id FROM job WHERE result_path = ? ORDER BY id DESC LIMIT 1", [resultPath])?.int("id")
        }
    }

    /// The newest finished photos with their result files, newest first (for the tips `status` shows).
    package func recentResults(limit: Int) throws -> [(relativePath: String, resultPath: String, finishedAt: Date)] {
        try read { db in
            try db.query("""
                SELECT p.relative_path, j.result_path, j.finished_at FROM job j JOIN photo p ON p.sha256 = j.sha256
                WHERE j.state IN ('done', 'review') AND j.result_path IS NOT NULL
                ORDER BY j.finished_at DESC, j.id DESC LIMIT ?
                """, [limit]).compactMap { row in
                guard let path = row.string("relative_path"), let result = row.string("result_path"),
                      let finished = row.date("finished_at") else { return nil }
                return (path, result, finished)
            }
        }
    }

    /// The result file of each finished photo, for `scan` to print what it found.
    package func finishedJob(sha256: String) throws -> (state: JobState, resultPath: String?, code: String?, message: String?, provider: String)? {
        try read { db in
            guard let row = try db.queryOne("""
                SELECT state, result_path, error_code, error_message, provider FROM job WHERE sha256 = ? ORDER BY id DESC LIMIT 1
                """, [sha256]), let state = JobState(rawValue: row.string("state") ?? "") else { return nil }
            return (state, row.string("result_path"), row.string("error_code"), row.string("error_message"), row.string("provider") ?? "")
        }
    }
}

extension Store {
    package func setting(_ key: String) throws -> String? {
        try read { db in try db.queryOne("SELECT value FROM setting WHERE key = ?", [key])?.string("value") }
    }

    package func setSetting(_ key: String, _ value: String) throws {
        try write { db in
            try db.execute("INSERT INTO setting (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                           [key, value])
        }
    }
}
