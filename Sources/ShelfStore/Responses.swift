import Foundation

/// A raw provider answer saved on disk before it was acted on.
package struct SavedResponse: Sendable, Equatable {
    package var id: Int64
    package var file: String
    package var latencyMs: Int?

    package init(id: Int64, file: String, latencyMs: Int?) { self.id = id; self.file = file; self.latencyMs = latencyMs }
}

extension Store {
    /// Records a response about to be written (atomically) to `file`; returns its id.
    @discardableResult
    package func recordResponse(jobID: Int64, sha256: String, provider: String, model: String, file: String, bytes: Int,
                                latencyMs: Int?, now: Date = Date()) throws -> Int64 {
        try write { db in
            let id = try db.insert("""
                INSERT INTO response (job_id, sha256, provider, model, file, bytes, latency_ms, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [jobID, sha256, provider, model, file, bytes, latencyMs, now])
            try Self.addEvent(db, "response_saved", sha256: sha256, jobID: jobID, message: "\(provider) \(bytes) bytes", now: now)
            return id
        }
    }

    /// The newest usable saved answer of this job from this provider and model: a job that has one is
    /// finished from disk after a crash or a retry, not sent again. (A rescan is a new job: it asks again.)
    package func usableResponse(jobID: Int64, provider: String, model: String) throws -> SavedResponse? {
        try read { db in
            guard let row = try db.queryOne("""
                SELECT id, file, latency_ms FROM response WHERE job_id = ? AND provider = ? AND model = ? AND usable = 1
                ORDER BY id DESC LIMIT 1
                """, [jobID, provider, model]), let id = row.int("id"), let file = row.string("file")
            else { return nil }
            return SavedResponse(id: id, file: file, latencyMs: row.int("latency_ms").map { Int($0) })
        }
    }

    /// A saved answer that turned out not to be an answer (cut, blocked, nonsense) must not be replayed.
    package func markResponseUnusable(id: Int64) throws {
        try write { db in try db.execute("UPDATE response SET usable = 0 WHERE id = ?", [id]) }
    }
}
