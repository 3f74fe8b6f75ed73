import Foundation
import ShelfCore

/// What batch mode asks of the queue. Photos in a Batch API job stay `pending` with the job's id, so that nothing
/// claims them (`claim` skips them) while the provider has them; a finished Batch API job gives them back.
package protocol BatchAPIJobQueue: Sendable {
    /// Records a Batch API job and its photos (each charged an attempt, as a request would be) in one transaction,
    /// before anything is sent: the claimed jobs leave this owner's lease for the Batch API job.
    func openBatchAPIJob(provider: String, jobs: [ClaimedJob], owner: String, now: Date) throws -> BatchAPIJob
    /// The provider's name for the Batch API job, saved the moment it is known.
    func recordBatchAPIJobName(id: Int64, name: String, state: String, now: Date) throws
    func recordBatchAPIJobState(id: Int64, state: String, now: Date) throws
    /// Batch API jobs not finished, oldest first.
    func batchAPIJobsInFlight() throws -> [BatchAPIJob]
    /// The latest Batch API jobs, newest first.
    func recentBatchAPIJobs(limit: Int) throws -> [BatchAPIJob]
    /// Photos due for a request and not in a Batch API job: how many, and when the newest of them was queued.
    func duePhotos(now: Date) throws -> (count: Int, newest: Date?)
    /// The photos of a Batch API job, as claimed jobs (their answers are saved under their ids before it is closed).
    func batchAPIJobPhotos(id: Int64) throws -> [ClaimedJob]
    /// Ends a Batch API job. `answered`: its photos are leased to `owner` (their answers are saved, they are processed
    /// next) and returned; otherwise they go back to pending with their attempt refunded.
    func closeBatchAPIJob(
        id: Int64, state: String, answered: Bool, owner: String, lease: TimeInterval,
        now: Date
    ) throws -> [ClaimedJob]
}

