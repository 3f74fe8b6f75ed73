import Foundation
import ShelfCore

extension PhotoQueue {
    /// Every photo with its newest job, newest first (by when it was first seen).
    package func photoSummaries() throws -> [PhotoSummary] {
        try read { db in
            let jobs = try Self.newestJobs(db, where: "1 = 1", [])
            return try db.query("SELECT sha256, relative_path, first_seen FROM photo ORDER BY first_seen DESC, sha256")
                .map { row in try Self.summary(row, job: jobs[row.required("sha256", of: "photo")]) }
        }
    }

    /// One photo by its full hash; nil when shelfd has not seen it.
    package func photoSummary(sha256: String) throws -> PhotoSummary? {
        try read { db in
            guard
                let row = try db.queryOne(
                    "SELECT sha256, relative_path, first_seen FROM photo WHERE sha256 = ?", [sha256])
            else { return nil }
            return Self.summary(row, job: try Self.newestJobs(db, where: "sha256 = ?", [sha256])[sha256])
        }
    }

    /// The decisions, open items and library sightings of one photo's readings.
    package func photoReadings(sha256: String) throws -> PhotoReadings {
        try read { db in
            var decisions: [String: String] = [:]
            var decided: [String: Book] = [:]
            for row in try db.query("SELECT reading_key, action, book FROM review_decision WHERE sha256 = ?", [sha256])
            {
                let key: String = try row.required("reading_key", of: "review_decision")
                decisions[key] = try row.required("action", of: "review_decision")
                decided[key] = row.string("book").flatMap { try? JSONDecoder().decode(Book.self, from: Data($0.utf8)) }
            }
            let open = Set(
                try db.query("SELECT id FROM review_item WHERE sha256 = ?", [sha256]).required(
                    "id", of: "review_item", as: String.self))
            let sightings = try db.query(
                """
                SELECT b.work_key, s.title_key, s.box FROM book_sighting s JOIN book b ON b.id = s.book_id
                WHERE s.sha256 = ? ORDER BY s.seen_at, b.id
                """, [sha256]
            ).map { row -> PhotoReadings.Sighting in
                let work: String = try row.required("work_key", of: "book")
                let box = row.string("box").flatMap { try? JSONDecoder().decode(Box.self, from: Data($0.utf8)) }
                return PhotoReadings.Sighting(work: work, titleKey: row.string("title_key"), box: box)
            }
            return PhotoReadings(decisions: decisions, decided: decided, openItems: open, sightings: sightings)
        }
    }

    private struct NewestJob {
        var state: JobState?
        var provider: String?
        var resultPath: String?
        var finishedAt: Date?
    }

    /// Per photo: the newest job's state and provider, and the newest result any of its jobs wrote.
    private static func newestJobs(
        _ db: any DatabaseConnection, where condition: String,
        _ arguments: [any SQLBindable]
    ) throws -> [String: NewestJob] {
        var jobs: [String: NewestJob] = [:]
        for row in try db.query(
            """
            SELECT sha256, state, provider, provider_choice, result_path, finished_at FROM job
            WHERE \(condition) ORDER BY id
            """, arguments)
        {
            let sha: String = try row.required("sha256", of: "job")
            var job = jobs[sha] ?? NewestJob()
            job.state = try row.required("state", of: "job")
            let provider = row.string("provider_choice") ?? row.string("provider")
            job.provider = provider?.isEmpty == false ? provider : nil
            if let result = row.string("result_path") {
                job.resultPath = result
                job.finishedAt = row.date("finished_at")
            }
            jobs[sha] = job
        }
        return jobs
    }

    private static func summary(_ row: Row, job: NewestJob?) -> PhotoSummary {
        PhotoSummary(
            sha256: row.string("sha256") ?? "", relativePath: row.string("relative_path") ?? "",
            firstSeen: row.date("first_seen") ?? Date(timeIntervalSince1970: 0), state: job?.state,
            provider: job?.provider, resultPath: job?.resultPath, finishedAt: job?.finishedAt)
    }
}
