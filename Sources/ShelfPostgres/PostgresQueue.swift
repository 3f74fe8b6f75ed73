import Foundation
import PostgresNIO
import ShelfCore
import ShelfStore

// The queue of Queue.swift, AccurateRecheck.swift and Responses.swift on PostgreSQL. The states, leases and
// heartbeats are the same; what SQLite gets from one writer at a time (BEGIN IMMEDIATE), PostgreSQL gets from row
// locks: a claim takes its jobs with `FOR UPDATE SKIP LOCKED`, so workers claiming together each get other jobs
// and never wait for one another.
extension PostgresStore: JobQueue {
    package func knownSighting(path: String) throws -> (size: Int64, mtime: Double, sha256: String)? {
        try read { db in
            guard let row = try db.query("SELECT size, mtime, sha256 FROM sighting WHERE path = \(path)").first else { return nil }
            let (size, mtime, sha) = try row.decode((Int64, Double, String).self)
            return (size, mtime, sha)
        }
    }

    /// As `Store.recordSighting`: new content becomes a job; a copy or a rename is a sighting. Two workers that
    /// ingest the same content at once: the photo row's insert decides which one queues it.
    package func recordSighting(path: String, relativePath: String, sha256: String, size: Int64, mtime: Double,
                                syncConflict: Bool, provider: String, providerChoice: String?, now: Date) throws -> SightingOutcome {
        try write { db in
            let previous = try db.query("SELECT sha256, size, mtime FROM sighting WHERE path = \(path) FOR UPDATE").first
            try db.execute("DELETE FROM path_problem WHERE path = \(path)")
            if let previous, try previous.decode((String, Int64, Double).self) == (sha256, size, mtime) {
                return .unchanged
            }
            let isNew = try db.query("""
                INSERT INTO photo (sha256, size, relative_path, first_seen) VALUES (\(sha256), \(size), \(relativePath), \(now))
                ON CONFLICT (sha256) DO NOTHING RETURNING sha256
                """).first != nil
            try db.execute("""
                INSERT INTO sighting (path, sha256, relative_path, size, mtime, seen_at, sync_conflict)
                VALUES (\(path), \(sha256), \(relativePath), \(size), \(mtime), \(now), \(syncConflict))
                ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size,
                    mtime = excluded.mtime, seen_at = excluded.seen_at, sync_conflict = excluded.sync_conflict
                """)
            guard isNew else {
                try addEvent(db, "sighting", sha256: sha256, message: relativePath, now: now)
                return .knownPhoto(sha256: sha256)
            }
            let jobID = try db.query("""
                INSERT INTO job (sha256, provider, provider_choice, state, attempts, created_at, updated_at)
                VALUES (\(sha256), \(provider), \(providerChoice), 'pending', 0, \(now), \(now)) RETURNING id
                """).first!.decode(Int64.self)
            try addEvent(db, "queued", sha256: sha256, jobID: jobID, message: relativePath, now: now)
            return .queued(jobID: jobID)
        }
    }

    package func recordPathProblem(path: String, code: PhotoError.Code, message: String, size: Int64?, mtime: Double?,
                                   now: Date) throws {
        try read { db in
            try db.execute("""
                INSERT INTO path_problem (path, code, message, size, mtime, at)
                VALUES (\(path), \(code.rawValue), \(message), \(size), \(mtime), \(now))
                ON CONFLICT (path) DO UPDATE SET code = excluded.code, message = excluded.message,
                    size = excluded.size, mtime = excluded.mtime, at = excluded.at
                """)
        }
    }

    package func prunePathProblems(stillThere: (String) -> Bool) throws {
        try write { db in
            let paths = try db.query("SELECT path FROM path_problem").map { try $0.decode(String.self) }
            let gone = paths.filter { !stillThere($0) }
            if !gone.isEmpty { try db.execute("DELETE FROM path_problem WHERE path = ANY(\(gone))") }
        }
    }

