import Foundation
import ShelfCore

/// The shelves as people are shown them: a shelf's inventory and last changes, every shelf's summary, the loans, and
/// where a work is.
extension ShelfRounds {
    /// A shelf's inventory in order, its rounds, and its last closed round's changes as they stand now.
    package func shelf(_ name: String) throws -> ShelfDocument? {
        try database.read { db in
            let lastRow = try db.queryOne(
                """
                SELECT * FROM shelf_round WHERE shelf = ? AND closed_at IS NOT NULL ORDER BY closed_at DESC, id DESC LIMIT 1
                """, [name])
            let openRow = try db.queryOne(
                "SELECT * FROM shelf_round WHERE shelf = ? AND closed_at IS NULL ORDER BY id DESC LIMIT 1", [name])
            let placed = try Self.inventory(db, shelf: name)
            guard lastRow != nil || openRow != nil || !placed.isEmpty else { return nil }
            let order = try Self.order(db, shelf: name, placed)
            let marks = try Self.marks(db, of: order)
            let works = try Self.works(db, order)
            let books = order.enumerated().compactMap { index, id -> ShelfDocument.Entry? in
                guard let work = works[id], let at = placed[id] else { return nil }
                let book = SeenBook(
                    work: work.key, title: work.title, author: work.author,
                    lastSeen: Date(timeIntervalSince1970: at.lastSeen), photo: at.photo, photoSHA256: at.sha256,
                    box: at.box, mark: marks[id])
                return ShelfDocument.Entry(book, position: index + 1)
            }
            let changes =
                try lastRow.flatMap { $0.int("id") }.map { try Self.changes(db, round: $0) } ?? ShelfDocument.Changes()
            return ShelfDocument(
                shelf: name, books: books, lastRound: lastRow.map(Self.round), openRound: openRow.map(Self.round),
                changes: changes)
        }
    }

    /// A closed round's changes as they stand now: a work a later photo saw, or a person answered for, is no longer
    /// missing.
    static func changes(_ db: any DatabaseConnection, round: Int64) throws -> ShelfDocument.Changes {
        let rows = try db.query(
            """
            SELECT c.kind, c.book_id, c.other_shelf, b.work_key, b.title, b.author FROM shelf_change c JOIN book b ON b.id = c.book_id
            WHERE c.round_id = ? ORDER BY c.kind, b.title, b.id
            """, [round])
        let kinds = try rows.map { row in
            (
                kind: try row.required("kind", of: "shelf_change", as: ShelfChange.Kind.self),
                id: try row.required("book_id", of: "shelf_change", as: Int64.self)
            )
        }
        let marks = try self.marks(db, of: kinds.filter { $0.kind == .missing }.map(\.id))
        var changes = ShelfDocument.Changes()
        for (row, (kind, id)) in zip(rows, kinds) {
            let key: String = try row.required("work_key", of: "book")
            let title = row.string("title") ?? "", author = row.string("author"), other = row.string("other_shelf")
            switch kind {
            case .arrived:
                changes.arrived.append(.init(work: key, title: title, author: author, isArrival: true, from: other))
            case .movedOut: changes.movedOut.append(.init(work: key, title: title, author: author, to: other))
            case .missing:
                // Missing as it stands now: not once seen or answered for since.
                if marks[id]?.kind == .missing {
                    changes.missing.append(.init(work: key, title: title, author: author))
                }
            }
        }
        return changes
    }

    /// Every shelf with a round: its inventory when its last round closed, its rounds, and what is missing or lent now.
    package func shelves() throws -> [ShelfSummary] {
        try database.read { db in
            let latest = try db.query("SELECT shelf, MAX(id) AS last FROM shelf_round GROUP BY shelf ORDER BY shelf")
            let standing = try Self.marks(db, of: nil).values
            return try latest.map { row in
                let shelf: String = try row.required("shelf", of: "shelf_round")
                let last = try db.queryOne(
                    """
                    SELECT * FROM shelf_round WHERE shelf = ? AND closed_at IS NOT NULL ORDER BY closed_at DESC, id DESC LIMIT 1
                    """, [shelf])
                let open = try db.queryOne(
                    "SELECT * FROM shelf_round WHERE shelf = ? AND closed_at IS NULL ORDER BY id DESC LIMIT 1", [shelf])
                return ShelfSummary(
                    shelf: shelf, books: last?.int("books").map(Int.init), lastRound: last.map(Self.round),
                    openRound: open.map(Self.round),
                    missing: standing.filter { $0.shelf == shelf && $0.kind == .missing }.count,
                    lent: standing.filter { $0.shelf == shelf && $0.kind == .lent }.count)
            }
        }
    }

