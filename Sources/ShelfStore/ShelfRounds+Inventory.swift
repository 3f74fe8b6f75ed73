import Foundation
import ShelfCore

/// What the shelves hold, read from the sightings: the works on a shelf and their order, where each work stood last,
/// and the marks of works not seen.
extension ShelfRounds {
    /// A work on a shelf: the latest photo that saw it there.
    struct Placed {
        var bookID: Int64
        var lastSeen: Double
        var sha256: String
        var photo: String
        var box: Box?
    }

    /// The works on `shelf` as the photos that arrived before `before` (all, when nil) place them.
    static func inventory(_ db: any DatabaseConnection, shelf: String, before: Double? = nil) throws -> [Int64: Placed]
    {
        let cutoff = before ?? Date.distantFuture.timeIntervalSince1970
        var placed: [Int64: Placed] = [:]
        for row in try db.query(
            """
            SELECT s.book_id, s.sha256, s.box, p.first_seen, p.relative_path FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256
            WHERE s.shelf = ? AND s.status = 'verified' AND p.first_seen < ?
            """, [shelf, cutoff])
        {
            let id: Int64 = try row.required("book_id", of: "book_sighting")
            let at: Double = try row.required("first_seen", of: "photo")
            let photo = row.string("relative_path") ?? ""
            // The latest photo that saw it places it.
            if let known = placed[id], (known.lastSeen, known.photo) >= (at, photo) { continue }
            placed[id] = Placed(
                bookID: id, lastSeen: at, sha256: try row.required("sha256", of: "book_sighting"), photo: photo,
                box: Self.box(row.string("box")))
        }
        // Seen on another shelf since: it stands there now.
        let elsewhere = try latestSightings(db, of: Array(placed.keys), until: cutoff, besides: shelf)
        for (id, seen) in elsewhere.times where seen > placed[id]?.lastSeen ?? .infinity { placed[id] = nil }
        // Said to be gone since it was last seen here.
        for row in try db.query(
            "SELECT book_id, since FROM shelf_mark WHERE shelf = ? AND kind = ?", [shelf, ShelfMark.Kind.gone])
        {
            let id: Int64 = try row.required("book_id", of: "shelf_mark")
            if let work = placed[id], try row.required("since", of: "shelf_mark") >= work.lastSeen { placed[id] = nil }
        }
        return placed
    }

    /// The works of an inventory left to right: as the shelf's last round placed them; a work placed since (a person's
    /// decision on a reading) after the work it stands beside in its photo, or at the end.
    static func order(_ db: any DatabaseConnection, shelf: String, _ works: [Int64: Placed]) throws -> [Int64] {
        var positions: [Int64: Int] = [:]
        for row in try db.query("SELECT book_id, position FROM shelf_place WHERE shelf = ?", [shelf]) {
            let id: Int64 = try row.required("book_id", of: "shelf_place")
            if works[id] != nil { positions[id] = Int(try row.required("position", of: "shelf_place", as: Int64.self)) }
        }
        var result = positions.keys.sorted { positions[$0]! < positions[$1]! }
        let unplaced = works.values.filter { positions[$0.bookID] == nil }
        for (sha, group) in Dictionary(grouping: unplaced, by: \.sha256).sorted(by: { $0.key < $1.key }) {
            let inPhoto = try db.query("SELECT book_id, box FROM book_sighting WHERE sha256 = ?", [sha])
                .map { row in
                    (
                        try row.required("book_id", of: "book_sighting", as: Int64.self),
                        Self.box(row.string("box"))?.midX ?? 2
                    )
                }
                .sorted { $0.1 < $1.1 }.map(\.0)
            let newHere = Set(group.map(\.bookID))
            var anchor: Int64?
            var leading: [Int64] = [] // left of every placed work of the photo: before the first of them
            for work in inPhoto {
                if newHere.contains(work) {
                    if let at = anchor.flatMap({ result.firstIndex(of: $0) }) {
                        result.insert(work, at: at + 1)
                        anchor = work
                    } else {
                        leading.append(work)
                    }
                } else if positions[work] != nil {
                    if anchor == nil, !leading.isEmpty, let at = result.firstIndex(of: work) {
                        result.insert(contentsOf: leading, at: at)
                        leading = []
                    }
                    anchor = work
                }
            }
            result.append(contentsOf: leading)
            for work in group.map(\.bookID).sorted() where !result.contains(work) { result.append(work) }
        }
        return result
    }

    /// Per work, the shelf of its latest verified sighting in a photo that arrived in [since, until), but `besides`.
    static func latestShelves(
        _ db: any DatabaseConnection, of works: [Int64], since: Double = 0,
        until: Double = Date.distantFuture.timeIntervalSince1970,
        besides: String?
    ) throws -> [Int64: String] {
        try latestSightings(db, of: works, since: since, until: until, besides: besides).shelves
    }

