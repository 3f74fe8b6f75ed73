import Foundation
import ShelfCore

/// The library is one row per work (DESIGN §7); each of its sightings keeps what one photo showed (title,
/// author, ISBN, review state). A book's title, confidence and status are recomputed from its sightings, so
/// replacing one photo's reading (a rescan, a person's decision) never leaves a stale value behind.
extension Store {
    /// Adds one reading from a photo to the work it belongs to, or as a new work. `decided`: a person chose
    /// this reading (it counts as verified, and its title wins). Returns the book's row.
    @discardableResult
    static func addReading(_ db: SQLiteConnection, _ book: Book, photo: ReviewDocument.Photo, shelf: String?,
                           decided: Bool = false, isbnSource: String? = nil, now: Date) throws -> Int64 {
        let bookID = try work(for: book, db, now: now)
        let box = try book.box.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        let verified = decided || book.status == .verified
        // Two readings of one photo on the same work (rare: the matcher uses each record once per photo) share
        // the sighting: the best confidence, verified if either was.
        try db.execute("""
            INSERT INTO book_sighting (book_id, sha256, box, confidence, shelf, seen_at, status, title, author, title_key,
                                       isbn13, isbn10, isbn_source, decided)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(book_id, sha256) DO UPDATE SET
                confidence = MAX(confidence, excluded.confidence),
                status = CASE WHEN excluded.status = 'verified' THEN 'verified' ELSE status END,
                decided = MAX(decided, excluded.decided),
                isbn10 = CASE WHEN isbn13 IS NULL THEN excluded.isbn10 ELSE isbn10 END,
                isbn_source = CASE WHEN isbn13 IS NULL THEN excluded.isbn_source ELSE isbn_source END,
                isbn13 = COALESCE(isbn13, excluded.isbn13)
            """, [bookID, photo.sha256, box, book.confidence, shelf, now,
                  (verified ? Book.Status.verified : .needsReview).rawValue, book.title, book.author, book.titleKey,
                  book.isbn13, book.isbn10, book.isbn13 == nil ? nil : isbnSource ?? book.match?.source ?? book.source,
                  decided])
        try refresh(db, bookID, now: now)
        guard !decided else { return bookID }          // the reading's detection is in the history already
        try recordHistory(db, bookID, LibraryDocument.Decision(action: "detected", by: book.source, at: now, detail: photo.path))
        if let match = book.match {
            try recordHistory(db, bookID, LibraryDocument.Decision(
                action: "matched", by: match.source, at: now, detail: "\(match.key) (score \(String(format: "%.2f", match.score)))"))
        }
        return bookID
    }

    /// The row of the work `book` belongs to: the same matched record; else a work with the same normalised
    /// title and surname (matched or not: a book matched later is the same work as one that was not).
    /// An unmatched work that turns out to be a matched one is folded into it.
    static func work(for book: Book, _ db: SQLiteConnection, now: Date) throws -> Int64 {
        let sameTitle = try db.query("""
            SELECT id, match_key FROM book
            WHERE work_key = ?1 OR id IN (SELECT book_id FROM book_sighting WHERE title_key = ?1) ORDER BY id
            """, [book.titleKey])
        let unmatched = sameTitle.filter { $0.string("match_key") == nil }.compactMap { $0.int("id") }
        guard let match = book.match else {
            if let row = sameTitle.first(where: { $0.string("match_key") != nil }) ?? sameTitle.first, let id = row.int("id") {
                return id
            }
            return try insertWork(db, book, now: now)
        }
        let target: Int64
        if let existing = try db.queryOne("SELECT id FROM book WHERE work_key = ?", [book.workKey])?.int("id") {
            target = existing
            try db.execute("UPDATE book SET match_score = MAX(match_score, ?) WHERE id = ?", [match.score, target])
        } else if let first = unmatched.first {
            target = first
            try db.execute("""
                UPDATE book SET work_key = ?, match_source = ?, match_key = ?, match_score = ?, match_year = ? WHERE id = ?
                """, [book.workKey, match.source, match.key, match.score, match.year, target])
        } else {
            return try insertWork(db, book, now: now)
        }
        for other in unmatched where other != target { try merge(other, into: target, db, now: now) }
        return target
    }

