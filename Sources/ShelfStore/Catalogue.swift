import Foundation
import ShelfCore

/// One book of a file being imported into the local catalogue, before it is deduplicated.
package struct CatalogueRow: Sendable, Equatable {
    package var title: String
    package var author: String?
    package var isbn: ISBN?
    package var year: Int?
    package var tag: String?
    package var series: String?
    /// The row's own key in its file (an OpenLibrary `/books/…` or `/works/…` key).
    package var originKey: String?
    /// OpenLibrary author keys, named from the authors imported before, when `author` is nil.
    package var authorKeys: [String]

    package init(
        title: String, author: String? = nil, isbn: ISBN? = nil, year: Int? = nil, tag: String? = nil,
        series: String? = nil, originKey: String? = nil, authorKeys: [String] = []
    ) {
        self.title = title; self.author = author; self.isbn = isbn; self.year = year; self.tag = tag
        self.series = series; self.originKey = originKey; self.authorKeys = authorKeys
    }
}

/// The local catalogue: books imported from library exports and OpenLibrary dumps, searched with FTS5 (SQLite) or
/// its PostgreSQL mirror. A concern of the store with a type of its own over the shared database (`Store.catalogue`):
/// the importer and the catalogue source hold this, not `Store`.
package struct Catalogue: StoreConcern {
    let database: Store

    /// The name of the local catalogue as a source (`enrich.sources`, `match.source`).
    package static let source = "catalogue"

    package func beginImport(path: String, format: String, now: Date) throws -> Int64 {
        try database.write { db in
            return try db.insert(
                "INSERT INTO catalogue_import (path, format, started_at) VALUES (?, ?, ?)", [path, format, now])
        }
    }

    /// Records the counts and merges the full-text index: rows added one by one leave it in many small
    /// segments, and a search reads every segment (merged, a search on the library data set takes half the time).
    package func finishImport(_ id: Int64, imported: Int, duplicates: Int, skipped: Int, now: Date) throws {
        try database.write { db in
            try db.execute(
                """
                UPDATE catalogue_import SET finished_at = ?, imported = ?, duplicates = ?, skipped = ? WHERE id = ?
                """, [now, imported, duplicates, skipped, id])
            try db.execute("INSERT INTO catalogue_fts (catalogue_fts) VALUES ('optimize')")
        }
    }

    /// Rows that come from no file (a truth file's books, a benchmark's lists) as one import of their own, counted
    /// as a file's import is.
    @discardableResult
    package func importRows(_ rows: [CatalogueRow], path: String, format: String, now: Date) throws -> (
        added: Int, duplicates: Int
    ) {
        let id = try beginImport(path: path, format: format, now: now)
        let added = try addRows(rows, importID: id)
        try finishImport(id, imported: added.added, duplicates: added.duplicates, skipped: 0, now: now)
        return added
    }

    /// Adds rows in one transaction. A row is already there when an entry has its ISBN, or, for a row
    /// without one, when an entry has its folded title and surname; a row with an ISBN gives it to an entry
    /// of the same work that had none. Other editions (another ISBN) are entries of their own: a library
    /// shelves them apart, under their own call numbers.
    package func addRows(_ rows: [CatalogueRow], importID: Int64?) throws -> (added: Int, duplicates: Int) {
        try database.write { db in
            var added = 0
            for var row in rows {
                if row.author == nil, !row.authorKeys.isEmpty {
                    row.author = try Self.authorName(db, keys: row.authorKeys)
                }
                if try Self.addCatalogueRow(db, row, importID: importID) { added += 1 }
            }
            return (added, rows.count - added)
        }
    }

    private static func addCatalogueRow(_ db: any DatabaseConnection, _ row: CatalogueRow, importID: Int64?) throws
        -> Bool
    {
        let isbn13 = row.isbn?.isbn13
        let work = CatalogueRecord.workKey(title: row.title, author: row.author)
        if let isbn13, try db.queryOne("SELECT id FROM catalogue_entry WHERE isbn13 = ?", [isbn13]) != nil {
            return false
        }
        if let same = try db.queryOne(
            """
            SELECT id FROM catalogue_entry WHERE work_key = ? AND (isbn13 IS NULL OR ? IS NULL) ORDER BY id LIMIT 1
            """, [work, isbn13])
        {
            if isbn13 != nil, let id = same.int("id") {
                try db.execute(
                    "UPDATE catalogue_entry SET isbn13 = ?, isbn10 = ? WHERE id = ?", [isbn13, row.isbn?.isbn10, id])
            }
            return false
        }
        try db.execute(
            """
            INSERT INTO catalogue_entry (title, author, isbn13, isbn10, year, tag, series, origin_key, work_key,
                                         title_folded, author_folded, tag_folded, series_folded, import_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                row.title, row.author, isbn13, row.isbn?.isbn10, row.year, row.tag, row.series, row.originKey, work,
                TextNormalization.fold(row.title), TextNormalization.fold(row.author ?? ""),
                TextNormalization.fold(row.tag ?? ""), TextNormalization.fold(row.series ?? ""), importID,
            ])
        return true
    }

    /// OpenLibrary authors (key → name), for the editions and works imported after them.
    package func addAuthors(_ authors: [(key: String, name: String)]) throws {
        try database.write { db in
            for author in authors {
                try db.execute(
                    """
                    INSERT INTO catalogue_author (key, name) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET name = excluded.name
                    """, [author.key, author.name])
            }
        }
    }

    private static func authorName(_ db: any DatabaseConnection, keys: [String]) throws -> String? {
        var names: [String] = []
        for key in keys {
            if let name = try db.queryOne("SELECT name FROM catalogue_author WHERE key = ?", [key])?.string("name") {
                names.append(name)
            }
        }
        return names.isEmpty ? nil : names.joined(separator: "; ")
    }

    /// Entries whose folded title, author, call number or series contain any of the words of an FTS5
    /// query, best ranked (bm25, title first) first.
    package func search(_ match: String, limit: Int) throws -> [CatalogueRecord] {
        try database.read { db in
            try db.query(
                """
                SELECT e.id, e.title, e.author, e.isbn13, e.isbn10, e.year, e.tag, e.series
                FROM (SELECT rowid, bm25(catalogue_fts, 3.0, 2.0, 2.0, 1.0) AS rank FROM catalogue_fts
                      WHERE catalogue_fts MATCH ? ORDER BY rank LIMIT ?) AS found
                JOIN catalogue_entry e ON e.id = found.rowid
                ORDER BY found.rank
                """, [match, limit]
            ).map(Self.catalogueRecord)
        }
    }

    package func record(isbn13: String) throws -> CatalogueRecord? {
        try database.read { db in
            try db.queryOne(
                """
                SELECT id, title, author, isbn13, isbn10, year, tag, series FROM catalogue_entry WHERE isbn13 = ?
                """, [isbn13]
            ).map(Self.catalogueRecord)
        }
    }

    /// Words in more than `share` of the entries, and in more than `minimum` ("de", "la", a common class
    /// number): a search for them would rank hundreds of entries and find nothing particular. Also the
    /// number of entries they were counted among.
    package func commonWords(share: Double, minimum: Int) throws -> (words: Set<String>, entries: Int) {
        try database.read { db in
            let entries = try db.queryOne("SELECT COUNT(*) AS n FROM catalogue_entry")?.int("n") ?? 0
            let rows = try db.query(
                "SELECT term FROM catalogue_vocabulary WHERE doc > ?",
                [max(Double(entries) * share, Double(minimum))])
            return (Set(rows.compactMap { $0.string("term") }), Int(entries))
        }
    }

    /// How many entries hold each of `words` (folded; a word in none is left out): one look-up per word in the
    /// full-text index's vocabulary, so the cost is the words asked, not the catalogue's size.
    package func documentCounts(of words: Set<String>) throws -> [String: Int] {
        try database.read { db in
            var counts: [String: Int] = [:]
            let list = Array(words)
            for start in stride(from: 0, to: list.count, by: 500) {
                let chunk = Array(list[start..<min(start + 500, list.count)])
                for row in try db.query(
                    "SELECT term, doc FROM catalogue_vocabulary WHERE term IN (\(SQL.placeholders(chunk.count)))", chunk
                ) {
                    if let term = row.string("term"), let doc = row.int("doc") { counts[term] = Int(doc) }
                }
            }
            return counts
        }
    }

    /// Entries in the catalogue: cheap enough to ask before each photo, so an import made while the daemon
    /// runs is used at once.
    package func count() throws -> Int {
        try database.read { db in Int(try db.queryOne("SELECT COUNT(*) AS n FROM catalogue_entry")?.int("n") ?? 0) }
    }

    package func stats() throws -> CatalogueStats {
        try database.read { db in
            let counts = try db.queryOne(
                """
                SELECT COUNT(*) AS entries, COUNT(isbn13) AS isbn, COUNT(NULLIF(tag_folded, '')) AS tag FROM catalogue_entry
                """)
            let imports = try db.query("SELECT * FROM catalogue_import ORDER BY id").map { row in
                CatalogueStats.Import(
                    path: row.string("path") ?? "", format: row.string("format") ?? "",
                    startedAt: row.date("started_at") ?? Date(timeIntervalSince1970: 0),
                    finishedAt: row.date("finished_at"), imported: Int(row.int("imported") ?? 0),
                    duplicates: Int(row.int("duplicates") ?? 0), skipped: Int(row.int("skipped") ?? 0))
            }
            return CatalogueStats(
                entries: Int(counts?.int("entries") ?? 0), withISBN: Int(counts?.int("isbn") ?? 0),
                withTag: Int(counts?.int("tag") ?? 0), imports: imports)
        }
    }

    private static func catalogueRecord(_ row: Row) -> CatalogueRecord {
        CatalogueRecord(
            source: Catalogue.source, key: "catalogue:\(row.int("id") ?? 0)", title: row.string("title") ?? "",
            author: row.string("author"), isbn13: row.string("isbn13"), isbn10: row.string("isbn10"),
            year: row.int("year").map(Int.init), tag: row.string("tag"), series: row.string("series"))
    }
}
