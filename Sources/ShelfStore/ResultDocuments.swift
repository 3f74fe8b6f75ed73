import Foundation

/// A finished photo's result as a shared store keeps it, until the node that writes the files for people writes it.
package struct StoredResult: Sendable, Equatable {
    package var jobID: Int64
    package var sha256: String
    /// The photo's path under incoming/ as it was ingested: the result's name under results/.
    package var relativePath: String
    /// The ResultDocument's JSON, byte for byte what the file holds.
    package var document: Data
}

/// On a shared store, a worker's finished results go to the database (`finish` with a document), and each is written
/// once, where its photo arrived: by the node that ingested the photo first when that node writes files
/// (`photo.result_node`), otherwise by a node with `writes_files = true`, which takes it (`taken_by`). A node on
/// "auto" writes only its own photos' results, so one person's results are never split across machines. Every node
/// that writes files rewrites library.json, review/ and exports/ when `filesVersion` moved. A concern of the store
/// with a type of its own over the shared database (`Store.results`).
package struct ResultDocuments: SharedFilesStore, StoreConcern {
    let database: Store

    /// The results `node` writes and has not written yet, oldest job first (a rescan's result after the one it
    /// replaces). `takingOthers` (a node with `writes_files = true`): first takes the results of photos whose node
    /// writes no files, each by one node only; a look finds none most turns, and only then is a write needed.
    package func unwritten(node: String, takingOthers: Bool, limit: Int) throws -> [StoredResult] {
        let others = "r.written_at IS NULL AND r.taken_by IS NULL AND p.result_node IS NULL"
        if takingOthers,
            try database.read({ db in
                try db.queryOne(
                    "SELECT 1 AS one FROM result_document r JOIN photo p ON p.sha256 = r.sha256 WHERE \(others) LIMIT 1"
                ) != nil
            })
        {
            try database.write { db in
                try db.execute(
                    """
                    UPDATE result_document SET taken_by = ? WHERE job_id IN (
                        SELECT r.job_id FROM result_document r JOIN photo p ON p.sha256 = r.sha256 WHERE \(others))
                    """, [node])
            }
        }
        return try database.readStatement { db in
            try db.query(
                """
                SELECT r.job_id, r.sha256, r.relative_path, r.document FROM result_document r JOIN photo p ON p.sha256 = r.sha256
                WHERE r.written_at IS NULL AND COALESCE(r.taken_by, p.result_node) = ?
                ORDER BY r.job_id LIMIT ?
                """, [node, limit]
            ).compactMap { row in
                guard let id = row.int("job_id"), let sha = row.string("sha256"),
                    let path = row.string("relative_path"),
                    case .blob(let bytes) = row["document"]
                else { return nil }
                return StoredResult(jobID: id, sha256: sha, relativePath: path, document: Data(bytes))
            }
        }
    }

    /// Results of photos found at nodes that write no files that no node with `writes_files = true` took, finished
    /// before `before`: none such runs (a running one takes them within seconds).
    package func withoutWriter(finishedBefore before: Date) throws -> Int {
        try database.read { db in
            Int(
                try db.queryOne(
                    """
                    SELECT COUNT(*) AS n FROM result_document r JOIN photo p ON p.sha256 = r.sha256
                    WHERE r.written_at IS NULL AND r.taken_by IS NULL AND p.result_node IS NULL AND r.finished_at < ?
                    """, [before])?.int("n") ?? 0)
        }
    }

    /// A node that no longer writes files (`writes_files` turned false) gives its photos' results, and those it took
    /// and has not written, to the nodes with `writes_files = true`.
    package func leave(node: String) throws {
        try database.write { db in
            try db.execute("UPDATE photo SET result_node = NULL WHERE result_node = ?", [node])
            try db.execute(
                "UPDATE result_document SET taken_by = NULL WHERE taken_by = ? AND written_at IS NULL", [node])
        }
    }

    /// The result was written at `path`: it is not written again, and the job names the file (status, rescans).
    package func markWritten(jobID: Int64, path: String, now: Date) throws {
        try database.write { db in
            try db.execute("UPDATE result_document SET written_at = ? WHERE job_id = ?", [now, jobID])
            try db.execute("UPDATE job SET result_path = ? WHERE id = ?", [path, jobID])
        }
    }

    /// A finished photo's result document. On a shared store, the one the database keeps: the file may be on
    /// another node, and the same path here may hold another photo's result. On one machine, the file at `resultPath`.
    package func document(sha256: String, resultPath: String?) throws -> Data? {
        if database.isShared, let stored = try stored(sha256: sha256) { return stored }
        return resultPath.flatMap { FileManager.default.contents(atPath: $0) }
    }

    /// The newest finished photos' result documents, newest first, with the photo's path under incoming/: on a
    /// shared store from the database (every node's, written on this node or not), on one machine from the files
    /// (a file removed by hand is skipped).
    package func recent(limit: Int) throws -> [(relativePath: String, finishedAt: Date, document: Data)] {
        guard database.isShared else {
            return try database.queue.recentResults(limit: limit).compactMap { recent in
                FileManager.default.contents(atPath: recent.resultPath).map {
                    (recent.relativePath, recent.finishedAt, $0)
                }
            }
        }
        return try database.read { db in
            try db.query(
                """
                SELECT relative_path, finished_at, document FROM result_document ORDER BY finished_at DESC, job_id DESC LIMIT ?
                """, [limit]
            ).compactMap { row in
                guard let path = row.string("relative_path"), let finished = row.date("finished_at"),
                    case .blob(let bytes) = row["document"]
                else { return nil }
                return (path, finished, Data(bytes))
            }
        }
    }

    /// The newest result a shared store keeps for a photo, written or not. Nil on SQLite, whose results are only files.
    package func stored(sha256: String) throws -> Data? {
        try database.readStatement { db in
            guard
                case .blob(let bytes) = try db.queryOne(
                    """
                    SELECT document FROM result_document WHERE sha256 = ? ORDER BY job_id DESC LIMIT 1
                    """, [sha256])?["document"]
            else { return nil }
            return Data(bytes)
        }
    }

    /// A number that moves whenever the library or the review queue changes, by any process (PostgreSQL: a trigger
    /// counts). Nil on SQLite, where each process writes the files after its own changes.
    package func filesVersion() throws -> Int64? {
        guard database.engine == .postgres else { return nil }
        return try database.readStatement { db in
            try db.queryOne("SELECT counter FROM files_change WHERE id = 1")?.int("counter")
        }
    }
}

extension ResultDocuments {
    /// In a write transaction on a shared store, the files version before it and with it: the version moves once per
    /// transaction and records which one moved it last. (nil, nil) on SQLite.
    static func filesVersions(_ db: any DatabaseConnection) throws -> (before: Int64?, after: Int64?) {
        guard db.engine == .postgres,
            let row = try db.queryOne(
                """
                SELECT counter, CASE WHEN txid = txid_current() THEN 1 ELSE 0 END AS ours FROM files_change WHERE id = 1
                """), let counter = row.int("counter")
        else { return (nil, nil) }
        return (row.int("ours") == 1 ? counter - 1 : counter, counter)
    }
}
