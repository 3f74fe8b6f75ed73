import Foundation
import ShelfCore

extension PhotoQueue {
    /// Records the step the photos of these leased jobs reached: one UPDATE, so it stays cheap enough to do at
    /// every step of every photo.
    package func recordStage(_ stage: JobStage, jobIDs: [Int64], now: Date) throws {
        guard !jobIDs.isEmpty else { return }
        try write { db in
            try db.execute(
                """
                UPDATE job SET stage = ?, stage_at = ? WHERE state = 'leased' AND id IN (\(jobIDs.map(String.init).joined(separator: ",")))
                """, [stage.rawValue, now])
        }
    }

    /// The counts, the current pass and the photos on their way, read for the overview (every half second
    /// while a page follows it): the kept counts and a few queries bounded by their LIMIT on an index.
    package func progress(openLimit: Int = 20, recentLimit: Int = 8, now: Date) throws -> QueueProgress {
        try read { db in
            let (counts, pass) = try StatusQueries.tally(db, now: now)
            // The first jobs of each open state in claim order, each by job_state_order: a queue of thousands reads no more.
            func first(_ state: JobState) -> String {
                """
                SELECT * FROM (SELECT j.id, j.sha256, j.state, j.stage, j.stage_at, j.not_before, \(PhotoQueue.queuedAt) AS queued, p.relative_path,
                                      (SELECT MAX(r.received_at) FROM response r WHERE r.job_id = j.id) AS answered_at
                               FROM job j JOIN photo p ON p.sha256 = j.sha256 WHERE j.state = '\(state.rawValue)' ORDER BY j.id LIMIT \(openLimit)) o
                """
            }
            let open = try db.query(
                """
                SELECT * FROM (\(first(.leased)) UNION ALL \(first(.pending)) UNION ALL \(first(.failedRetryable))) open
                ORDER BY CASE state WHEN 'leased' THEN 0 WHEN 'pending' THEN 1 ELSE 2 END, id LIMIT ?
                """, [openLimit])
            // `+state` (SQLite's way to leave an index out): walk job_finished from the newest, not every finished job
            // sorted (10,000 in a year). PostgreSQL's planner finds that way by itself.
            let recent = try db.query(
                """
                SELECT j.id, j.sha256, j.state, j.finished_at, p.relative_path
                FROM job j JOIN photo p ON p.sha256 = j.sha256
                WHERE \(db.engine == .sqlite ? "+" : "")j.state IN ('done', 'review', 'dead') AND j.finished_at IS NOT NULL
                ORDER BY j.finished_at DESC, j.id DESC LIMIT ?
                """, [recentLimit])
            var photos: [QueueProgress.Photo] = []
            for row in open + recent {
                let id: Int64 = try row.required("id", of: "job"), sha: String = try row.required("sha256", of: "job")
                let state: JobState = try row.required("state", of: "job")
                var stage = JobStage(state: state, recorded: row.string("stage"))
                var since =
                    switch stage {
                    case .queued, .retrying: row.date("queued")
                    case .done, .review, .failed: row.date("finished_at")
                    default: row.date("stage_at")
                    }
                // Asked, and the answer saved since: matching it (`recordResponse` records no stage of its own).
                if stage == .asking, let answered = row.date("answered_at"), let asked = since, answered >= asked {
                    (stage, since) = (.matching, answered)
                }
                photos.append(
                    .init(
                        jobID: id, sha256: sha, path: row.string("relative_path") ?? "", stage: stage, since: since,
                        retryAt: stage == .retrying ? row.date("not_before") : nil))
            }
            return QueueProgress(counts: counts, pass: pass, photos: photos)
        }
    }
}
