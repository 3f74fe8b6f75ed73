import Foundation
import ShelfCore

/// Claims and leases: jobs taken in batches, held by heartbeats, given back, and recovered from a process that died
/// holding them, with the deaths charged to the photos that may have caused them.
extension PhotoQueue {
    /// A job the process died reading this many times in a row (`recoverLeases`) is held back: claimed alone, once no
    /// other job is due or in flight. One more death and it is dead.
    package static let crashesHeldBack = 2

    /// When a job (`j`) was queued, or queued again by a rescan or a retry: the index `job_queued` is on it.
    static let queuedAt = "COALESCE(j.queued_at, j.created_at)"

    /// How long a photo whose request a death cut off waits before it is asked again: 30 s, doubling with each death in a
    /// row, at most 8 minutes. A process that keeps dying (a crash loop, a person's repeated `kill -9`) is restarted
    /// within seconds; were the photo asked at once, every restart would pay for its request again.
    package static func crashPause(crashes: Int) -> TimeInterval {
        min(480, 30 * pow(2, Double(max(0, crashes - 1))))
    }

    /// Leases up to `limit` due jobs in one BEGIN IMMEDIATE transaction, as one batch. A job whose lease ran
    /// out (its holder stopped heartbeating: gone, or stuck) is due again. `choice` nil takes the
    /// jobs for the configured provider; a name takes only the jobs that asked for that provider. Jobs the process
    /// died reading come after the jobs that were waiting, in claims of their own once none of those is in flight, so
    /// a crash costs one request, not one per restart; one it died reading `crashesHeldBack` times waits until nothing
    /// else is due or in flight, and goes alone.
    package func claim(
        limit: Int, provider: String, choice: String? = nil, owner: String, lease: TimeInterval,
        now: Date
    ) throws -> [ClaimedJob] {
        let started = ContinuousClock.now
        defer { database.recordClaim(seconds: (ContinuousClock.now - started) / .seconds(1)) }
        let due = """
            FROM job j JOIN photo p ON p.sha256 = j.sha256
            WHERE j.state IN ('pending','leased','failed_retryable')
              AND (j.state = 'pending' OR (j.state = 'failed_retryable' AND j.not_before <= ?)
                   OR (j.state = 'leased' AND j.lease_expiry < ?))
              AND j.provider_choice IS NOT DISTINCT FROM ? AND j.batch_api_job_id IS NULL
            """
        // A look without the write lock first: most claims of a worker waiting for photos find none.
        guard try readStatement({ db in try db.queryOne("SELECT j.id \(due) LIMIT 1", [now, now, choice]) }) != nil
        else { return [] }
        return try write { db in
            var rows = try db.query(
                """
                SELECT j.id, j.sha256, j.attempts, j.crashes, p.relative_path, p.result_node,
                       \(Self.queuedAt) AS queued,
                       CASE WHEN EXISTS (SELECT 1 FROM response r WHERE r.job_id = j.id AND r.usable = 1) THEN 1 ELSE 0 END AS answered,
                       CASE WHEN EXISTS (SELECT 1 FROM review_decision d WHERE d.sha256 = j.sha256) THEN 1 ELSE 0 END AS decided
                \(due) ORDER BY j.crashes, j.id LIMIT ?
                """, [now, now, choice, limit])
            // A claim holds photos of one standing, the least cut off first, and photos a crash cut off wait until none that
            // stood before them is in flight: photos reach their request slots in no set order, so one cut off is never
            // asked while one that waited is still to be asked. A photo held back waits for every other and goes alone.
            let lowest = rows.first?.int("crashes") ?? 0
            if lowest > 0 {
                let before = lowest >= Self.crashesHeldBack ? Int64.max : lowest
                let ahead = try db.queryOne(
                    "SELECT id FROM job WHERE state = 'leased' AND lease_expiry >= ? AND crashes < ? LIMIT 1",
                    [now, before])
                if ahead != nil { rows = [] }
            }
            rows =
                lowest >= Self.crashesHeldBack
                ? Array(rows.prefix(1)) : rows.filter { ($0.int("crashes") ?? 0) == lowest }
            let ids = try rows.required("id", of: "job", as: Int64.self)
            guard !ids.isEmpty else { return [] }
            let batchID = try db.insert("INSERT INTO batch (owner, claimed_at) VALUES (?, ?)", [owner, now])
            try db.execute(
                """
                UPDATE job SET state = 'leased', provider = ?, lease_owner = ?, lease_expiry = ?, batch_id = ?,
                    updated_at = ?, stage = 'preparing', stage_at = ? WHERE id IN (\(ids.map(String.init).joined(separator: ",")))
                """, [provider, owner, now.addingTimeInterval(lease), batchID, now, now])
            return try Self.claimedJobs(db, rows, batchID: batchID)
        }
    }

