import Foundation
import ShelfCore

extension Store {
    /// Dedupes against the library: the same valid ISBN-13, else the same normalised title + author
    /// surname. A repeat sighting keeps the higher confidence and adds the sighting; it never adds a book.
    static func upsertBook(_ db: SQLiteConnection, _ book: Book, sha256: String, shelf: String?, threshold: Double,
                           now: Date) throws {
        let titleKey = book.titleKey
        var existing: Row?
        if let isbn = book.isbn13 {
            existing = try db.queryOne("SELECT * FROM book WHERE isbn13 = ?", [isbn])
        }
        if existing == nil {
            existing = try db.queryOne("SELECT * FROM book WHERE title_key = ? ORDER BY id LIMIT 1", [titleKey])
        }
        let bookID: Int64
        if let existing, let id = existing.int("id") {
            bookID = id
            let confidence = max(existing.double("confidence") ?? 0, book.confidence)
            let better = book.confidence > (existing.double("confidence") ?? 0)
            // An ISBN is adopted only by a book that has none and that no other book claims.
            var isbn13 = existing.string("isbn13"), isbn10 = existing.string("isbn10")
            if isbn13 == nil, let isbn = book.isbn13,
               try db.queryOne("SELECT 1 AS one FROM book WHERE isbn13 = ?", [isbn]) == nil {
                isbn13 = isbn; isbn10 = book.isbn10
            }
            try db.execute("""
                UPDATE book SET confidence = ?, status = ?, title = ?, author = ?, isbn13 = ?, isbn10 = ?, updated_at = ?
                WHERE id = ?
                """, [confidence, confidence >= threshold ? Book.Status.verified.rawValue : Book.Status.needsReview.rawValue,
                      better ? book.title : existing.string("title") ?? book.title,
                      (better ? book.author : nil) ?? existing.string("author") ?? book.author,
                      isbn13, isbn10, now, id])
        } else {
            try db.execute("""
                INSERT INTO book (title_key, title, author, isbn13, isbn10, confidence, status, source, first_seen, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [titleKey, book.title, book.author, book.isbn13, book.isbn10, book.confidence,
                      book.confidence >= threshold ? Book.Status.verified.rawValue : Book.Status.needsReview.rawValue,
                      book.source, now, now])
            bookID = db.lastInsertID
        }
        let box = try book.box.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try db.execute("""
            INSERT INTO book_sighting (book_id, sha256, box, confidence, shelf, seen_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(book_id, sha256) DO UPDATE SET confidence = MAX(confidence, excluded.confidence)
            """, [bookID, sha256, box, book.confidence, shelf, now])
    }

    /// Removes a photo's sightings (before its new reading is added); a book seen nowhere else goes, the
    /// others keep the best confidence of their remaining sightings.
    static func forgetSightings(_ db: SQLiteConnection, of sha256: String, threshold: Double) throws {
        let books = try db.query("SELECT book_id FROM book_sighting WHERE sha256 = ?", [sha256]).compactMap { $0.int("book_id") }
        guard !books.isEmpty else { return }
        try db.execute("DELETE FROM book_sighting WHERE sha256 = ?", [sha256])
        for id in books {
            if let best = try db.queryOne("SELECT MAX(confidence) AS c FROM book_sighting WHERE book_id = ?", [id])?.double("c") {
                try db.execute("UPDATE book SET confidence = ?, status = ? WHERE id = ?",
                               [best, best >= threshold ? Book.Status.verified.rawValue : Book.Status.needsReview.rawValue, id])
            } else {
                try db.execute("DELETE FROM book WHERE id = ?", [id])
            }
        }
    }

    /// Every unique book with its sightings, in the order they were first seen.
    package func library() throws -> [LibraryDocument.Entry] {
        try read { db in
            let sightingRows = try db.query("""
                SELECT s.book_id, s.sha256, s.box, s.confidence, s.shelf, s.seen_at, p.relative_path
                FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256 ORDER BY s.seen_at, s.sha256
                """)
            var sightings: [Int64: [LibraryDocument.Sighting]] = [:]
            for row in sightingRows {
                guard let bookID = row.int("book_id") else { continue }
                let box = row.string("box").flatMap { try? JSONDecoder().decode(Box.self, from: Data($0.utf8)) }
                sightings[bookID, default: []].append(LibraryDocument.Sighting(
                    photo: row.string("relative_path") ?? "", photoSHA256: row.string("sha256") ?? "", box: box,
                    confidence: row.double("confidence") ?? 0, shelf: row.string("shelf"),
                    seenAt: row.date("seen_at") ?? Date(timeIntervalSince1970: 0)))
            }
            return try db.query("SELECT * FROM book ORDER BY id").compactMap { row in
                guard let id = row.int("id") else { return nil }
                return LibraryDocument.Entry(work: row.string("title_key") ?? "", title: row.string("title") ?? "", author: row.string("author"),
                                             isbn13: row.string("isbn13"), isbn10: row.string("isbn10"),
                                             confidence: row.double("confidence") ?? 0,
                                             status: Book.Status(rawValue: row.string("status") ?? "") ?? .needsReview,
                                             source: row.string("source") ?? "", firstSeen: row.date("first_seen") ?? Date(),
                                             sightings: sightings[id] ?? [])
            }
        }
    }
}
