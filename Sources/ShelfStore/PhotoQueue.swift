import Foundation
import ShelfCore

/// A path a photo was seen at.
package struct PhotoPath: Sendable, Equatable {
    package var path: String
    package var relativePath: String
    /// The file's size and modification time when it was hashed (from the claim): a file still so is that photo,
    /// without reading the sighting again. Nil: unknown.
    package var size: Int64?
    package var mtime: Double?

    /// What the claim knew of this path, as a sighting of `sha256`; nil where the store gave no stamps.
    package func sighting(of sha256: String) -> KnownSighting? {
        guard let size, let mtime else { return nil }
        return KnownSighting(size: size, mtime: mtime, sha256: sha256)
    }
}

/// A job this process holds a lease on.
package struct ClaimedJob: Sendable, Equatable {
    package var id: Int64
    package var sha256: String
    package var attempts: Int
    package var batchID: Int64
    /// Where the photo was first seen, under incoming/ (names its result file).
    package var relativePath: String
    /// Every path it has been seen at, newest first: a renamed photo is still found.
    package var paths: [PhotoPath]
    /// A provider's answer may be saved for it (false: the claim found none, so none is looked for).
    package var mayHaveAnswer: Bool
    /// A person may have decided some of its readings (false: the claim found no decision, so none is read).
    package var mayHaveDecisions: Bool
    /// Shared store: the node whose results/ gets the photo's result (`ResultDocuments.swift`), when the claim read it.
    package var resultNode: String?
    /// When the job was queued (again, for a rescan or a retry): the result's `timings.queued_at`.
    package var queuedAt: Date?

    package init(
        id: Int64, sha256: String, attempts: Int, batchID: Int64, relativePath: String, paths: [PhotoPath],
        mayHaveAnswer: Bool = true, mayHaveDecisions: Bool = true, resultNode: String? = nil, queuedAt: Date? = nil
    ) {
        self.id = id; self.sha256 = sha256; self.attempts = attempts; self.batchID = batchID
        self.relativePath = relativePath; self.paths = paths; self.mayHaveAnswer = mayHaveAnswer
        self.mayHaveDecisions = mayHaveDecisions; self.resultNode = resultNode; self.queuedAt = queuedAt
    }
}

/// What recording a stable file did.
package enum SightingOutcome: Sendable, Equatable {
    case queued(jobID: Int64) // new content: a job
    case knownPhoto(sha256: String) // the same photo again (a copy, a rename): a sighting only
    case unchanged // this path, this size and mtime: seen before
}

/// What the queue knows of a path: the file's size and modification time when it was hashed, and its content.
package struct KnownSighting: Sendable, Equatable {
    package var size: Int64
    package var mtime: Double
    package var sha256: String
}

/// A stable file read and hashed, to be recorded as a sighting of its photo.
package struct HashedFile: Sendable, Equatable {
    package var path: String
    package var relativePath: String
    package var sha256: String
    package var size: Int64
    package var mtime: Double
    package var syncConflict: Bool
    /// A new photo's provider-ready image, stored with its job on a shared store (`SightingLedger.isShared`).
    package var image: [UInt8]?

    package init(
        path: String, relativePath: String, sha256: String, size: Int64, mtime: Double, syncConflict: Bool = false,
        image: [UInt8]? = nil
    ) {
        self.path = path; self.relativePath = relativePath; self.sha256 = sha256; self.size = size; self.mtime = mtime
        self.syncConflict = syncConflict; self.image = image
    }
}