    /// The books lent now, on every shelf, by shelf then title.
    package func lent() throws -> [ShelfLoan] {
        try database.read { db in
            let standing = try Self.marks(db, of: nil).filter { $0.value.kind == .lent }
            let works = try Self.works(db, Array(standing.keys))
            return standing.compactMap { id, mark -> ShelfLoan? in
                guard let work = works[id] else { return nil }
                return ShelfLoan(
                    work: work.key, title: work.title, author: work.author, shelf: mark.shelf, to: mark.name ?? "",
                    since: Date(timeIntervalSince1970: mark.since))
            }.sorted { ($0.shelf, $0.title) < ($1.shelf, $1.title) }
        }
    }

    /// Where each of these works is: the shelf of its latest sighting (a verified one if it has any), its place
    /// there as the shelf's rounds order it, and that sighting's photo and box, in the order of `keys`. A key no work
    /// has, or a work never seen in a photo, is nowhere. A few statements for any number of works (a search's whole
    /// page), then what those shelves hold.
    package func whereabouts(of keys: [String]) throws -> [BookWhereabouts] {
        try database.read { db in
            var works: [String: (id: Int64, title: String, author: String?)] = [:]
            for part in SQL.parts(of: keys) {
                for row in try db.query(
                    "SELECT id, work_key, title, author FROM book WHERE work_key IN (\(SQL.placeholders(part.count)))",
                    part)
                {
                    works[try row.required("work_key", of: "book")] = (
                        try row.required("id", of: "book"), row.string("title") ?? "", row.string("author")
                    )
                }
            }
            let ids = works.values.map(\.id)
            let latest = try Self.sightingsShown(db, of: ids)
            let marks = try Self.marks(db, of: ids)
            var orders: [String: [Int64]] = [:]
            var found: [BookWhereabouts] = []
            for key in keys {
                guard let work = works[key], let seen = latest[work.id] else { continue }
                let shelf = seen.string("shelf") ?? ""
                var position: Int?
                if !shelf.isEmpty {
                    if orders[shelf] == nil {
                        orders[shelf] = try Self.order(db, shelf: shelf, Self.inventory(db, shelf: shelf))
                    }
                    position = orders[shelf]?.firstIndex(of: work.id).map { $0 + 1 }
                }
                let book = SeenBook(
                    work: key, title: work.title, author: work.author,
                    lastSeen: seen.date("first_seen") ?? .distantPast, photo: seen.string("relative_path") ?? "",
                    photoSHA256: seen.string("sha256") ?? "", box: Self.box(seen.string("box")), mark: marks[work.id])
                found.append(BookWhereabouts(book, shelf: shelf, position: position))
            }
            return found
        }
    }

    /// The sighting each work is shown at: its latest, a verified one if it has any, with its photo's arrival and path.
    static func sightingsShown(_ db: any DatabaseConnection, of works: [Int64]) throws -> [Int64: Row] {
        var latest: [Int64: Row] = [:]
        for part in SQL.parts(of: works) {
            for row in try db.query(
                """
                SELECT * FROM (
                    SELECT s.book_id, s.sha256, s.box, s.shelf, p.first_seen, p.relative_path,
                           ROW_NUMBER() OVER (
                               PARTITION BY s.book_id
                               ORDER BY CASE WHEN s.status = 'verified' THEN 0 ELSE 1 END, p.first_seen DESC,
                                        p.relative_path DESC) AS recent
                    FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256
                    WHERE s.book_id IN (\(SQL.placeholders(part.count)))
                ) ranked WHERE recent = 1
                """, part)
            {
                latest[try row.required("book_id", of: "book_sighting")] = row
            }
        }
        return latest
    }

    struct WorkName { var key: String; var title: String; var author: String? }

    static func works(_ db: any DatabaseConnection, _ ids: [Int64]) throws -> [Int64: WorkName] {
        var works: [Int64: WorkName] = [:]
        for part in SQL.parts(of: ids) {
            for row in try db.query(
                "SELECT id, work_key, title, author FROM book WHERE id IN (\(SQL.placeholders(part.count)))", part)
            {
                works[try row.required("id", of: "book")] = WorkName(
                    key: try row.required("work_key", of: "book"), title: row.string("title") ?? "",
                    author: row.string("author"))
            }
        }
        return works
    }
    static func round(_ row: Row) -> ShelfDocument.Round {
        ShelfDocument.Round(
            openedAt: row.date("opened_at") ?? .distantPast, lastPhotoAt: row.date("last_photo_at") ?? .distantPast,
            closedAt: row.date("closed_at"), photos: Int(row.int("photos") ?? 0), unread: Int(row.int("unread") ?? 0))
    }
}