    /// Leases up to `limit` due jobs as one batch, oldest first. Jobs another worker is claiming at this moment are
    /// skipped, not waited for (`SKIP LOCKED`); a job whose lease ran out is due again, as in SQLite.
    package func claim(limit: Int, provider: String, choice: String?, owner: String, lease: TimeInterval,
                       now: Date) throws -> [ClaimedJob] {
        try write { db in
            let due = try db.query("""
                SELECT id FROM job
                WHERE (state = 'pending' OR (state = 'failed_retryable' AND not_before <= \(now))
                       OR (state = 'leased' AND lease_expiry < \(now)))
                  AND provider_choice IS NOT DISTINCT FROM \(choice)
                ORDER BY id LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
                """).map { try $0.decode(Int64.self) }
            guard !due.isEmpty else { return [] }
            let batchID = try db.query("INSERT INTO batch (owner, claimed_at) VALUES (\(owner), \(now)) RETURNING id")
                .first!.decode(Int64.self)
            let expiry = now.addingTimeInterval(lease)
            let rows = try db.query("""
                UPDATE job j SET state = 'leased', provider = \(provider), lease_owner = \(owner), lease_expiry = \(expiry),
                    batch_id = \(batchID), updated_at = \(now), stage = 'preparing', stage_at = \(now)
                FROM photo p WHERE p.sha256 = j.sha256 AND j.id = ANY(\(due))
                RETURNING j.id, j.sha256, j.attempts, p.relative_path
                """)
            var jobs: [ClaimedJob] = []
            for row in rows {
                let (id, sha, attempts, relative) = try row.decode((Int64, String, Int, String).self)
                let paths = try db.query("SELECT path, relative_path FROM sighting WHERE sha256 = \(sha) ORDER BY seen_at DESC")
                    .map { row in
                        let (path, relativePath) = try row.decode((String, String).self)
                        return PhotoPath(path: path, relativePath: relativePath)
                    }
                jobs.append(ClaimedJob(id: id, sha256: sha, attempts: attempts, batchID: batchID, relativePath: relative, paths: paths))
            }
            return jobs.sorted { $0.id < $1.id }
        }
    }

    package func nextRetryDate() throws -> Date? {
        try read { db in
            try db.query("SELECT MIN(not_before) FROM job WHERE state = 'failed_retryable'").first?.decode(Date?.self)
        }
    }

    package func heartbeat(jobIDs: [Int64], owner: String, lease: TimeInterval, now: Date) throws {
        guard !jobIDs.isEmpty else { return }
        try read { db in
            try db.execute("""
                UPDATE job SET lease_expiry = \(now.addingTimeInterval(lease))
                WHERE id = ANY(\(jobIDs)) AND state = 'leased' AND lease_owner = \(owner)
                """)
        }
    }

    package func chargeAttempt(jobID: Int64, now: Date) throws -> Int {
        try read { db in
            try db.query("UPDATE job SET attempts = attempts + 1, updated_at = \(now) WHERE id = \(jobID) RETURNING attempts")
                .first?.decode(Int.self) ?? 0
        }
    }

    /// Commits a batch's job states as one transaction. The library rows a finished photo's books make come with
    /// the library store (not yet in PostgreSQL): a batch with books is refused whole, before anything changes.
    package func finish(_ outcomes: [JobOutcome], shelfOf: (ClaimedJob) -> String?, now: Date) throws {
        for outcome in outcomes {
            if case .finished(let books, _, _) = outcome.result, !books.isEmpty {
                throw PostgresStoreError(.notYetSupported, "the library is not kept in PostgreSQL yet: use the SQLite store")
            }
        }
        try write { db in
            for outcome in outcomes {
                let job = outcome.job
                switch outcome.result {
                case .finished(_, let resultPath, let review):
                    try db.execute("""
                        UPDATE job SET state = \(review ? "review" : "done"), result_path = \(resultPath), error_code = NULL,
                            error_message = NULL, lease_owner = NULL, lease_expiry = NULL, not_before = NULL,
                            updated_at = \(now), finished_at = \(now), awaiting = COALESCE(\(outcome.awaiting), awaiting)
                        WHERE id = \(job.id)
                        """)
                    try addEvent(db, "photo_done", sha256: job.sha256, jobID: job.id, message: "0 books", now: now)
                case .failed(let code, let message, let retryAt):
                    try db.execute("""
                        UPDATE job SET state = 'failed_retryable', not_before = \(retryAt), error_code = \(code.rawValue),
                            error_message = \(message), lease_owner = NULL, lease_expiry = NULL, updated_at = \(now)
                        WHERE id = \(job.id)
                        """)
                    try addEvent(db, "photo_failed", sha256: job.sha256, jobID: job.id, message: message, now: now)
                case .dead(let code, let message):
                    try db.execute("""
                        UPDATE job SET state = 'dead', error_code = \(code.rawValue), error_message = \(message),
                            lease_owner = NULL, lease_expiry = NULL, not_before = NULL, updated_at = \(now), finished_at = \(now)
                        WHERE id = \(job.id)
                        """)
                    try addEvent(db, "photo_dead", sha256: job.sha256, jobID: job.id, message: message, now: now)
                case .released(let code, let message, let refund):
                    try db.execute("""
                        UPDATE job SET state = 'pending', attempts = GREATEST(0, attempts - \(refund ? 1 : 0)),
                            error_code = \(code?.rawValue), error_message = \(code == nil ? nil : message),
                            lease_owner = NULL, lease_expiry = NULL, updated_at = \(now)
                        WHERE id = \(job.id)
                        """)
                }
            }
            let batches = Array(Set(outcomes.map(\.job.batchID)))
            try db.execute("UPDATE batch SET finished_at = \(now) WHERE id = ANY(\(batches))")
        }
    }

    package func jobID(resultPath: String) throws -> Int64? {
        try read { db in
            try db.query("SELECT id FROM job WHERE result_path = \(resultPath) ORDER BY id DESC LIMIT 1").first?.decode(Int64.self)
        }
    }