/// How a claimed job ended.
package struct JobOutcome: Sendable {
    package enum Result: Sendable {
        /// Books found and result written (`resultPath`), or kept in the database for the node that writes the
        /// files (nil; `JobOutcome.document`). `review` when any book needs a person.
        case finished(books: [Book], resultPath: String?, review: Bool)
        /// Try again at `retryAt`; the attempt stays counted.
        case failed(PhotoError.Code, message: String, retryAt: Date)
        /// Never again (until `shelfd retry`).
        case dead(PhotoError.Code, message: String)
        /// Not this photo's fault (provider paused, shutdown): back to pending; an attempt charged for a
        /// request that could not count is refunded.
        case released(PhotoError.Code?, message: String, refundAttempt: Bool)
    }
    package var job: ClaimedJob
    package var result: Result
    /// Hybrid: finished with the fast reading, waiting for this (accurate) provider to be asked again.
    package var awaiting: String?
    /// Shared store: the result document's JSON, kept in the database until the node that writes files writes it.
    package var document: Data?
    /// When the photo was done, as its result document says (`timings.finished_at`); nil: the commit's time. The
    /// photos of one batch finish one after another, and the newest results are listed in the order their
    /// documents give.
    package var finishedAt: Date?
    package init(
        job: ClaimedJob, result: Result, awaiting: String? = nil, document: Data? = nil, finishedAt: Date? = nil
    ) {
        self.job = job; self.result = result; self.awaiting = awaiting; self.document = document
        self.finishedAt = finishedAt
    }
}

