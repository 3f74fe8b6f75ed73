import Foundation
import ShelfCore

/// The library as library.json and the exports hold it: each work with its editions, shelves, sightings, history and
/// open review item, read whole or a page at a time.
extension LibraryRecords {
    /// Every work with its editions, shelves, sightings, history and open review item, in the order first seen.
    package func entries() throws -> [LibraryDocument.Entry] {
        try read { db in try Self.entries(db, only: nil) }
    }

    /// The whole library a page at a time, each work bounded as library.json holds it, in the order first seen
    /// (keyset on `first_seen`, `id`: the index `book_first_seen`), each page read in a transaction of its own on
    /// the store's second connection (`readAside`): writing library.json or an export holds a page of works in
    /// memory, never the library, and a decision or a commit does not wait for a page on SQLite (on PostgreSQL, for
    /// one page at most). A change between two pages is caught by the next rewrite, which the change itself asks for.
    package func libraryPages(size: Int = 250, _ body: ([LibraryDocument.Entry]) throws -> Void) throws {
        var after: (firstSeen: Double, id: Int64)?
        while true {
            let keyset: [any SQLBindable] = after.map { [$0.firstSeen, $0.firstSeen, $0.id] } ?? []
            let (page, last) = try readAside { db -> ([LibraryDocument.Entry], (firstSeen: Double, id: Int64)?) in
                let rows = try db.query(
                    """
                    SELECT id, first_seen FROM book
                    WHERE \(after == nil ? "1 = 1" : "first_seen >= ? AND (first_seen > ? OR id > ?)")
                    ORDER BY first_seen, id LIMIT ?
                    """, keyset + [Int64(size)])
                guard let row = rows.last, let id = row.int("id") else { return ([], nil) }
                return (
                    try Self.entries(db, among: rows.required("id", of: "book"), bounded: true),
                    (row.double("first_seen") ?? 0, id)
                )
            }
            guard let last else { return }
            try body(page)
            if page.count < size { return }
            after = last
        }
    }

    /// The entries of the whole library, or of the one work whose row is `only`, whole.
    static func entries(_ db: any DatabaseConnection, only bookID: Int64?) throws -> [LibraryDocument.Entry] {
        try entries(db, among: bookID.map { [$0] })
    }

