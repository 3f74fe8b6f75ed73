import Foundation

/// What a prune removed. `responseFiles` are the saved answers' files, for the caller to delete from disk.
package struct PruneReport: Sendable, Equatable {
    package var events = 0
    package var responses = 0
    package var responseFiles: [String] = []
    package init() {}
}

/// How much of the database files (with the write-ahead log) holds data: freed pages are reused before
/// the file grows again.
package struct StoreSize: Sendable, Equatable {
    package var fileBytes: Int64
    package var usedBytes: Int64
}

/// What keeps the database small over years of photos: the daily pruning of finished photos' events and saved
/// answers, and the database's size for `status` and the benchmarks. A concern of the store with a type of its own
/// over the shared database (`Store.maintenance`).
package struct StoreMaintenance: StoreConcern {
    let database: Store

    /// Forgets the events and saved provider answers of photos finished (done, review, dead) before `cutoff`.
    /// A photo with an unfinished job (queued, leased, failed, a rescan waiting) keeps all of its rows: a
    /// crashed job replays its saved answer, and its events tell its story. Results, the library, its
    /// history and the review queue are never pruned.
    package func prune(finishedBefore cutoff: Date) throws -> PruneReport {
        try database.write { db in
            // Photos still in the queue, in any job.
            let open = "SELECT sha256 FROM job WHERE state IN ('pending','leased','failed_retryable')"
            let old = """
                SELECT id FROM job WHERE state IN ('done','review','dead') AND finished_at < ?1
                    AND sha256 NOT IN (\(open))
                """
            var report = PruneReport()
            report.responseFiles = try db.query("SELECT file FROM response WHERE job_id IN (\(old))", [cutoff])
                .required("file", of: "response")
            try db.execute("DELETE FROM response WHERE job_id IN (\(old))", [cutoff])
            report.responses = db.changes
            // Events of those jobs, and of photos whose every job finished before the cutoff; events about
            // the whole daemon (a provider switch) stay.
            try db.execute(
                """
                DELETE FROM event WHERE at < ?1 AND (job_id IN (\(old)) OR (job_id IS NULL AND sha256 IN (
                    SELECT sha256 FROM job GROUP BY sha256
                    HAVING SUM(CASE WHEN state IN ('pending','leased','failed_retryable') THEN 1 ELSE 0 END) = 0 AND MAX(finished_at) < ?1)))
                """, [cutoff])
            report.events = db.changes
            return report
        }
    }

    /// The database file's size, and the part of it in use.
    package func size() throws -> StoreSize {
        try database.read { db in
            guard db.engine == .sqlite else {
                // A server's database: what it takes on disk is all in use, as far as shelfd can tell.
                let bytes = try db.queryOne("SELECT pg_database_size(current_database()) AS n")?.int("n") ?? 0
                return StoreSize(fileBytes: bytes, usedBytes: bytes)
            }
            let pageSize = try db.queryOne("PRAGMA page_size")?.int("page_size") ?? 4096
            let pages = try db.queryOne("PRAGMA page_count")?.int("page_count") ?? 0
            let free = try db.queryOne("PRAGMA freelist_count")?.int("freelist_count") ?? 0
            // The database and its write-ahead log: pages not yet checkpointed live in the log.
            let file = [database.location, database.location + "-wal"].reduce(Int64(0)) { total, file in
                total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value ?? 0)
            }
            return StoreSize(fileBytes: file, usedBytes: (pages - free) * pageSize)
        }
    }
}