/// Gemini's Batch API jobs and their photos: batch mode's queue (`BatchAPIJobQueue`). A concern of the store with a
/// type of its own over the shared database (`Store.batchAPIJobs`).
package struct BatchAPIJobs: BatchAPIJobQueue, StoreConcern {
    let database: Store

    /// A Batch API job's photos still waiting, with the columns `PhotoQueue.claimedJobs` reads.
    static let waitingPhotos = """
        SELECT j.id, j.sha256, j.attempts, p.relative_path, \(PhotoQueue.queuedAt) AS queued
        FROM job j JOIN photo p ON p.sha256 = j.sha256
        WHERE j.batch_api_job_id = ? AND j.state = 'pending' ORDER BY j.id
        """

    package func openBatchAPIJob(provider: String, jobs: [ClaimedJob], owner: String, now: Date) throws
        -> BatchAPIJob
    {
        try database.write { db in
            let token = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let id = try db.insert(
                """
                INSERT INTO batch_api_job (provider, display_name, state, photos, created_at, updated_at)
                VALUES (?, ?, 'submitting', ?, ?, ?)
                """, [provider, "pending-\(token)", jobs.count, now, now])
            let displayName = "shelfd-\(id)-\(token)"
            try db.execute("UPDATE batch_api_job SET display_name = ? WHERE id = ?", [displayName, id])
            for job in jobs {
                try db.execute(
                    """
                    UPDATE job SET state = 'pending', batch_api_job_id = ?, attempts = attempts + 1, lease_owner = NULL,
                        lease_expiry = NULL, stage = NULL, updated_at = ? WHERE id = ? AND state = 'leased' AND lease_owner = ?
                    """, [id, now, job.id, owner])
            }
            try db.execute(
                "UPDATE batch_api_job SET photos = (SELECT COUNT(*) FROM job WHERE batch_api_job_id = ?) WHERE id = ?",
                [id, id])
            try PhotoQueue.addEvent(
                db, "batch_api_job_opened", message: "\(displayName): \(jobs.count) photos", now: now)
            return try Self.batchAPIJob(db, id: id)!
        }
    }

    package func recordBatchAPIJobName(id: Int64, name: String, state: String, now: Date) throws {
        try database.write { db in
            try db.execute(
                "UPDATE batch_api_job SET name = ?, state = ?, updated_at = ? WHERE id = ?", [name, state, now, id])
            try PhotoQueue.addEvent(db, "batch_api_job_submitted", message: name, now: now)
        }
    }

    package func recordBatchAPIJobState(id: Int64, state: String, now: Date) throws {
        try database.write { db in
            try db.execute(
                "UPDATE batch_api_job SET state = ?, updated_at = ? WHERE id = ? AND state != ?",
                [state, now, id, state])
        }
    }

    package func batchAPIJobsInFlight() throws -> [BatchAPIJob] {
        try database.readStatement { db in
            try db.query("SELECT * FROM batch_api_job WHERE finished_at IS NULL ORDER BY id").compactMap(
                Self.batchAPIJob)
        }
    }

    package func recentBatchAPIJobs(limit: Int) throws -> [BatchAPIJob] {
        try database.read { db in
            try db.query("SELECT * FROM batch_api_job ORDER BY id DESC LIMIT ?", [limit]).compactMap(Self.batchAPIJob)
        }
    }

    package func closeBatchAPIJob(
        id: Int64, state: String, answered: Bool, owner: String, lease: TimeInterval,
        now: Date
    ) throws -> [ClaimedJob] {
        try database.write { db in
            try db.execute(
                "UPDATE batch_api_job SET state = ?, updated_at = ?, finished_at = ? WHERE id = ?",
                [state, now, now, id])
            try PhotoQueue.addEvent(db, "batch_api_job_closed", message: "Batch API job \(id): \(state)", now: now)
            guard answered else {
                try db.execute(
                    """
                    UPDATE job SET batch_api_job_id = NULL, attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, updated_at = ?
                    WHERE batch_api_job_id = ? AND state = 'pending'
                    """, [now, id])
                return []
            }
            let claim = try db.insert("INSERT INTO batch (owner, claimed_at) VALUES (?, ?)", [owner, now])
            let rows = try db.query(Self.waitingPhotos, [id])
            try db.execute(
                """
                UPDATE job SET state = 'leased', batch_api_job_id = NULL, lease_owner = ?, lease_expiry = ?, batch_id = ?,
                    updated_at = ?, stage = 'matching', stage_at = ? WHERE batch_api_job_id = ? AND state = 'pending'
                """, [owner, now.addingTimeInterval(lease), claim, now, now, id])
            return try PhotoQueue.claimedJobs(db, rows, batchID: claim)
        }
    }

    package func duePhotos(now: Date) throws -> (count: Int, newest: Date?) {
        try database.read { db in
            let row = try db.queryOne(
                """
                SELECT COUNT(*) AS n, MAX(COALESCE(queued_at, created_at)) AS newest FROM job
                WHERE (state = 'pending' OR (state = 'failed_retryable' AND not_before <= ?)) AND batch_api_job_id IS NULL
                  AND provider_choice IS NULL
                """, [now])
            return (Int(row?.int("n") ?? 0), row?.date("newest"))
        }
    }

    package func batchAPIJobPhotos(id: Int64) throws -> [ClaimedJob] {
        try database.read { db in
            try PhotoQueue.claimedJobs(
                db,
                try db.query(Self.waitingPhotos, [id]), batchID: 0)
        }
    }

    /// The Batch API job the provider calls `name` (`batches/…`), or whose display name it is (`shelfd-…`); the
    /// newest when several.
    package func batchAPIJob(named name: String) throws -> BatchAPIJob? {
        try database.read { db in
            try db.queryOne(
                "SELECT * FROM batch_api_job WHERE name = ? OR display_name = ? ORDER BY id DESC LIMIT 1",
                [name, name]
            ).flatMap(Self.batchAPIJob)
        }
    }

    static func batchAPIJob(_ db: any DatabaseConnection, id: Int64) throws -> BatchAPIJob? {
        try db.queryOne("SELECT * FROM batch_api_job WHERE id = ?", [id]).flatMap(batchAPIJob)
    }

    static func batchAPIJob(_ row: Row) -> BatchAPIJob? {
        guard let id = row.int("id"), let created = row.date("created_at") else { return nil }
        return BatchAPIJob(
            id: id, provider: row.string("provider") ?? "", displayName: row.string("display_name") ?? "",
            name: row.string("name"), state: row.string("state") ?? "", photos: Int(row.int("photos") ?? 0),
            createdAt: created, updatedAt: row.date("updated_at") ?? created, finishedAt: row.date("finished_at"))
    }
}
