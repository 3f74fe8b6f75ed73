import Foundation

/// A finished photo's result as a shared store keeps it, until the node that writes the files for people writes it.
package struct StoredResult: Sendable, Equatable {
    package var jobID: Int64
    package var sha256: String
    /// The photo's path under incoming/ as it was ingested: the result's name under results/.
    package var relativePath: String
    /// The ResultDocument's JSON, byte for byte what the file holds.
    package var document: Data
    package init(jobID: Int64, sha256: String, relativePath: String, document: Data) {
        self.jobID = jobID; self.sha256 = sha256; self.relativePath = relativePath; self.document = document
    }
}

/// On a shared store, a worker's finished results go to the database (`finish` with a document), and the node that
/// writes files writes each once; it rewrites library.json, review/ and exports/ when `filesVersion` moved.
extension Store {
    /// Results no node has written yet, oldest job first (a rescan's result after the one it replaces).
    package func unwrittenResults(limit: Int) throws -> [StoredResult] {
        try readStatement { db in
            try db.query("""
                SELECT job_id, sha256, relative_path, document FROM result_document WHERE written_at IS NULL
                ORDER BY job_id LIMIT ?
                """, [limit]).compactMap { row in
                guard let id = row.int("job_id"), let sha = row.string("sha256"), let path = row.string("relative_path"),
                      case .blob(let bytes) = row["document"] else { return nil }
                return StoredResult(jobID: id, sha256: sha, relativePath: path, document: Data(bytes))
            }
        }
    }

    /// The result was written at `path`: it is not written again, and the job names the file (status, rescans).
    package func markResultWritten(jobID: Int64, path: String, now: Date) throws {
        try write { db in
            try db.execute("UPDATE result_document SET written_at = ? WHERE job_id = ?", [now, jobID])
            try db.execute("UPDATE job SET result_path = ? WHERE id = ?", [path, jobID])
        }
    }

    /// The newest result a shared store keeps for a photo, written or not: what `scan` prints on a node that
    /// writes no files. Nil on SQLite, whose results are only files.
    package func storedResult(sha256: String) throws -> Data? {
        try readStatement { db in
            guard case .blob(let bytes) = try db.queryOne("""
                SELECT document FROM result_document WHERE sha256 = ? ORDER BY job_id DESC LIMIT 1
                """, [sha256])?["document"] else { return nil }
            return Data(bytes)
        }
    }

    /// A number that moves whenever the library or the review queue changes, by any process (PostgreSQL: a trigger
    /// counts). Nil on SQLite, where each process writes the files after its own changes.
    package func filesVersion() throws -> Int64? {
        guard engine == .postgres else { return nil }
        return try readStatement { db in try db.queryOne("SELECT counter FROM files_change WHERE id = 1")?.int("counter") }
    }
}
