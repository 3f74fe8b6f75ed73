import Foundation
import ShelfCore

/// Shelves as places (docs/library.md, "Shelves"): a concern of the store with a type of its own over the shared database
/// (`Store.shelves`).
///
/// A shelf is the sub-folder of incoming/ its photos arrive in. A work is on the shelf of its latest verified
/// sighting, by the arrival of the photo that saw it (a photo at the top of incoming/ is no place), unless a person
/// said it is gone since. So the inventory is read from the sightings, as they stand after every rescan and decision;
/// what is stored is only what the sightings cannot say: the shelf's order as its last round saw it (`shelf_place`),
/// what is known of a work not seen (`shelf_mark`: missing, lent, gone; void once a later photo sees it), and each
/// round's changes (`shelf_change`).
///
/// A round is the photos of one shelf that arrived within the quiet time of each other; it joins them at ingest
/// (`join`, in the ingest's transaction). It closes once quiet (or when a person closes it) and all its photos are
/// read: it is then compared with the inventory before it (`close`), which costs what the round and the shelf hold.
/// The comparison is `ShelfRoundRule`'s (ShelfCore): this type reads what the rule needs and writes what it decides.
package struct ShelfRounds: StoreConcern {
    let database: Store

    /// `[shelves] round_minutes`' default: people photograph a bookcase in several shots within half an hour.
    package static let defaultQuiet: TimeInterval = 30 * 60

    // MARK: Rounds

    /// At ingest, in its transaction: each new photo in a shelf's folder joins the shelf's open round, or opens one
    /// when the shelf has been quiet for `quiet` (the round before is then due to close).
    static func join(
        _ db: any DatabaseConnection, photos: [(sha256: String, relativePath: String)], quiet: TimeInterval,
        now: Date
    ) throws(StoreError) {
        var byShelf: [String: [String]] = [:]
        for photo in photos {
            if let shelf = ReviewDocument.Photo.shelf(of: photo.relativePath) {
                byShelf[shelf, default: []].append(photo.sha256)
            }
        }
        for (shelf, shas) in byShelf.sorted(by: { $0.key < $1.key }) {
            let open = try db.queryOne(
                """
                SELECT id, last_photo_at FROM shelf_round WHERE shelf = ? AND closed_at IS NULL AND ends_at IS NULL
                ORDER BY id DESC LIMIT 1
                """, [shelf])
            let round: Int64
            if let open, let id = open.int("id"), let last = open.double("last_photo_at"),
                now.timeIntervalSince1970 - last < quiet
            {
                round = id
                try db.execute(
                    """
                    UPDATE shelf_round SET last_photo_at = CASE WHEN last_photo_at > ? THEN last_photo_at ELSE ? END,
                        photos = photos + ? WHERE id = ?
                    """, [now, now, shas.count, id])
            } else {
                if let id = open?.int("id") {
                    try db.execute("UPDATE shelf_round SET ends_at = last_photo_at + ? WHERE id = ?", [quiet, id])
                }
                round = try db.insert(
                    "INSERT INTO shelf_round (shelf, opened_at, last_photo_at, photos) VALUES (?, ?, ?, ?)",
                    [shelf, now, now, shas.count])
            }
            try db.execute(
                "UPDATE photo SET round_id = ? WHERE sha256 IN (\(SQL.placeholders(shas.count)))", [round] + shas)
        }
    }

    /// Closes every round that is quiet (or was closed by a person) and whose photos are all read. Returns what the
    /// closing changed of the files for people (works now missing, back, or moved). Costs one statement when none is due.
    package func closeDue(quiet: TimeInterval = defaultQuiet, now: Date) throws -> FilesChange {
        let due = try database.readStatement { db in try Self.dueRounds(db, quiet: quiet, now: now) }
        guard !due.isEmpty else { return FilesChange() }
        return try database.write { db in
            var change = FilesChange()
            for round in try Self.dueRounds(db, quiet: quiet, now: now) {
                change.works.formUnion(try Self.close(db, round: round, now: now))
            }
            return change
        }
    }

    /// `shelfd shelf close NAME`: the shelf's open round ends now, and is compared at once if its photos are read.
    package func close(shelf: String, quiet: TimeInterval = defaultQuiet, now: Date) throws -> (
        RoundClosing, FilesChange
    ) {
        try database.write { db in
            guard
                let open = try db.queryOne(
                    "SELECT id FROM shelf_round WHERE shelf = ? AND closed_at IS NULL ORDER BY id DESC LIMIT 1",
                    [shelf])?.int("id")
            else { return (.nothingOpen, FilesChange()) }
            try db.execute(
                "UPDATE shelf_round SET ends_at = ? WHERE shelf = ? AND closed_at IS NULL AND (ends_at IS NULL OR ends_at > ?)",
                [now, shelf, now])
            var change = FilesChange()
            for round in try Self.dueRounds(db, quiet: quiet, now: now) {
                change.works.formUnion(try Self.close(db, round: round, now: now))
            }
            if let unread = try db.queryOne(
                """
                SELECT COUNT(*) AS n FROM photo p WHERE p.round_id = ? AND EXISTS (
                    SELECT 1 FROM job j WHERE j.sha256 = p.sha256 AND j.state IN ('pending', 'leased', 'failed_retryable'))
                """, [open])?.int("n"), unread > 0
            {
                return (.waiting(photos: Int(unread)), change)
            }
            return (.closed(try Self.changes(db, round: open)), change)
        }
    }

    /// Open rounds past their end whose photos are all read, oldest first.
    static func dueRounds(_ db: any DatabaseConnection, quiet: TimeInterval, now: Date) throws(StoreError) -> [Int64] {
        try db.query(
            """
            SELECT r.id FROM shelf_round r
            WHERE r.closed_at IS NULL AND (CASE WHEN r.ends_at IS NULL THEN r.last_photo_at + ? ELSE r.ends_at END) <= ?
              AND NOT EXISTS (SELECT 1 FROM photo p JOIN job j ON j.sha256 = p.sha256
                              WHERE p.round_id = r.id AND j.state IN ('pending', 'leased', 'failed_retryable'))
            ORDER BY r.id
            """, [quiet, now]
        ).map { row throws(StoreError) in try row.required("id", of: "shelf_round") }
    }

    /// Compares a round with the shelf's inventory before it (`ShelfRoundRule`), records its changes and the shelf's
    /// new order, and closes it. Returns the works whose entry changed (now missing, back from a loan, moved).
    static func close(_ db: any DatabaseConnection, round id: Int64, now: Date) throws -> Set<Int64> {
        guard
            let round = try db.queryOne(
                "SELECT shelf, opened_at FROM shelf_round WHERE id = ? AND closed_at IS NULL", [id])
        else { return [] }
        let shelf: String = try round.required("shelf", of: "shelf_round")
        let opened: Double = try round.required("opened_at", of: "shelf_round")
        let rule = try Self.rule(db, round: id, shelf: shelf, opened: opened)
        let outcome = rule.outcome(at: now)
        try write(outcome, db, round: id, shelf: shelf, opened: opened)
        try db.execute(
            "UPDATE shelf_round SET closed_at = ?, books = ?, unread = ? WHERE id = ?",
            [now, outcome.order.count, rule.unreadPhotos, id])
        return outcome.changedWorks
    }

    /// What the rule reads of a round and of its shelf before it.
    static func rule(_ db: any DatabaseConnection, round id: Int64, shelf: String, opened: Double) throws
        -> ShelfRoundRule
    {
        // The round's photos in name order, each one's sightings.
        let photos = try db.query(
            """
            SELECT p.sha256, p.relative_path,
                   (SELECT j.state FROM job j WHERE j.sha256 = p.sha256 ORDER BY j.id DESC LIMIT 1) AS state
            FROM photo p WHERE p.round_id = ? ORDER BY p.relative_path
            """, [id])
        let shas = try photos.map { try $0.required("sha256", of: "photo", as: String.self) }
        let unread = photos.filter { row in
            let state = row.string("state").flatMap(JobState.init(rawValue:))
            return state != .done && state != .review
        }.count
        var seenIn: [String: [ShelfRoundRule.Sighting]] = [:]
        for part in SQL.parts(of: shas) {
            for row in try db.query(
                """
                SELECT s.book_id, s.sha256, s.box, s.status, r.reading FROM book_sighting s
                LEFT JOIN review_item r ON r.sha256 = s.sha256 AND r.book_id = s.book_id
                WHERE s.sha256 IN (\(SQL.placeholders(part.count)))
                """, part)
            {
                seenIn[try row.required("sha256", of: "book_sighting"), default: []].append(
                    ShelfRoundRule.Sighting(
                        bookID: try row.required("book_id", of: "book_sighting"), box: Self.box(row.string("box")),
                        isVerified: row.string("status") == Book.Status.verified.rawValue,
                        firstCandidate: row.string("reading").flatMap(Self.firstCandidate)))
            }
        }
        let inventory = try Self.inventory(db, shelf: shelf, before: opened)
        let before = try Self.order(db, shelf: shelf, inventory)
        // Works new to the shelf, if the round sees them: verified readings of works it did not hold.
        let arriving = Set(seenIn.values.joined().filter { $0.isVerified && inventory[$0.bookID] == nil }.map(\.bookID))
            .sorted()
        let marks = try recordedMarks(db, of: before + arriving)
        return ShelfRoundRule(
            shelf: shelf, before: before, photos: shas.map { seenIn[$0] ?? [] }, unreadPhotos: unread,
            keys: try keys(db, of: before),
            cameFrom: try latestShelves(db, of: arriving, until: opened, besides: nil),
            seenElsewhere: try latestShelves(db, of: before, since: opened, besides: shelf), marks: marks,
            lastSeen: try lastSeen(db, of: Array(marks.keys)))
    }

    /// Writes what the rule decided of a round: marks, history, changes and the shelf's order.
    static func write(
        _ outcome: ShelfRoundRule.Outcome, _ db: any DatabaseConnection, round id: Int64, shelf: String, opened: Double
    ) throws {
        for part in SQL.parts(of: outcome.clearedMarks) {
            try db.execute("DELETE FROM shelf_mark WHERE book_id IN (\(SQL.placeholders(part.count)))", part)
        }
        for work in outcome.newlyMissing {
            try mark(db, work, shelf: shelf, kind: .missing, name: nil, since: opened, round: id)
        }
        try LibraryRecords.recordHistory(db, outcome.history.map { ($0.bookID, $0.decision) })
        let changes = outcome.changes.map { [id, $0.bookID, $0.kind, $0.otherShelf] as [any SQLBindable] }
        for part in SQL.parts(of: changes, size: 100) {
            try db.execute(
                "INSERT INTO shelf_change (round_id, book_id, kind, other_shelf) VALUES \(SQL.rows(part.count, of: 4))",
                part.flatMap { $0 })
        }
        try db.execute("DELETE FROM shelf_place WHERE shelf = ?", [shelf])
        for part in SQL.parts(of: outcome.seen) {
            try db.execute("DELETE FROM shelf_place WHERE book_id IN (\(SQL.placeholders(part.count)))", part)
        }
        let places = outcome.order.enumerated().map { [$0.element, shelf, $0.offset + 1] as [any SQLBindable] }
        for part in SQL.parts(of: places, size: 150) {
            try db.execute(
                "INSERT INTO shelf_place (book_id, shelf, position) VALUES \(SQL.rows(part.count, of: 3))",
                part.flatMap { $0 })
        }
    }
}