    /// The entries of the works whose rows are `among` (all when nil), in the order first seen. `bounded`: as
    /// library.json holds them (`Entry.bounded()`), worked out by the database, so a work seen in a thousand photos
    /// costs a page what a work seen once does: the latest sighting per shelf, the latest steps, the counts, and
    /// each edition once with how often and how lately it was seen.
    static func entries(
        _ db: any DatabaseConnection, among bookIDs: [Int64]?,
        bounded: Bool = false
    ) throws -> [LibraryDocument.Entry] {
        // Some works: each query its own indexed WHERE (a `?1 IS NULL OR` would read every row).
        func only(_ column: String, and condition: String? = nil) -> String {
            let clauses: [String]
            if let bookIDs {
                clauses =
                    [
                        bookIDs.isEmpty
                            ? "1 = 0"
                            : bookIDs.count == 1
                                ? "\(column) = ?"
                                : "\(column) IN (\(Array(repeating: "?", count: bookIDs.count).joined(separator: ", ")))"
                    ] + [condition].compactMap { $0 }
            } else {
                clauses = [condition].compactMap { $0 }
            }
            return clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND ")
        }
        let arguments: [any SQLBindable] = (bookIDs ?? []).map { $0 }
        func sighting(_ row: Row) -> LibraryDocument.Sighting {
            LibraryDocument.Sighting(
                photo: row.string("relative_path") ?? "", photoSHA256: row.string("sha256") ?? "",
                box: row.string("box").flatMap { try? JSONDecoder().decode(Box.self, from: Data($0.utf8)) },
                confidence: row.double("confidence") ?? 0, shelf: row.string("shelf"),
                seenAt: row.date("seen_at") ?? Date(timeIntervalSince1970: 0))
        }
        func decision(_ row: Row) -> LibraryDocument.Decision {
            LibraryDocument.Decision(
                action: row.string("action") ?? "", by: row.string("agent") ?? "",
                at: row.date("at") ?? Date(timeIntervalSince1970: 0), detail: row.string("detail"))
        }
        var sightings: [Int64: [LibraryDocument.Sighting]] = [:]
        var editions: [Int64: [LibraryDocument.Edition]] = [:]
        var seen: [Int64: [String: (count: Int, last: Int)]] = [:] // per work and ISBN: sightings, the newest
        var sightingCounts: [Int64: (count: Int, last: Date?)] = [:]
        var history: [Int64: [LibraryDocument.Decision]] = [:]
        var historyCounts: [Int64: Int] = [:]
        if bounded {
            for row in try db.query(
                """
                SELECT s.*, p.relative_path FROM (
                    SELECT book_id, sha256, box, confidence, shelf, seen_at,
                           ROW_NUMBER() OVER (PARTITION BY book_id, shelf ORDER BY seen_at DESC, sha256 DESC) AS recent
                    FROM book_sighting \(only("book_id"))) AS s
                JOIN photo p ON p.sha256 = s.sha256 WHERE s.recent = 1 ORDER BY s.seen_at, s.sha256
                """, arguments)
            {
                let bookID: Int64 = try row.required("book_id", of: "book_sighting")
                sightings[bookID, default: []].append(sighting(row))
            }
            for row in try db.query(
                """
                SELECT book_id, COUNT(*) AS n, MAX(seen_at) AS newest FROM book_sighting \(only("book_id")) GROUP BY book_id
                """, arguments)
            {
                let bookID: Int64 = try row.required("book_id", of: "book_sighting")
                sightingCounts[bookID] = (Int(row.int("n") ?? 0), row.date("newest"))
            }
            // Each edition once, with the sighting that first showed it (its ISBN-10 and who gave it), how many showed
            // it, and where the newest of them falls in the work's sightings.
            for row in try db.query(
                """
                SELECT book_id, isbn13, isbn10, isbn_source, n, newest FROM (
                    SELECT book_id, isbn13, isbn10, isbn_source, seen_at, sha256,
                           ROW_NUMBER() OVER (PARTITION BY book_id, isbn13 ORDER BY seen_at, sha256) AS earliest,
                           COUNT(*) OVER (PARTITION BY book_id, isbn13) AS n,
                           MAX(place) OVER (PARTITION BY book_id, isbn13) AS newest
                    FROM (SELECT book_id, isbn13, isbn10, isbn_source, seen_at, sha256,
                                 ROW_NUMBER() OVER (PARTITION BY book_id ORDER BY seen_at, sha256) AS place
                          FROM book_sighting \(only("book_id", and: "isbn13 IS NOT NULL"))) AS ordered) AS shown
                WHERE earliest = 1 ORDER BY book_id, seen_at, sha256
                """, arguments)
            {
                let bookID: Int64 = try row.required("book_id", of: "book_sighting")
                let isbn13: String = try row.required("isbn13", of: "book_sighting")
                editions[bookID, default: []].append(
                    LibraryDocument.Edition(
                        isbn13: isbn13, isbn10: row.string("isbn10"), source: row.string("isbn_source") ?? ""))
                seen[bookID, default: [:]][isbn13] = (Int(row.int("n") ?? 0), Int(row.int("newest") ?? 0))
            }
            for row in try db.query(
                """
                SELECT * FROM (
                    SELECT book_id, action, agent, at, detail, id,
                           ROW_NUMBER() OVER (PARTITION BY book_id ORDER BY at DESC, id DESC) AS recent,
                           COUNT(*) OVER (PARTITION BY book_id) AS steps
                    FROM book_history \(only("book_id"))) AS h
                WHERE recent <= \(LibraryDocument.Entry.boundedHistory) ORDER BY at, id
                """, arguments)
            {
                let bookID: Int64 = try row.required("book_id", of: "book_history")
                history[bookID, default: []].append(decision(row))
                historyCounts[bookID] = Int(row.int("steps") ?? 0)
            }
        } else {
            for row in try db.query(
                """
                SELECT s.*, p.relative_path FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256
                \(only("s.book_id")) ORDER BY s.seen_at, s.sha256
                """, arguments)
            {
                let bookID: Int64 = try row.required("book_id", of: "book_sighting")
                sightings[bookID, default: []].append(sighting(row))
                // An edition is an ISBN some sighting showed (or a person gave), listed once, first seen first; a
                // sighting without an ISBN shows none.
                if let isbn13 = row.string("isbn13") {
                    if !(editions[bookID] ?? []).contains(where: { $0.isbn13 == isbn13 }) {
                        editions[bookID, default: []].append(
                            LibraryDocument.Edition(
                                isbn13: isbn13, isbn10: row.string("isbn10"), source: row.string("isbn_source") ?? ""))
                    }
                    let order = sightings[bookID]?.count ?? 0 // sightings come oldest first
                    seen[bookID, default: [:]][isbn13] = ((seen[bookID]?[isbn13]?.count ?? 0) + 1, order)
                }
            }
            for row in try db.query("SELECT * FROM book_history \(only("book_id")) ORDER BY at, id", arguments) {
                let bookID: Int64 = try row.required("book_id", of: "book_history")
                history[bookID, default: []].append(decision(row))
            }
        }
        var reviewIDs: [Int64: String] = [:]
        for row in try db.query(
            """
            SELECT id, book_id FROM review_item \(only("book_id")) ORDER BY created_at DESC, id DESC
            """, arguments)
        {
            // Newest first: the oldest wins.
            reviewIDs[try row.required("book_id", of: "review_item")] = try row.required("id", of: "review_item")
        }
        let marks = try ShelfRounds.marks(db, of: bookIDs)
        let standsOn = try ShelfRounds.currentShelves(db, among: bookIDs)
        return try db.query("SELECT * FROM book \(only("id")) ORDER BY first_seen, id", arguments).map { row in
            let id: Int64 = try row.required("id", of: "book")
            let match = row.string("match_source").flatMap { source in
                row.string("match_key").map {
                    BookMatch(
                        source: source, key: $0, score: row.double("match_score") ?? 0,
                        year: row.int("match_year").map(Int.init))
                }
            }
            let seenIn = sightings[id] ?? []
            // The edition shown, and written by the exports: the one seen most; of those, the one seen last.
            let counts = seen[id] ?? [:]
            let shown = (editions[id] ?? []).max { a, b in
                let x = counts[a.isbn13] ?? (0, 0), y = counts[b.isbn13] ?? (0, 0)
                return (x.count, x.last) < (y.count, y.last)
            }
            let firstSeen: Date = try row.required("first_seen", of: "book")
            return LibraryDocument.Entry(
                work: row.string("work_key") ?? "", title: row.string("title") ?? "", author: row.string("author"),
                isbn13: shown?.isbn13, isbn10: shown?.isbn10,
                confidence: row.double("confidence") ?? 0,
                status: try row.required("status", of: "book"),
                source: row.string("source") ?? "", match: match, firstSeen: firstSeen,
                lastSeen: bounded ? sightingCounts[id]?.last ?? firstSeen : nil,
                editions: editions[id] ?? [], shelves: Set(seenIn.compactMap(\.shelf)).sorted(),
                shelf: marks[id]?.kind == .gone ? nil : standsOn[id], sightings: seenIn,
                sightingsCount: bounded ? sightingCounts[id]?.count ?? 0 : nil,
                history: history[id] ?? [], historyCount: bounded ? historyCounts[id] ?? 0 : nil,
                reviewID: reviewIDs[id],
                missingSince: marks[id]?.missingSince, lentTo: marks[id]?.lentTo)
        }
    }
}