    /// The same, with the arrival of the photo that saw each there.
    static func latestSightings(
        _ db: any DatabaseConnection, of works: [Int64], since: Double = 0, until: Double,
        besides: String?
    ) throws -> (shelves: [Int64: String], times: [Int64: Double]) {
        var latest = LatestShelves()
        for part in SQL.parts(of: works) {
            try latest.add(
                db.query(
                    """
                    SELECT s.book_id, s.shelf, p.first_seen FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256
                    WHERE s.book_id IN (\(SQL.placeholders(part.count))) AND s.status = 'verified' AND s.shelf IS NOT NULL
                      AND s.shelf IS DISTINCT FROM ? AND p.first_seen >= ? AND p.first_seen < ?
                    """, part + [besides, since, until]))
        }
        return (latest.shelves, latest.times)
    }

    /// The shelf each of these works (every work, when nil) stands on: that of its latest verified sighting.
    static func currentShelves(_ db: any DatabaseConnection, among works: [Int64]?) throws -> [Int64: String] {
        if let works { return try latestShelves(db, of: works, besides: nil) }
        var latest = LatestShelves()
        try latest.add(
            db.query(
                """
                SELECT s.book_id, s.shelf, p.first_seen FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256
                WHERE s.status = 'verified' AND s.shelf IS NOT NULL
                """))
        return latest.shelves
    }

    /// Per work, the shelf of the latest of the sightings added (rows of `book_id`, `shelf`, `first_seen`).
    struct LatestShelves {
        var shelves: [Int64: String] = [:]
        var times: [Int64: Double] = [:]

        mutating func add(_ rows: [Row]) throws(StoreError) {
            for row in rows {
                let id: Int64 = try row.required("book_id", of: "book_sighting")
                let at: Double = try row.required("first_seen", of: "photo")
                if at > times[id] ?? -.infinity {
                    times[id] = at
                    shelves[id] = try row.required("shelf", of: "book_sighting")
                }
            }
        }
    }

    /// The marks of these works (of every work, when nil) that still hold, as library.json says them: a mark is void
    /// once a photo that arrived after it saw the work.
    static func marks(_ db: any DatabaseConnection, of works: [Int64]?) throws -> [Int64: ShelfMark] {
        let recorded = try recordedMarks(db, of: works)
        let seen = try lastSeen(db, of: Array(recorded.keys))
        return recorded.filter { $0.value.holds(lastSeen: seen[$0.key]) }
    }

    /// The arrival of the latest photo that saw each of these works, on any shelf.
    static func lastSeen(_ db: any DatabaseConnection, of works: [Int64]) throws -> [Int64: Double] {
        guard !works.isEmpty else { return [:] }
        return try latestSightings(db, of: works, until: Date.distantFuture.timeIntervalSince1970, besides: nil).times
    }

    /// The marks of these works (of every work, when nil) as recorded, void or not (a round that sees a work clears
    /// them).
    static func recordedMarks(_ db: any DatabaseConnection, of works: [Int64]?) throws -> [Int64: ShelfMark] {
        let rows =
            try works.map { works in
                try SQL.parts(of: works).flatMap { part in
                    try db.query("SELECT * FROM shelf_mark WHERE book_id IN (\(SQL.placeholders(part.count)))", part)
                }
            } ?? db.query("SELECT * FROM shelf_mark")
        var marks: [Int64: ShelfMark] = [:]
        for row in rows {
            marks[try row.required("book_id", of: "shelf_mark")] = ShelfMark(
                kind: try row.required("kind", of: "shelf_mark"), shelf: row.string("shelf") ?? "",
                since: try row.required("since", of: "shelf_mark"), name: row.string("name"))
        }
        return marks
    }

    /// The keys a candidate may name one of these works by.
    static func keys(_ db: any DatabaseConnection, of works: [Int64]) throws -> ShelfRoundRule.WorkKeys {
        var keys = ShelfRoundRule.WorkKeys()
        for part in SQL.parts(of: works) {
            let list = SQL.placeholders(part.count)
            for row in try db.query("SELECT id, work_key FROM book WHERE id IN (\(list))", part) {
                keys.byKey[try row.required("work_key", of: "book")] = try row.required("id", of: "book")
            }
            for row in try db.query(
                "SELECT DISTINCT book_id, match_key, isbn13 FROM book_sighting WHERE book_id IN (\(list))", part)
            {
                let id: Int64 = try row.required("book_id", of: "book_sighting")
                if let key = row.string("match_key") { keys.byKey[key] = id }
                if let isbn = row.string("isbn13") { keys.byKey[LibraryWork.isbnKey(isbn)] = id }
            }
        }
        return keys
    }

    static func box(_ json: String?) -> Box? {
        json.flatMap { try? JSONDecoder().decode(Box.self, from: Data($0.utf8)) }
    }

    static func firstCandidate(_ reading: String) -> CatalogueRecord? {
        (try? JSONDecoder().decode(Book.self, from: Data(reading.utf8)))?.candidates?.first?.record
    }
}
