import Foundation

/// Hybrid photos finished with the fast reading because the accurate provider was not asked (down, paused, out
/// of quota): they are marked as awaiting it, and asked again once it answers. The new job is a rescan that
/// replays the fast provider's saved answer (never paid twice) and asks the accurate one.
extension PhotoQueue {
    /// Requeues the photos awaiting `provider`: every one marked before its last successful answer, and, with
    /// `oneMore` (the provider may be asked now: its probe is due, or it is believed fine), the oldest other
    /// one when no recheck is queued yet, so a provider that is back is found even when no new photo comes.
    /// Returns the new jobs' IDs.
    @discardableResult
    package func requeueAwaiting(provider: String, oneMore: Bool, now: Date) throws -> [Int64] {
        try write { db in
            guard try db.queryOne("SELECT 1 AS one FROM job WHERE awaiting = ? LIMIT 1", [provider]) != nil else {
                return []
            }
            let answered = try db.queryOne(
                "SELECT MAX(at) AS t FROM request WHERE provider = ? AND outcome = 'ok'",
                [provider])?.date("t")
            var due = try db.query(
                """
                SELECT id, sha256 FROM job WHERE awaiting = ? AND state IN ('done', 'review') AND finished_at < ?
                ORDER BY id
                """, [provider, answered ?? .distantPast])
            let queued =
                try db.queryOne(
                    """
                    SELECT 1 AS one FROM job WHERE recheck_of IS NOT NULL AND state IN ('pending','leased','failed_retryable')
                    """) != nil
            if due.isEmpty && oneMore && !queued {
                due = try db.query(
                    """
                    SELECT id, sha256 FROM job WHERE awaiting = ? AND state IN ('done', 'review') ORDER BY id LIMIT 1
                    """, [provider])
            }
            var created: [Int64] = []
            for row in due {
                let old: Int64 = try row.required("id", of: "job"), sha: String = try row.required("sha256", of: "job")
                try db.execute("UPDATE job SET awaiting = NULL WHERE id = ?", [old])
                guard
                    try db.queryOne(
                        """
                        SELECT 1 AS one FROM job WHERE sha256 = ? AND state IN ('pending','leased','failed_retryable')
                        """, [sha]) == nil
                else { continue } // already queued again (a rescan): that one asks
                let job = try db.insert(
                    """
                    INSERT INTO job (sha256, provider, state, attempts, created_at, updated_at, recheck_of)
                    VALUES (?, '', 'pending', 0, ?, ?, ?)
                    """, [sha, now, now, old])
                // The fast provider's answer is replayed, not asked for again.
                try db.execute(
                    """
                    INSERT INTO response (job_id, sha256, provider, model, file, bytes, latency_ms, received_at)
                    SELECT ?, sha256, provider, model, file, bytes, latency_ms, received_at FROM response
                    WHERE job_id = ? AND provider <> ? AND usable = 1
                    """, [job, old, provider])
                try Self.addEvent(db, "recheck", sha256: sha, jobID: job, message: "asking \(provider) again", now: now)
                created.append(job)
            }
            return created
        }
    }

    /// Whether this job asks the accurate provider again for an earlier fast reading (it does so once).
    package func isRecheck(jobID: Int64) throws -> Bool {
        try readStatement { db in
            try db.queryOne("SELECT recheck_of FROM job WHERE id = ?", [jobID])?.int("recheck_of") != nil
        }
    }

    /// Photos whose fast reading waits for `provider`.
    package func awaitingCount(provider: String) throws -> Int {
        try readStatement { db in
            Int(try db.queryOne("SELECT COUNT(*) AS n FROM job WHERE awaiting = ?", [provider])?.int("n") ?? 0)
        }
    }
}
