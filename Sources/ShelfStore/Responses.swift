import Foundation

/// A raw provider answer saved on disk (and, on a shared store, in the database) before it was acted on.
package struct SavedResponse: Sendable, Equatable {
    package var id: Int64
    package var file: String
    package var latencyMs: Int?
    /// The answer as the database keeps it: on a shared store, for workers that cannot read `file`.
    package var body: [UInt8]?

    package init(id: Int64, file: String, latencyMs: Int?, body: [UInt8]? = nil) {
        self.id = id; self.file = file; self.latencyMs = latencyMs; self.body = body
    }
}

extension PhotoQueue {
    /// Records a response about to be written (atomically) to `file`; returns its id (the row is its own record: no
    /// event is written beside it). The photo is `matching` from then on (`progress` reads it from this row, so the
    /// stage costs no statement). With `request` the request that brought the answer is logged in the same
    /// transaction for the latency figures (as `recordRequest` would, without a transaction of its own).
    @discardableResult
    package func recordResponse(
        jobID: Int64, sha256: String, provider: String, model: String, file: String, bytes: Int,
        body: [UInt8]? = nil, latencyMs: Int?, request: Bool = false, now: Date
    ) throws -> Int64 {
        try write { db in
            let id = try db.insert(
                """
                INSERT INTO response (job_id, sha256, provider, model, file, bytes, body, latency_ms, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [jobID, sha256, provider, model, file, bytes, body.map(SQLValue.blob) ?? .null, latencyMs, now])
            if request {
                try ProviderState.logRequest(db, provider: provider, latencyMs: latencyMs ?? 0, outcome: "ok", now: now)
            }
            return id
        }
    }

    /// The newest usable saved answer of this job from this provider and model: a job that has one is
    /// finished from disk after a crash or a retry, not sent again. (A rescan is a new job: it asks again.)
    package func usableResponse(jobID: Int64, provider: String, model: String) throws -> SavedResponse? {
        try readStatement { db in
            guard
                let row = try db.queryOne(
                    """
                    SELECT id, file, latency_ms, body FROM response WHERE job_id = ? AND provider = ? AND model = ? AND usable = 1
                    ORDER BY id DESC LIMIT 1
                    """, [jobID, provider, model]), let id = row.int("id"), let file = row.string("file")
            else { return nil }
            let body: [UInt8]? = if case .blob(let bytes) = row["body"] { bytes } else { nil }
            return SavedResponse(id: id, file: file, latencyMs: row.int("latency_ms").map { Int($0) }, body: body)
        }
    }

    /// A saved answer that turned out not to be an answer (cut, blocked, nonsense) must not be replayed.
    package func markResponseUnusable(id: Int64) throws {
        try write { db in try db.execute("UPDATE response SET usable = 0 WHERE id = ?", [id]) }
    }
}