    package func recordResponse(jobID: Int64, sha256: String, provider: String, model: String, file: String, bytes: Int,
                                latencyMs: Int?, now: Date) throws -> Int64 {
        try write { db in
            let id = try db.query("""
                INSERT INTO response (job_id, sha256, provider, model, file, bytes, latency_ms, received_at)
                VALUES (\(jobID), \(sha256), \(provider), \(model), \(file), \(bytes), \(latencyMs), \(now)) RETURNING id
                """).first!.decode(Int64.self)
            try addEvent(db, "response_saved", sha256: sha256, jobID: jobID, message: "\(provider) \(bytes) bytes", now: now)
            return id
        }
    }

    package func usableResponse(jobID: Int64, provider: String, model: String) throws -> SavedResponse? {
        try read { db in
            guard let row = try db.query("""
                SELECT id, file, latency_ms FROM response
                WHERE job_id = \(jobID) AND provider = \(provider) AND model = \(model) AND usable
                ORDER BY id DESC LIMIT 1
                """).first else { return nil }
            let (id, file, latency) = try row.decode((Int64, String, Int?).self)
            return SavedResponse(id: id, file: file, latencyMs: latency)
        }
    }

    package func markResponseUnusable(id: Int64) throws {
        try read { db in try db.execute("UPDATE response SET usable = false WHERE id = \(id)") }
    }

    package func isRecheck(jobID: Int64) throws -> Bool {
        try read { db in
            try db.query("SELECT recheck_of FROM job WHERE id = \(jobID)").first?.decode(Int64?.self) != nil
        }
    }

    package func awaitingCount(provider: String) throws -> Int {
        try read { db in try db.query("SELECT COUNT(*) FROM job WHERE awaiting = \(provider)").first!.decode(Int.self) }
    }

    /// As `Store.requeueAwaiting`: the photos whose fast reading waits for `provider` get a recheck job that
    /// replays the fast answer and asks the accurate provider.
    package func requeueAwaiting(provider: String, oneMore: Bool, now: Date) throws -> [Int64] {
        try write { db in
            guard try db.query("SELECT 1 FROM job WHERE awaiting = \(provider) LIMIT 1").first != nil else { return [] }
            let answered = try db.query("SELECT MAX(at) FROM request WHERE provider = \(provider) AND outcome = 'ok'")
                .first?.decode(Date?.self) ?? Date.distantPast
            var due = try db.query("""
                SELECT id, sha256 FROM job WHERE awaiting = \(provider) AND state IN ('done', 'review')
                    AND finished_at < \(answered) ORDER BY id FOR UPDATE
                """).map { try $0.decode((Int64, String).self) }
            let queued = try db.query("""
                SELECT 1 FROM job WHERE recheck_of IS NOT NULL AND state IN ('pending','leased','failed_retryable') LIMIT 1
                """).first != nil
            if due.isEmpty && oneMore && !queued {
                due = try db.query("""
                    SELECT id, sha256 FROM job WHERE awaiting = \(provider) AND state IN ('done', 'review')
                    ORDER BY id LIMIT 1 FOR UPDATE
                    """).map { try $0.decode((Int64, String).self) }
            }
            var created: [Int64] = []
            for (old, sha) in due {
                try db.execute("UPDATE job SET awaiting = NULL WHERE id = \(old)")
                guard try db.query("""
                    SELECT 1 FROM job WHERE sha256 = \(sha) AND state IN ('pending','leased','failed_retryable')
                    """).first == nil else { continue }
                let job = try db.query("""
                    INSERT INTO job (sha256, provider, state, attempts, created_at, updated_at, recheck_of)
                    VALUES (\(sha), '', 'pending', 0, \(now), \(now), \(old)) RETURNING id
                    """).first!.decode(Int64.self)
                try db.execute("""
                    INSERT INTO response (job_id, sha256, provider, model, file, bytes, latency_ms, received_at)
                    SELECT \(job), sha256, provider, model, file, bytes, latency_ms, received_at FROM response
                    WHERE job_id = \(old) AND provider <> \(provider) AND usable
                    """)
                try addEvent(db, "recheck", sha256: sha, jobID: job, message: "asking \(provider) again", now: now)
                created.append(job)
            }
            return created
        }
    }

    package func recordStage(_ stage: JobStage, jobIDs: [Int64], now: Date) throws {
        guard !jobIDs.isEmpty else { return }
        try read { db in
            try db.execute("UPDATE job SET stage = \(stage.rawValue), stage_at = \(now) WHERE state = 'leased' AND id = ANY(\(jobIDs))")
        }
    }

    func addEvent(_ db: Session, _ kind: String, sha256: String? = nil, jobID: Int64? = nil, message: String?, now: Date) throws {
        try db.execute("""
            INSERT INTO event (at, kind, sha256, job_id, message) VALUES (\(now), \(kind), \(sha256), \(jobID), \(message))
            """)
    }
}
