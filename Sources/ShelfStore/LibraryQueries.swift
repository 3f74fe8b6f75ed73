import Foundation
import ShelfCore

extension LibraryRecords {
    /// The works matching `search` (in the title, the author or an ISBN), in `sort` order, `limit` of them from
    /// `offset`. One page is a few indexed queries, whatever the size of the library.
    package func libraryPage(search: String, sort: LibrarySort, offset: Int, limit: Int, photoLimit: Int = 4) throws
        -> LibraryPage
    {
        try read { db in
            let (condition, arguments) = Self.searchCondition(search, like: db.engine == .sqlite ? "LIKE" : "ILIKE")
            let total = Int(
                try db.queryOne("SELECT COUNT(*) AS n FROM book b WHERE \(condition)", arguments)?.int("n") ?? 0)
            // Title and added read their index (book_title_order, book_first_seen); shelf joins each work's first shelf.
            let order =
                switch sort {
                case .title: "\(db.caseless("b.title")), b.id"
                case .author: "b.author IS NULL, \(db.caseless("b.author")), \(db.caseless("b.title")), b.id"
                case .added: "b.first_seen DESC, b.id DESC"
                case .shelf: "f.shelf IS NULL, \(db.caseless("f.shelf")), \(db.caseless("b.title")), b.id"
                }
            let shelves =
                sort == .shelf
                ? "LEFT JOIN (SELECT book_id, MIN(shelf) AS shelf FROM book_sighting GROUP BY book_id) f ON f.book_id = b.id"
                : ""
            let books = try db.query(
                """
                SELECT b.id, b.work_key, b.title, b.author, b.status, b.first_seen
                FROM book b \(shelves) WHERE \(condition) ORDER BY \(order) LIMIT ? OFFSET ?
                """, arguments + [max(0, limit), max(0, offset)] as [any SQLBindable])
            let ids = try books.required("id", of: "book", as: Int64.self)
            guard !ids.isEmpty else { return LibraryPage(rows: [], total: total) }

            struct Seen {
                var shelves: Set<String> = []; var photos: [String] = []
                var isbns: [String: (count: Int, last: Double)] = [:]
            }
            var seen: [Int64: Seen] = [:]
            let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ",")
            for row in try db.query(
                """
                SELECT book_id, sha256, shelf, isbn13, seen_at FROM book_sighting WHERE book_id IN (\(placeholders))
                ORDER BY seen_at DESC, sha256
                """, ids)
            {
                let id: Int64 = try row.required("book_id", of: "book_sighting")
                let sha: String = try row.required("sha256", of: "book_sighting")
                if let shelf = row.string("shelf") { seen[id, default: Seen()].shelves.insert(shelf) }
                seen[id, default: Seen()].photos.append(sha)
                if let isbn = row.string("isbn13") {
                    let previous = seen[id]?.isbns[isbn]
                    seen[id]?.isbns[isbn] = (
                        (previous?.count ?? 0) + 1, max(previous?.last ?? 0, row.double("seen_at") ?? 0)
                    )
                }
            }
            let rows = try books.map { row -> LibraryRow in
                let id: Int64 = try row.required("id", of: "book")
                let facts = seen[id] ?? Seen()
                let isbn = facts.isbns.max { a, b in (a.value.count, a.value.last) < (b.value.count, b.value.last) }?
                    .key
                return LibraryRow(
                    work: row.string("work_key") ?? "", title: row.string("title") ?? "", author: row.string("author"),
                    isbn13: isbn, status: try row.required("status", of: "book"),
                    shelves: facts.shelves.sorted(), photos: Array(facts.photos.prefix(photoLimit)),
                    photoCount: facts.photos.count, firstSeen: row.date("first_seen") ?? Date(timeIntervalSince1970: 0))
            }
            return LibraryPage(rows: rows, total: total)
        }
    }

    /// The WHERE clause for a search: words anywhere in the title or author, or the digits of an ISBN (a whole
    /// ISBN-10 is looked up as its ISBN-13).
    /// `like`: the operator that ignores case (SQLite's `LIKE` does; PostgreSQL's `ILIKE`).
    static func searchCondition(_ search: String, like: String) -> (String, [any SQLBindable]) {
        let text = search.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return ("1 = 1", []) }
        let pattern = "%\(LibraryRecords.likeEscaped(text))%"
        // ISBNs are stored with a capital X; SQLite's LIKE ignores its case, PostgreSQL's does not.
        let digits = text.filter { $0 != "-" && $0 != " " }.uppercased()
        guard digits.count >= 4, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "X") }) else {
            return ("(b.title \(like) ?1 ESCAPE '\\' OR b.author \(like) ?1 ESCAPE '\\')", [pattern])
        }
        let isbn = ISBN(digits).map { $0.isbn13 } ?? "%\(digits)%"
        return (
            """
            (b.title \(like) ?1 ESCAPE '\\' OR b.author \(like) ?1 ESCAPE '\\'
             OR b.id IN (SELECT book_id FROM book_sighting WHERE isbn13 LIKE ?2 OR isbn10 LIKE ?2))
            """, [pattern, isbn]
        )
    }
}