/// The photos' queue: sightings in, jobs claimed and leased, attempts charged, answers saved for replay, hybrid's
/// rechecks, each batch's commit, and what the photo pages and the overview read of it (`Store.queue`). It is the
/// pipeline's `JobQueue`.
package struct PhotoQueue: StoreConcern {
    let database: Store

    package var isShared: Bool { database.isShared }

    /// The stored sightings of these paths, by path, in one statement a few hundred paths at a time.
    package func knownSightings(paths: [String]) throws -> [String: KnownSighting] {
        var known: [String: KnownSighting] = [:]
        for part in SQL.parts(of: Array(Set(paths))) {
            try readStatement { db in
                for row in try db.query(
                    "SELECT path, size, mtime, sha256 FROM sighting WHERE path IN (\(SQL.placeholders(part.count)))",
                    part)
                {
                    known[try row.required("path", of: "sighting")] = KnownSighting(
                        size: try row.required("size", of: "sighting"),
                        mtime: try row.required("mtime", of: "sighting"),
                        sha256: try row.required("sha256", of: "sighting"))
                }
            }
        }
        return known
    }

    /// Which of these contents were seen before (at any path).
    package func knownPhotos(among sha256s: [String]) throws -> Set<String> {
        var known: Set<String> = []
        for part in SQL.parts(of: Array(Set(sha256s))) {
            try readStatement { db in
                for row in try db.query(
                    "SELECT sha256 FROM photo WHERE sha256 IN (\(SQL.placeholders(part.count)))", part)
                {
                    if let sha = row.string("sha256") { known.insert(sha) }
                }
            }
        }
        return known
    }

    /// Records hashed files in one transaction, each as `recordSighting` would in the files' order (a second path
    /// with the same new content is a sighting of the first's photo), with one statement per table for them all: a
    /// burst of photos from a phone's sync costs a few round trips, not a few per photo. One outcome per file.
    package func recordSightings(
        _ files: [HashedFile], provider: String, providerChoice: String? = nil,
        resultNode: String? = nil, roundQuiet: TimeInterval = ShelfRounds.defaultQuiet,
        now: Date
    ) throws -> [SightingOutcome] {
        guard !files.isEmpty else { return [] }
        // A path given twice is recorded as its last content.
        var latest: [String: Int] = [:]
        for (index, file) in files.enumerated() { latest[file.path] = index }
        let recorded = files.indices.filter { latest[files[$0].path] == $0 }
        return try write { db in
            let paths = recorded.map { files[$0].path }
            try db.execute("DELETE FROM path_problem WHERE path IN (\(SQL.placeholders(paths.count)))", paths)
            // Returned only when new: the photo's first sighting (a copy finds it there).
            let newPhotos = Set(
                try db.query(
                    """
                    INSERT INTO photo (sha256, size, relative_path, first_seen, result_node) VALUES \(SQL.rows(recorded.count, of: 5))
                    ON CONFLICT (sha256) DO NOTHING RETURNING sha256
                    """,
                    recorded.flatMap { i -> [any SQLBindable] in
                        [files[i].sha256, files[i].size, files[i].relativePath, now, resultNode]
                    }
                ).required("sha256", of: "photo", as: String.self))
            // A new photo in a shelf's folder joins the shelf's round (ShelfRounds.swift).
            var joining = Set<String>()
            try ShelfRounds.join(
                db,
                photos: recorded.filter {
                    newPhotos.contains(files[$0].sha256) && joining.insert(files[$0].sha256).inserted
                }
                .map { (files[$0].sha256, files[$0].relativePath) }, quiet: roundQuiet, now: now)
            // Returned unless this path was seen with this photo, size and time already.
            let changedPaths = Set(
                try db.query(
                    """
                    INSERT INTO sighting (path, sha256, relative_path, size, mtime, seen_at, sync_conflict)
                    VALUES \(SQL.rows(recorded.count, of: 7))
                    ON CONFLICT(path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size,
                        mtime = excluded.mtime, seen_at = excluded.seen_at, sync_conflict = excluded.sync_conflict
                    WHERE sighting.sha256 <> excluded.sha256 OR sighting.size <> excluded.size OR sighting.mtime <> excluded.mtime
                    RETURNING path
                    """,
                    recorded.flatMap { i -> [any SQLBindable] in
                        let f = files[i]
                        return [f.path, f.sha256, f.relativePath, f.size, f.mtime, now, f.syncConflict]
                    }
                ).required("path", of: "sighting", as: String.self))
            // Each new photo becomes one job, at the first of its paths that changed.
            var outcomes = [SightingOutcome](repeating: .unchanged, count: files.count)
            var jobFor: [String: Int] = [:]
            for i in recorded where changedPaths.contains(files[i].path) {
                if newPhotos.contains(files[i].sha256), jobFor[files[i].sha256] == nil {
                    jobFor[files[i].sha256] = i
                } else {
                    outcomes[i] = .knownPhoto(sha256: files[i].sha256)
                }
            }
            let jobs = jobFor.values.sorted()
            if !jobs.isEmpty {
                let ids = try db.query(
                    """
                    INSERT INTO job (sha256, provider, provider_choice, state, attempts, created_at, updated_at)
                    VALUES \(Array(repeating: "(?, ?, ?, 'pending', 0, ?, ?)", count: jobs.count).joined(separator: ", "))
                    RETURNING id, sha256
                    """,
                    jobs.flatMap { i -> [any SQLBindable] in [files[i].sha256, provider, providerChoice, now, now] })
                var jobIDs: [String: Int64] = [:]
                for row in ids { jobIDs[try row.required("sha256", of: "job")] = try row.required("id", of: "job") }
                for i in jobs { if let id = jobIDs[files[i].sha256] { outcomes[i] = .queued(jobID: id) } }
                let images = jobs.compactMap { i in files[i].image.map { (files[i].sha256, $0) } }
                if !images.isEmpty {
                    try db.execute(
                        """
                        INSERT INTO photo_image (sha256, jpeg, stored_at) VALUES \(SQL.rows(images.count, of: 3))
                        ON CONFLICT (sha256) DO NOTHING
                        """, images.flatMap { [$0.0, SQLValue.blob($0.1), now] as [any SQLBindable] })
                }
            }
            try Self.addEvents(
                db,
                recorded.compactMap { i in
                    switch outcomes[i] {
                    case .queued(let id):
                        Event(kind: "queued", sha256: files[i].sha256, jobID: id, message: files[i].relativePath)
                    case .knownPhoto: Event(kind: "sighting", sha256: files[i].sha256, message: files[i].relativePath)
                    case .unchanged: nil
                    }
                }, now: now)
            // Outcomes of a path given twice follow its last content.
            for i in files.indices where latest[files[i].path] != i { outcomes[i] = outcomes[latest[files[i].path]!] }
            return outcomes
        }
    }

    /// A file that could not be read to hash it (unreadable, vanished): shown in status until it can.
    package func recordPathProblem(
        path: String, code: PhotoError.Code, message: String, size: Int64?, mtime: Double?,
        now: Date
    ) throws {
        try write { db in
            try db.execute(
                """
                INSERT INTO path_problem (path, code, message, size, mtime, at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(path) DO UPDATE SET code = excluded.code, message = excluded.message,
                    size = excluded.size, mtime = excluded.mtime, at = excluded.at
                """, [path, code.rawValue, message, size, mtime, now])
        }
    }

    /// Forgets problems of files that are no longer there (deleted, or moved away by the user).
    package func prunePathProblems(stillThere: (String) -> Bool) throws {
        try write { db in
            for row in try db.query("SELECT path FROM path_problem") {
                let path: String = try row.required("path", of: "path_problem")
                if !stillThere(path) { try db.execute("DELETE FROM path_problem WHERE path = ?", [path]) }
            }
        }
    }

    /// Commits a batch as one unit: job states, the library (works, sightings, history), the review queue, events
    /// (one statement for all the photos' events).
    /// Each book's `status` is taken as decided; a photo's job is `review` while one of its books waits for a
    /// person (a reading a person already decided does not wait again). Returns what it changed of the files for
    /// people: the works, the review items opened and closed, the photos read, the result documents stored.
    @discardableResult
    package func finish(
        settling settle: (CommitLookup) throws -> [JobOutcome], shelfOf: (ClaimedJob) -> String?,
        now: Date
    ) throws -> FilesChange {
        try write { db in
            let outcomes = try settle(
                CommitLookup { keys, photo in try LibraryRecords.works(db, under: keys, besides: photo) })
            guard !outcomes.isEmpty else { return FilesChange() }
            var change = FilesChange()
            var events: [Event] = []
            // The decisions people took on the batch's photos, read once: each applies again to its reading.
            var decisions: [String: [String: Row]] = [:]
            let read = outcomes.compactMap { outcome -> String? in
                if case .finished = outcome.result, outcome.job.mayHaveDecisions { outcome.job.sha256 } else { nil }
            }
            if !read.isEmpty {
                for row in try db.query(
                    """
                    SELECT * FROM review_decision WHERE sha256 IN (\(Array(repeating: "?", count: read.count).joined(separator: ",")))
                    """, read)
                {
                    decisions[row.string("sha256") ?? "", default: [:]][row.string("reading_key") ?? ""] = row
                }
            }
            for outcome in outcomes {
                let job = outcome.job
                switch outcome.result {
                case .finished(let books, let resultPath, let review):
                    try db.execute(
                        """
                        UPDATE job SET state = ?, result_path = ?, error_code = NULL, error_message = NULL,
                            lease_owner = NULL, lease_expiry = NULL, not_before = NULL, updated_at = ?, finished_at = ?,
                            awaiting = COALESCE(?, awaiting)
                        WHERE id = ?
                        """,
                        [
                            review ? "review" : "done", resultPath, now, outcome.finishedAt ?? now, outcome.awaiting,
                            job.id,
                        ])
                    if let document = outcome.document {
                        // Finished twice (a lease lost while the photo was still being read): the newer one is written.
                        // With a result path, the node the photo arrived at wrote it already (this one, before the commit).
                        try db.execute(
                            """
                            INSERT INTO result_document (job_id, sha256, relative_path, document, finished_at, written_at)
                            VALUES (?, ?, ?, ?, ?, ?)
                            ON CONFLICT (job_id) DO UPDATE SET document = excluded.document, finished_at = excluded.finished_at,
                                written_at = excluded.written_at
                            """,
                            [
                                job.id, job.sha256, job.relativePath, SQLValue.blob(Array(document)),
                                outcome.finishedAt ?? now, resultPath == nil ? nil : now,
                            ])
                        if resultPath == nil { change.storedResults.insert(job.id) }
                    }
                    let touched = try LibraryRecords.forgetSightings(db, of: job.sha256) // a re-run replaces them
                    var open: [String] = []
                    var refreshed = Set(touched)
                    let pending = PendingReadings()
                    try pending.readLinks(of: books.filter { decisions[job.sha256]?[$0.titleKey] == nil }, db)
                    for book in books {
                        let committed = try LibraryRecords.commitReading(
                            db, book, photo: .init(path: job.relativePath, sha256: job.sha256),
                            shelf: shelfOf(job), decisions: decisions[job.sha256] ?? [:],
                            pending: pending, now: now)
                        if let id = committed.reviewID { open.append(id) }
                        if let id = committed.bookID { refreshed.insert(id) }
                    }
                    try pending.flush(db)
                    // A photo read for the first time had no sightings, so no review item to close; its job waits in
                    // `review` only for an item it opened. Before the refresh: a book left without sightings goes,
                    // and its items with it, unreported.
                    if !touched.isEmpty || (review && open.isEmpty) {
                        change.closedItems.formUnion(
                            try LibraryRecords.closeStaleItems(db, sha256: job.sha256, keeping: open, now: now))
                    }
                    try LibraryRecords.refresh(db, refreshed, now: now)
                    change.works.formUnion(refreshed)
                    change.openedItems.formUnion(open)
                    change.photos.insert(job.sha256)
                    events.append(
                        Event(kind: "photo_done", sha256: job.sha256, jobID: job.id, message: "\(books.count) books"))
                case .failed(let code, let message, let retryAt):
                    try db.execute(
                        """
                        UPDATE job SET state = 'failed_retryable', not_before = ?, error_code = ?, error_message = ?,
                            lease_owner = NULL, lease_expiry = NULL, updated_at = ? WHERE id = ?
                        """, [retryAt, code.rawValue, message, now, job.id])
                    events.append(Event(kind: "photo_failed", sha256: job.sha256, jobID: job.id, message: message))
                case .dead(let code, let message):
                    try db.execute(
                        """
                        UPDATE job SET state = 'dead', error_code = ?, error_message = ?, lease_owner = NULL,
                            lease_expiry = NULL, not_before = NULL, updated_at = ?, finished_at = ? WHERE id = ?
                        """, [code.rawValue, message, now, now, job.id])
                    events.append(Event(kind: "photo_dead", sha256: job.sha256, jobID: job.id, message: message))
                case .released(let code, let message, let refund):
                    try db.execute(
                        """
                        UPDATE job SET state = 'pending', attempts = CASE WHEN attempts > ?1 THEN attempts - ?1 ELSE 0 END,
                            error_code = ?2, error_message = ?3, lease_owner = NULL, lease_expiry = NULL, updated_at = ?4
                        WHERE id = ?5
                        """, [refund ? 1 : 0, code?.rawValue, code == nil ? nil : message, now, job.id])
                }
            }
            try Self.addEvents(db, events, now: now)
            try db.execute(
                "UPDATE batch SET finished_at = ? WHERE id IN (\(Set(outcomes.map(\.job.batchID)).map(String.init).joined(separator: ",")))",
                [now])
            (change.filesVersionBefore, change.filesVersionAfter) = try ResultDocuments.filesVersions(db)
            return change
        }
    }

    /// A new job for a photo already seen (`shelfd rescan`): by content hash, or the first photo whose hash
    /// starts with `prefix`. Returns the job, or nil when the photo is unknown or already queued.
    package func rescan(sha256 prefix: String, providerChoice: String?, now: Date) throws -> (
        jobID: Int64, sha256: String
    )? {
        try write { db in
            let matches = try db.query(
                "SELECT sha256 FROM photo WHERE \(SQL.hexPrefix(of: "sha256")) LIMIT 2",
                SQL.hexPrefixArguments(prefix.lowercased()))
            guard matches.count == 1, let sha = matches.first?.string("sha256") else { return nil }
            guard
                try db.queryOne(
                    """
                    SELECT 1 AS one FROM job WHERE sha256 = ? AND state IN ('pending','leased','failed_retryable')
                    """, [sha]) == nil
            else { return nil }
            let jobID = try db.insert(
                """
                INSERT INTO job (sha256, provider, provider_choice, state, attempts, created_at, updated_at)
                VALUES (?, ?, ?, 'pending', 0, ?, ?)
                """, [sha, providerChoice ?? "", providerChoice, now, now])
            try Self.addEvent(db, "rescan", sha256: sha, jobID: jobID, message: providerChoice, now: now)
            return (jobID, sha)
        }
    }

    /// Human override: failed and dead jobs go back to pending with a fresh attempt count.
    /// With no IDs, every failed or dead job. Returns the IDs requeued.
    package func requeue(jobIDs: [Int64]?, now: Date) throws -> [Int64] {
        try write { db in
            let rows: [Row]
            if let jobIDs {
                rows = try jobIDs.compactMap { id in
                    try db.queryOne("SELECT id FROM job WHERE id = ? AND state IN ('dead','failed_retryable')", [id])
                }
            } else {
                rows = try db.query("SELECT id FROM job WHERE state IN ('dead','failed_retryable')")
            }
            let ids = try rows.required("id", of: "job", as: Int64.self)
            for id in ids {
                try db.execute(
                    """
                    UPDATE job SET state = 'pending', attempts = 0, crashes = 0, not_before = NULL, error_code = NULL,
                        error_message = NULL, updated_at = ?, queued_at = ? WHERE id = ?
                    """, [now, now, id])
                try Self.addEvent(db, "requeued", jobID: id, message: nil, now: now)
            }
            return ids
        }
    }

    /// The state of each given job (for `retry` to explain what it could not requeue).
    package func jobStates(_ ids: [Int64]) throws -> [Int64: JobState] {
        try read { db in
            var states: [Int64: JobState] = [:]
            for id in ids {
                if let raw = try db.queryOne("SELECT state FROM job WHERE id = ?", [id])?.string("state"),
                    let state = JobState(rawValue: raw)
                {
                    states[id] = state
                }
            }
            return states
        }
    }

    /// When the next failed job becomes due, if any.
    package func nextRetryDate() throws -> Date? {
        try readStatement { db in
            try db.queryOne("SELECT MIN(not_before) AS t FROM job WHERE state = 'failed_retryable'")?.date("t")
        }
    }

    package func addEvent(
        _ kind: String, sha256: String? = nil, jobID: Int64? = nil, message: String?,
        now: Date
    ) throws {
        try write { db in try Self.addEvent(db, kind, sha256: sha256, jobID: jobID, message: message, now: now) }
    }

    static func addEvent(
        _ db: any DatabaseConnection, _ kind: String, sha256: String? = nil, jobID: Int64? = nil,
        message: String?, now: Date
    ) throws {
        try addEvents(db, [Event(kind: kind, sha256: sha256, jobID: jobID, message: message)], now: now)
    }

    /// A row of the event log, before it is written.
    struct Event {
        var kind: String
        var sha256: String? = nil
        var jobID: Int64? = nil
        var message: String?
    }

    /// Events in one statement.
    static func addEvents(_ db: any DatabaseConnection, _ events: [Event], now: Date) throws {
        guard !events.isEmpty else { return }
        try db.execute(
            "INSERT INTO event (at, kind, sha256, job_id, message) VALUES \(SQL.rows(events.count, of: 5))",
            events.flatMap { [now, $0.kind, $0.sha256, $0.jobID, $0.message] as [any SQLBindable] })
    }
}
