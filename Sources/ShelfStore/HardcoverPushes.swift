import Foundation
import ShelfCore

/// A verified work as a push to Hardcover needs it: its row, its key, its name, the edition it is exported as
/// (the ISBN seen in most photos) and the shelf it stands on.
package struct HardcoverWork: Sendable, Equatable {
    package var bookID: Int64
    package var work: String
    package var title: String
    package var author: String?
    package var isbn13: String?
    package var shelf: String?

    package init(bookID: Int64, work: String, title: String, author: String?, isbn13: String?, shelf: String?) {
        self.bookID = bookID; self.work = work; self.title = title; self.author = author; self.isbn13 = isbn13
        self.shelf = shelf
    }
}

/// What one work's push did on Hardcover, remembered per work and edition.
package struct HardcoverPushRecord: Sendable, Equatable {
    package enum Outcome: String, Sendable { case added, there, unknown }
    package var bookID: Int64
    package var isbn13: String
    package var outcome: Outcome
    package var hardcoverBook: Int?
    package var edition: Int?
    package var userBook: Int?
    /// The list named after the shelf it was put on.
    package var list: String?

    package init(
        bookID: Int64, isbn13: String, outcome: Outcome, hardcoverBook: Int? = nil, edition: Int? = nil,
        userBook: Int? = nil, list: String? = nil
    ) {
        self.bookID = bookID; self.isbn13 = isbn13; self.outcome = outcome; self.hardcoverBook = hardcoverBook
        self.edition = edition; self.userBook = userBook; self.list = list
    }
}

/// Where a walk through the works changed since a moment stopped: the last work's change and row.
package struct HardcoverCursor: Sendable, Equatable {
    package var changed: Double
    package var bookID: Int64
    package init(changed: Double, bookID: Int64) { self.changed = changed; self.bookID = bookID }
}

/// The works added to Hardcover (`hardcover_push`), and the verified works that are not yet, found along the works'
/// changes (`book_updated`: a work's row is touched whenever a commit, a decision or an edit changes it), so a
/// background push reads what changed since its last look, not the library.
package struct HardcoverPushes: StoreConcern {
    let database: Store

    /// The verified works among the next `limit` works changed after `cursor` (from the first when nil), in the order
    /// of their change, but those already recorded for their edition; where the walk stopped (the last work read; nil
    /// when none was), and whether more were changed after it. `retryUnknown`: a work whose edition Hardcover did not
    /// know comes again (its catalogue grows).
    package func changedWorks(after cursor: HardcoverCursor?, limit: Int = 200, retryUnknown: Bool = false)
        throws -> (works: [HardcoverWork], last: HardcoverCursor?, more: Bool)
    {
        try database.read { db in
            // The range's start on its own (`>=`): with only an OR, SQLite walks `book_updated` from its first row.
            let keyset: [any SQLBindable] = cursor.map { [$0.changed, $0.changed, $0.bookID] } ?? []
            let rows = try db.query(
                """
                SELECT id, updated_at FROM book
                WHERE \(cursor == nil ? "1 = 1" : "updated_at >= ? AND (updated_at > ? OR id > ?)")
                ORDER BY updated_at, id LIMIT ?
                """, keyset + [Int64(limit)])
            guard let last = rows.last, let lastID = last.int("id") else { return ([], nil, false) }
            let next = HardcoverCursor(changed: last.double("updated_at") ?? 0, bookID: lastID)
            let ids = try rows.map { try $0.required("id", of: "book", as: Int64.self) }
            let list = ids.map(String.init).joined(separator: ",")
            let entries = try LibraryRecords.entries(db, among: ids, bounded: true).filter { $0.status == .verified }
            var done: Set<String> = []
            for row in try db.query("SELECT book_id, isbn13, outcome FROM hardcover_push WHERE book_id IN (\(list))")
            where !(retryUnknown && row.string("outcome") == "unknown") {
                done.insert("\(row.int("book_id") ?? 0)|\(row.string("isbn13") ?? "")")
            }
            var rowOf: [String: Int64] = [:]
            for row in try db.query("SELECT id, work_key FROM book WHERE id IN (\(list))") {
                rowOf[try row.required("work_key", of: "book")] = try row.required("id", of: "book")
            }
            var works: [HardcoverWork] = []
            for entry in entries {
                // Never taken: the entries were read from these rows, in this transaction.
                guard let bookID = rowOf[entry.work] else { continue }
                if let isbn = entry.isbn13, done.contains("\(bookID)|\(isbn)") { continue }
                works.append(
                    HardcoverWork(
                        bookID: bookID, work: entry.work, title: entry.title, author: entry.author,
                        isbn13: entry.isbn13, shelf: entry.shelf))
            }
            return (works, next, rows.count == limit)
        }
    }

    /// Every verified work not yet recorded for its edition, a page at a time, in the order of their change.
    package func pendingWorks(retryUnknown: Bool, _ body: ([HardcoverWork]) throws -> Void) throws {
        var cursor: HardcoverCursor?
        while true {
            let (works, last, more) = try changedWorks(after: cursor, retryUnknown: retryUnknown)
            if !works.isEmpty { try body(works) }
            guard more else { return }
            cursor = last
        }
    }

    /// Records what a push did for a work's edition (a later push of the same edition replaces it).
    package func record(_ record: HardcoverPushRecord, now: Date) throws {
        try database.write { db in
            try db.execute(
                """
                INSERT INTO hardcover_push (book_id, isbn13, outcome, hardcover_book, edition, user_book, list, at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (book_id, isbn13) DO UPDATE SET outcome = excluded.outcome,
                    hardcover_book = excluded.hardcover_book, edition = excluded.edition,
                    user_book = excluded.user_book, list = excluded.list, at = excluded.at
                """,
                [
                    record.bookID, record.isbn13, record.outcome.rawValue, record.hardcoverBook.map(Int64.init),
                    record.edition.map(Int64.init), record.userBook.map(Int64.init), record.list, now,
                ])
        }
    }

    /// Every record, oldest first (`shelfd hardcover push --json` counts them; tests read them).
    package func records() throws -> [HardcoverPushRecord] {
        try database.readStatement { db in
            try db.query("SELECT * FROM hardcover_push ORDER BY at, book_id").map { row in
                HardcoverPushRecord(
                    bookID: row.int("book_id") ?? 0, isbn13: row.string("isbn13") ?? "",
                    outcome: try row.required("outcome", of: "hardcover_push"),
                    hardcoverBook: row.int("hardcover_book").map(Int.init),
                    edition: row.int("edition").map(Int.init), userBook: row.int("user_book").map(Int.init),
                    list: row.string("list"))
            }
        }
    }
}
