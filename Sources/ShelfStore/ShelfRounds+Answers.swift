import Foundation
import ShelfCore

/// What people say of a shelf's works, and what becomes of a work's shelf records when it is found to be another.
extension ShelfRounds {
    /// A person's answer about a work on a shelf (`shelfd shelf answer`): lent, gone, or still there. Recorded in the
    /// work's history like any decision. Returns the shelf and what it changed of the files.
    package func answer(work key: String, _ answer: ShelfAnswer, now: Date) throws -> (
        shelf: String, files: FilesChange
    ) {
        try database.write { db in
            let work = try LibraryRecords.workRow(db, key)
            guard
                let shelf = try Self.latestShelves(
                    db, of: [work.id], until: Date.distantFuture.timeIntervalSince1970,
                    besides: nil
                ).values.first
            else {
                throw LibraryError(
                    .nothingToChange,
                    "'\(key)' was never seen on a shelf (a sub-folder of incoming/): there is nothing to answer for it."
                )
            }
            let detail: String
            switch answer {
            case .lent(let name):
                try Self.mark(db, work.id, shelf: shelf, kind: .lent, name: name, since: now.timeIntervalSince1970)
                detail = "to \(name), from \(shelf)"
            case .gone:
                try Self.mark(db, work.id, shelf: shelf, kind: .gone, name: nil, since: now.timeIntervalSince1970)
                try db.execute("DELETE FROM shelf_place WHERE book_id = ?", [work.id])
                detail = "from \(shelf)"
            case .here:
                try db.execute("DELETE FROM shelf_mark WHERE book_id = ?", [work.id])
                detail = "on \(shelf)"
            }
            try LibraryRecords.recordPersonStep(db, work.id, answer.action, detail: detail, now: now)
            return (shelf, FilesChange(works: [work.id]))
        }
    }

    /// Marks a work of a shelf, in place of any mark it had; `round` names the round that found it missing.
    static func mark(
        _ db: any DatabaseConnection, _ work: Int64, shelf: String, kind: ShelfMark.Kind, name: String?, since: Double,
        round: Int64? = nil
    ) throws(StoreError) {
        try db.execute(
            """
            INSERT INTO shelf_mark (book_id, shelf, kind, since, name, round_id) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (book_id) DO UPDATE SET shelf = excluded.shelf, kind = excluded.kind, since = excluded.since,
                name = excluded.name, round_id = excluded.round_id
            """, [work, shelf, kind, since, name, round])
    }

    /// After two works were found to be one (`LibraryRecords.merge`): the shelf's records of `from` are the kept work's,
    /// unless it has its own.
    static func merge(_ from: Int64, into target: Int64, _ db: any DatabaseConnection) throws(StoreError) {
        for table in ["shelf_place", "shelf_mark"] {
            try db.execute(
                """
                UPDATE \(table) SET book_id = ?1 WHERE book_id = ?2 AND NOT EXISTS (SELECT 1 FROM \(table) o WHERE o.book_id = ?1)
                """, [target, from])
        }
        try db.execute(
            """
            UPDATE shelf_change SET book_id = ?1 WHERE book_id = ?2
              AND NOT EXISTS (SELECT 1 FROM shelf_change o WHERE o.book_id = ?1 AND o.round_id = shelf_change.round_id)
            """, [target, from])
    }
}