extension LibraryRecords {
    /// The verified works read in photos other than `photo` under these keys (normalised titles, and ISBNs as
    /// `LibraryWork.isbnKey` writes them), by key: what a reading of one of those titles or editions may be
    /// (`LibraryEvidence`). One probe of the index `book_sighting_title_part` per title and of `book_sighting_isbn`
    /// per ISBN, so a photo's lookup costs its readings, not the library.
    package func works(under keys: Set<String>, besides photo: String) throws -> [String: [LibraryWork]] {
        guard !keys.isEmpty else { return [:] }
        return try read { db in try Self.works(db, under: keys, besides: photo) }
    }

    /// `works(under:besides:)` on `db`, inside the caller's transaction (a batch's commit).
    static func works(_ db: any DatabaseConnection, under keys: Set<String>, besides photo: String) throws
        -> [String: [LibraryWork]]
    {
        var found: [String: [LibraryWork]] = [:]
        for key in keys {
            let isbn = LibraryWork.isbn(ofKey: key)
            let rows = try db.query(
                """
                SELECT b.id, b.work_key, b.title, b.author, b.match_source, b.match_key, b.match_score, b.match_year,
                       s.shelf, s.isbn13, s.isbn10
                FROM book_sighting s JOIN book b ON b.id = s.book_id
                WHERE \(isbn == nil ? db.titlePart("s.title_key") : "s.isbn13") = ? AND s.sha256 <> ?
                  AND b.status = 'verified'
                ORDER BY s.seen_at, s.book_id
                """, [isbn ?? "title:\(key)|", photo])
            var works: [Int64: LibraryWork] = [:]
            var order: [Int64] = []
            for row in rows {
                let id: Int64 = try row.required("id", of: "book")
                let shelf = row.string("shelf") ?? ""
                if works[id] == nil {
                    order.append(id)
                    let match = row.string("match_key").map { key in
                        BookMatch(
                            source: row.string("match_source") ?? "", key: key, score: row.double("match_score") ?? 0,
                            year: row.int("match_year").map(Int.init))
                    }
                    works[id] = LibraryWork(
                        key: row.string("work_key") ?? "", title: row.string("title") ?? "",
                        author: row.string("author"), isbn13: row.string("isbn13"),
                        isbn10: row.string("isbn10"), match: match, shelves: [], lastShelf: shelf)
                }
                works[id]?.shelves.insert(shelf)
                works[id]?.lastShelf = shelf
                if let isbn = row.string("isbn13") {
                    works[id]?.isbn13 = isbn; works[id]?.isbn10 = row.string("isbn10")
                }
            }
            if !order.isEmpty { found[key] = order.compactMap { works[$0] } }
        }
        return found
    }

    /// Which of `isbns` the library's verified works were seen as: of a work's editions, the one a person already has
    /// (`Enricher`, "prefer the edition already in the library"). One probe of the index `book_sighting_isbn` per
    /// ISBN, so it costs the editions asked about, not the library.
    package func heldISBNs(among isbns: Set<String>) throws -> Set<String> {
        guard !isbns.isEmpty else { return [] }
        let asked = isbns.sorted()
        let placeholders = Array(repeating: "?", count: asked.count).joined(separator: ",")
        return try read { db in
            Set(
                try db.query(
                    """
                    SELECT DISTINCT s.isbn13 FROM book_sighting s JOIN book b ON b.id = s.book_id
                    WHERE s.isbn13 IN (\(placeholders)) AND b.status = 'verified'
                    """, asked
                ).compactMap { $0.string("isbn13") })
        }
    }
}