    /// Job rows (`id`, `sha256`, `attempts`, `relative_path`, `queued`, and `answered`, `decided` and `result_node` when known) as
    /// claimed jobs, each with every path its photo was seen at (one query for them all).
    static func claimedJobs(_ db: any DatabaseConnection, _ rows: [Row], batchID: Int64) throws -> [ClaimedJob] {
        let photos = Array(Set(try rows.required("sha256", of: "job", as: String.self)))
        guard !photos.isEmpty else { return [] }
        var paths: [String: [PhotoPath]] = [:]
        for row in try db.query(
            """
            SELECT sha256, path, relative_path, size, mtime FROM sighting
            WHERE sha256 IN (\(Array(repeating: "?", count: photos.count).joined(separator: ","))) ORDER BY seen_at DESC
            """, photos)
        {
            paths[row.string("sha256") ?? "", default: []].append(
                PhotoPath(
                    path: row.string("path") ?? "", relativePath: row.string("relative_path") ?? "",
                    size: row.int("size"),
                    mtime: row.double("mtime")))
        }
        return rows.compactMap { row in
            guard let id = row.int("id"), let sha = row.string("sha256") else { return nil }
            return ClaimedJob(
                id: id, sha256: sha, attempts: Int(row.int("attempts") ?? 0), batchID: batchID,
                relativePath: row.string("relative_path") ?? "", paths: paths[sha] ?? [],
                mayHaveAnswer: row.int("answered") != 0, mayHaveDecisions: row.int("decided") != 0,
                resultNode: row.string("result_node"), queuedAt: row.date("queued"))
        }
    }

    /// Extends the leases of jobs still in hand (a slow provider must not look like a dead owner).
    package func heartbeat(jobIDs: [Int64], owner: String, lease: TimeInterval, now: Date) throws {
        guard !jobIDs.isEmpty else { return }
        try write { db in
            for id in jobIDs {
                try db.execute(
                    "UPDATE job SET lease_expiry = ? WHERE id = ? AND state = 'leased' AND lease_owner = ?",
                    [now.addingTimeInterval(lease), id, owner])
            }
        }
    }

    /// Counts an attempt just before a request is sent; returns the new count. The photo is then `asking`, recorded
    /// in the same statement (the overview's stage costs no transaction of its own).
    @discardableResult
    package func chargeAttempt(jobID: Int64, now: Date) throws -> Int {
        try write { db in try Self.chargeAttempt(db, jobID: jobID, now: now) }
    }

    static func chargeAttempt(_ db: any DatabaseConnection, jobID: Int64, now: Date) throws -> Int {
        Int(
            try db.queryOne(
                """
                UPDATE job SET attempts = attempts + 1, updated_at = ?1,
                    stage = CASE WHEN state = 'leased' THEN 'asking' ELSE stage END,
                    stage_at = CASE WHEN state = 'leased' THEN ?1 ELSE stage_at END
                WHERE id = ?2 RETURNING attempts
                """, [now, jobID])?.int("attempts") ?? 0)
    }

    /// Puts this owner's leased jobs back to pending, attempts kept (graceful stop).
    @discardableResult
    package func releaseLeases(owner: String, jobIDs: [Int64]? = nil, now: Date) throws -> Int {
        try write { db in
            if let jobIDs {
                var count = 0
                for id in jobIDs {
                    try db.execute(
                        """
                        UPDATE job SET state = 'pending', lease_owner = NULL, lease_expiry = NULL, updated_at = ?
                        WHERE id = ? AND state = 'leased' AND lease_owner = ?
                        """, [now, id, owner])
                    count += db.changes
                }
                return count
            }
            try db.execute(
                """
                UPDATE job SET state = 'pending', lease_owner = NULL, lease_expiry = NULL, updated_at = ?
                WHERE state = 'leased' AND lease_owner = ?
                """, [now, owner])
            return db.changes
        }
    }