    private static func insertWork(_ db: SQLiteConnection, _ book: Book, now: Date) throws -> Int64 {
        try db.execute("""
            INSERT INTO book (work_key, title, author, confidence, status, source, match_source, match_key, match_score,
                              match_year, first_seen, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [book.workKey, book.title, book.author, book.confidence, book.status.rawValue, book.source,
                  book.match?.source, book.match?.key, book.match?.score, book.match?.year, now, now])
        return db.lastInsertID
    }

    /// Moves everything of work `from` to `target` (sightings, history, open review items) and removes it.
    static func merge(_ from: Int64, into target: Int64, _ db: SQLiteConnection, now: Date) throws {
        try db.execute("UPDATE OR IGNORE book_sighting SET book_id = ? WHERE book_id = ?", [target, from])
        try db.execute("DELETE FROM book_sighting WHERE book_id = ?", [from])     // the same photo on both: one is enough
        try db.execute("UPDATE book_history SET book_id = ? WHERE book_id = ?", [target, from])
        try db.execute("UPDATE review_item SET book_id = ? WHERE book_id = ?", [target, from])
        // The work was first seen when the earlier of the two was, by whoever read it then.
        try db.execute("""
            UPDATE book SET (first_seen, source) = (SELECT o.first_seen, o.source FROM book o WHERE o.id = ?1)
            WHERE id = ?2 AND first_seen > (SELECT o.first_seen FROM book o WHERE o.id = ?1)
            """, [from, target])
        try db.execute("DELETE FROM book WHERE id = ?", [from])
        try refresh(db, target, now: now)
    }

    /// Recomputes a book from its sightings: the title and author of the reading a person decided, else the
    /// most confident one; the best confidence; verified when a person decided or any reading was verified.
    /// A book no photo shows any more is removed (with its history).
    static func refresh(_ db: SQLiteConnection, _ id: Int64, now: Date) throws {
        guard let best = try db.queryOne("""
            SELECT title,
                   COALESCE(author, (SELECT a.author FROM book_sighting a WHERE a.book_id = ?1 AND a.author IS NOT NULL
                                     ORDER BY a.decided DESC, a.confidence DESC LIMIT 1)) AS author,
                   (SELECT MAX(confidence) FROM book_sighting WHERE book_id = ?1) AS best_confidence,
                   (SELECT MAX(decided OR status = 'verified') FROM book_sighting WHERE book_id = ?1) AS verified
            FROM book_sighting WHERE book_id = ?1 ORDER BY decided DESC, confidence DESC, seen_at LIMIT 1
            """, [id]) else {
            try db.execute("DELETE FROM book WHERE id = ?", [id])
            return
        }
        try db.execute("UPDATE book SET title = ?, author = ?, confidence = ?, status = ?, updated_at = ? WHERE id = ?",
                       [best.string("title") ?? "", best.string("author"), best.double("best_confidence") ?? 0,
                        (best.int("verified") == 1 ? Book.Status.verified : .needsReview).rawValue, now, id])
    }

    /// Removes a photo's sightings before its new reading is added. Returns the books that lost one: the caller
    /// refreshes them once the new reading is in, so a book read again keeps its row, history and first sighting.
    static func forgetSightings(_ db: SQLiteConnection, of sha256: String) throws -> [Int64] {
        let books = try db.query("SELECT book_id FROM book_sighting WHERE sha256 = ?", [sha256]).compactMap { $0.int("book_id") }
        try db.execute("DELETE FROM book_sighting WHERE sha256 = ?", [sha256])
        return books
    }

    /// Adds a step to a work's history, unless the same step (action, by whom, detail) is already there: reading
    /// the same photo again does not repeat it.
    static func recordHistory(_ db: SQLiteConnection, _ bookID: Int64, _ decision: LibraryDocument.Decision) throws {
        try db.execute("""
            INSERT INTO book_history (book_id, action, agent, at, detail)
            SELECT ?1, ?2, ?3, ?4, ?5 WHERE NOT EXISTS (
                SELECT 1 FROM book_history WHERE book_id = ?1 AND action = ?2 AND agent = ?3 AND detail IS ?5)
            """, [bookID, decision.action, decision.by, decision.at, decision.detail])
    }

    /// Every work with its editions, shelves, sightings, history and open review item, in the order first seen.
    package func library() throws -> [LibraryDocument.Entry] {
        try read { db in
            var sightings: [Int64: [LibraryDocument.Sighting]] = [:]
            var editions: [Int64: [LibraryDocument.Edition]] = [:]
            for row in try db.query("""
                SELECT s.*, p.relative_path FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256
                ORDER BY s.seen_at, s.sha256
                """) {
                guard let bookID = row.int("book_id") else { continue }
                let box = row.string("box").flatMap { try? JSONDecoder().decode(Box.self, from: Data($0.utf8)) }
                sightings[bookID, default: []].append(LibraryDocument.Sighting(
                    photo: row.string("relative_path") ?? "", photoSHA256: row.string("sha256") ?? "", box: box,
                    confidence: row.double("confidence") ?? 0, shelf: row.string("shelf"),
                    seenAt: row.date("seen_at") ?? Date(timeIntervalSince1970: 0)))
                // An edition is an ISBN some sighting showed (or a person gave), listed once, first seen first.
                if let isbn13 = row.string("isbn13"), !(editions[bookID] ?? []).contains(where: { $0.isbn13 == isbn13 }) {
                    editions[bookID, default: []].append(LibraryDocument.Edition(
                        isbn13: isbn13, isbn10: row.string("isbn10"), source: row.string("isbn_source") ?? ""))
                }
            }
            var history: [Int64: [LibraryDocument.Decision]] = [:]
            for row in try db.query("SELECT * FROM book_history ORDER BY at, id") {
                guard let bookID = row.int("book_id") else { continue }
                history[bookID, default: []].append(LibraryDocument.Decision(
                    action: row.string("action") ?? "", by: row.string("agent") ?? "",
                    at: row.date("at") ?? Date(timeIntervalSince1970: 0), detail: row.string("detail")))
            }
            var reviewIDs: [Int64: String] = [:]
            for row in try db.query("SELECT id, book_id FROM review_item ORDER BY created_at DESC, id DESC") {
                if let bookID = row.int("book_id"), let id = row.string("id") { reviewIDs[bookID] = id }   // the oldest wins
            }
            return try db.query("SELECT * FROM book ORDER BY first_seen, id").compactMap { row in
                guard let id = row.int("id") else { return nil }
                let match = row.string("match_source").flatMap { source in
                    row.string("match_key").map { BookMatch(source: source, key: $0, score: row.double("match_score") ?? 0,
                                                            year: row.int("match_year").map(Int.init)) }
                }
                let seen = sightings[id] ?? []
                return LibraryDocument.Entry(
                    work: row.string("work_key") ?? "", title: row.string("title") ?? "", author: row.string("author"),
                    isbn13: editions[id]?.first?.isbn13, isbn10: editions[id]?.first?.isbn10,
                    confidence: row.double("confidence") ?? 0,
                    status: Book.Status(rawValue: row.string("status") ?? "") ?? .needsReview,
                    source: row.string("source") ?? "", match: match, firstSeen: row.date("first_seen") ?? Date(),
                    editions: editions[id] ?? [], shelves: Set(seen.compactMap(\.shelf)).sorted(), sightings: seen,
                    history: history[id] ?? [], reviewID: reviewIDs[id])
            }
        }
    }
}