    /// On start: jobs leased by an owner that is gone (or whose lease ran out) return to the queue, with their attempt
    /// count; those the death cut off (`crashes`) go behind the jobs that were waiting (`claim`), and those whose request
    /// it cut off wait `crashPause` before they are asked again, so a restart does not pay for them again. A job held back
    /// (`crashesHeldBack`) that the process dies reading once more, not while its request is out, is dead, with a
    /// reason that names the crash: a photo that kills the process cannot stop the queue.
    @discardableResult
    package func recoverLeases(isAlive: (String) -> Bool, now: Date) throws -> Int {
        try write { db in
            let leased = try db.query(
                "SELECT id, sha256, lease_owner, lease_expiry, crashes, stage FROM job WHERE state = 'leased'")
            let lost = leased.filter { row in
                (row.double("lease_expiry") ?? 0) < now.timeIntervalSince1970
                    || !isAlive(row.string("lease_owner") ?? "")
            }
            // A death is charged to the photos it cut off: those whose request was out. Those waiting their turn, and those
            // answered (the answer is saved, and read again for free) waiting for the rest of their batch, are not. When no
            // request of a holder's was out, it died decoding, matching or writing, and any photo it held may be the
            // cause: each is charged.
            let cutOff = Set(lost.filter { Self.wasAsking($0.string("stage")) }.compactMap { $0.string("lease_owner") })
            for row in lost {
                let id: Int64 = try row.required("id", of: "job")
                let owner = row.string("lease_owner") ?? ""
                let charged = !cutOff.contains(owner) || Self.wasAsking(row.string("stage"))
                let crashes = (row.int("crashes") ?? 0) + (charged ? 1 : 0)
                // Only a death in the photo's own work (decoding it, matching or writing its answer) can be its doing:
                // one that cut its request off was no more its fault than a kill, and it is asked again, alone.
                if crashes > Self.crashesHeldBack && !Self.wasAsking(row.string("stage")) {
                    let message =
                        "the process died while this photo was being read, \(crashes) times in a row (a crash or a kill): it is not read again; 'shelfd retry' reads it once more"
                    try db.execute(
                        """
                        UPDATE job SET state = 'dead', error_code = ?, error_message = ?, lease_owner = NULL,
                            lease_expiry = NULL, crashes = ?, updated_at = ?, finished_at = ? WHERE id = ?
                        """, [PhotoError.Code.processDied.rawValue, message, crashes, now, now, id])
                    try Self.addEvent(
                        db, "photo_crashed", sha256: row.string("sha256"), jobID: id, message: message, now: now)
                } else if Self.wasAsking(row.string("stage")) {
                    let message =
                        "the process stopped while this photo's request was out (a crash or a kill, \(crashes) in a row): it is asked again after a pause"
                    try db.execute(
                        """
                        UPDATE job SET state = 'failed_retryable', not_before = ?, error_code = ?, error_message = ?,
                            lease_owner = NULL, lease_expiry = NULL, crashes = ?, updated_at = ? WHERE id = ?
                        """,
                        [
                            now.addingTimeInterval(Self.crashPause(crashes: Int(crashes))),
                            PhotoError.Code.processDied.rawValue, message, crashes, now, id,
                        ])
                    try Self.addEvent(
                        db, "lease_recovered", sha256: row.string("sha256"), jobID: id,
                        message: "owner \(owner) is gone (\(message))", now: now)
                } else {
                    try db.execute(
                        """
                        UPDATE job SET state = 'pending', lease_owner = NULL, lease_expiry = NULL, crashes = ?,
                            updated_at = ? WHERE id = ?
                        """, [crashes, now, id])
                    let why =
                        charged
                        ? "the process died reading this photo \(crashes) times in a row"
                        : "this photo was waiting its turn"
                    try Self.addEvent(
                        db, "lease_recovered", sha256: row.string("sha256"), jobID: id,
                        message: "owner \(owner) is gone (\(why))", now: now)
                }
            }
            return lost.count
        }
    }

    /// Whether a leased job at `stage` had its request out.
    static func wasAsking(_ stage: String?) -> Bool { stage == JobStage.asking.rawValue }
}
