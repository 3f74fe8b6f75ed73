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
        ).compactMap { $0.int("id") }
    }

    /// Compares a round with the shelf's inventory before it, records its changes and the shelf's new order, and
    /// closes it. Returns the works whose entry changed (now missing, back from a loan, moved).
    static func close(_ db: any DatabaseConnection, round id: Int64, now: Date) throws -> Set<Int64> {
        guard
            let round = try db.queryOne(
                "SELECT shelf, opened_at FROM shelf_round WHERE id = ? AND closed_at IS NULL", [id]),
            let shelf = round.string("shelf"), let opened = round.double("opened_at")
        else { return [] }

        // The round's photos in name order, each one's sightings left to right.
        let photos = try db.query(
            """
            SELECT p.sha256, p.relative_path,
                   (SELECT j.state FROM job j WHERE j.sha256 = p.sha256 ORDER BY j.id DESC LIMIT 1) AS state
            FROM photo p WHERE p.round_id = ? ORDER BY p.relative_path
            """, [id])
        let shas = photos.compactMap { $0.string("sha256") }
        let unread = photos.filter { !["done", "review"].contains($0.string("state") ?? "") }.count
        var seenIn: [String: [SeenBook]] = [:]
        for part in SQL.parts(of: shas) {
            for row in try db.query(
                """
                SELECT s.book_id, s.sha256, s.box, s.status, r.reading FROM book_sighting s
                LEFT JOIN review_item r ON r.sha256 = s.sha256 AND r.book_id = s.book_id
                WHERE s.sha256 IN (\(SQL.placeholders(part.count)))
                """, part)
            {
                guard let book = row.int("book_id"), let sha = row.string("sha256") else { continue }
                seenIn[sha, default: []].append(
                    SeenBook(
                        bookID: book, box: Self.box(row.string("box")),
                        verified: row.string("status") == Book.Status.verified.rawValue,
                        firstCandidate: row.string("reading").flatMap(Self.firstCandidate)))
            }
        }
        let before = try inventory(db, shelf: shelf, before: opened)
        let beforeOrder = try order(db, shelf: shelf, before)
        let keys = try Self.keys(db, of: Array(before.keys))

        // What the round saw, left to right: verified readings, and a reading left for review as its first candidate
        // when that candidate is a work of this shelf.
        var sequence: [Int64] = []
        var seen = Set<Int64>()
        for sha in shas {
            for book in (seenIn[sha] ?? []).sorted(by: { ($0.box?.midX ?? 2) < ($1.box?.midX ?? 2) }) {
                let work: Int64?
                if before[book.bookID] != nil {
                    work = book.bookID
                } else if book.verified {
                    work = book.bookID
                } else {
                    work = book.firstCandidate.flatMap { keys.work(for: $0) }
                }
                if let work, seen.insert(work).inserted { sequence.append(work) }
            }
        }

        let arrivedIDs = sequence.filter { before[$0] == nil }
        let cameFrom = try latestShelves(db, of: arrivedIDs, until: opened, besides: nil)
        let unseen = beforeOrder.filter { !seen.contains($0) }
        let wentTo = try latestShelves(db, of: unseen, since: opened, besides: shelf)
        let recorded = try self.recordedMarks(db, of: Array(before.keys) + arrivedIDs)
        let marks = try valid(db, recorded)
        let lent = Set(unseen.filter { marks[$0]?.kind == "lent" })

        // A work not seen is missing only where the round saw its place: the works on both sides of it (or the
        // shelf's end, when the photo shows room beyond the last book) were seen. Lent and moved books are not there.
        var missing: [Int64] = []
        if unread == 0 {
            let standing = beforeOrder.filter { wentTo[$0] == nil && !lent.contains($0) }
            let ends = Self.endsShown(first: shas.first.flatMap { seenIn[$0] }, last: shas.last.flatMap { seenIn[$0] })
            var index = 0
            while index < standing.count {
                guard !seen.contains(standing[index]) else { index += 1; continue }
                var end = index
                while end + 1 < standing.count && !seen.contains(standing[end + 1]) { end += 1 }
                let leftSeen = index == 0 ? ends.left : true
                let rightSeen = end == standing.count - 1 ? ends.right : true
                if leftSeen && rightSeen { missing.append(contentsOf: standing[index...end]) }
                index = end + 1
            }
        }

        // Marks: a work seen (here or on another shelf) is no longer missing, lent or gone; a loan it ends is a step
        // of its history.
        var touched = Set<Int64>()
        var steps: [(bookID: Int64, step: LibraryDocument.Decision)] = []
        let seenMarked =
            sequence.filter { recorded[$0] != nil } + unseen.filter { wentTo[$0] != nil && recorded[$0] != nil }
        for work in seenMarked {
            if recorded[work]?.kind == "lent" {
                steps.append(
                    (
                        work,
                        LibraryDocument.Decision(
                            action: "returned", by: "shelfd", at: now,
                            detail: "seen again on \(wentTo[work] ?? shelf)")
                    ))
            }
            touched.insert(work)
        }
        for part in SQL.parts(of: seenMarked) {
            try db.execute("DELETE FROM shelf_mark WHERE book_id IN (\(SQL.placeholders(part.count)))", part)
        }
        let newlyMissing = missing.filter { marks[$0]?.kind != "missing" }
        for work in newlyMissing {
            try db.execute(
                """
                INSERT INTO shelf_mark (book_id, shelf, kind, since, name, round_id) VALUES (?, ?, 'missing', ?, NULL, ?)
                ON CONFLICT (book_id) DO UPDATE SET shelf = excluded.shelf, kind = excluded.kind, since = excluded.since,
                    name = excluded.name, round_id = excluded.round_id
                """, [work, shelf, opened, id])
            steps.append(
                (
                    work,
                    LibraryDocument.Decision(
                        action: "missing", by: "shelfd", at: now,
                        detail: "not seen where it stood on \(shelf)")
                ))
            touched.insert(work)
        }
        try LibraryRecords.recordHistory(db, steps)

        // The round's changes.
        var changes: [[any SQLBindable]] = arrivedIDs.map { [id, $0, "arrived", cameFrom[$0]] }
        changes += missing.map { [id, $0, "missing", String?.none] }
        changes += unseen.compactMap { work in wentTo[work].map { [id, work, "moved_out", $0] } }
        for part in SQL.parts(of: changes, size: 100) {
            try db.execute(
                "INSERT INTO shelf_change (round_id, book_id, kind, other_shelf) VALUES \(SQL.rows(part.count, of: 4))",
                part.flatMap { $0 })
        }
        touched.formUnion(unseen.filter { wentTo[$0] != nil })

        // The shelf's order: the round's, with the works it did not see kept after the neighbour they stood beside.
        let order = Self.merge(beforeOrder.filter { wentTo[$0] == nil }, with: sequence)
        try db.execute("DELETE FROM shelf_place WHERE shelf = ?", [shelf])
        for part in SQL.parts(of: sequence) {
            try db.execute("DELETE FROM shelf_place WHERE book_id IN (\(SQL.placeholders(part.count)))", part)
        }
        let places = order.enumerated().map { [$0.element, shelf, $0.offset + 1] as [any SQLBindable] }
        for part in SQL.parts(of: places, size: 150) {
            try db.execute(
                "INSERT INTO shelf_place (book_id, shelf, position) VALUES \(SQL.rows(part.count, of: 3))",
                part.flatMap { $0 })
        }
        try db.execute(
            "UPDATE shelf_round SET closed_at = ?, books = ?, unread = ? WHERE id = ?", [now, order.count, unread, id])
        return touched
    }

    /// `before`, with each work of `sequence` where the round saw it: a work of `before` the round did not see follows
    /// the work it stood after (or leads, when it stood first).
    static func merge(_ before: [Int64], with sequence: [Int64]) -> [Int64] {
        var result = sequence
        let inRound = Set(sequence)
        var anchor: Int64?
        for work in before {
            if inRound.contains(work) { anchor = work; continue }
            let at = anchor.flatMap { result.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
            result.insert(work, at: at)
            anchor = work
        }
        return result
    }

    /// Whether the round's first photo shows room left of its first book, and its last photo right of its last
    /// book: more than a book's width (the median of the photo's boxes). A photo cut at a book says nothing of what
    /// stands beyond it.
    static func endsShown(first: [SeenBook]?, last: [SeenBook]?) -> (left: Bool, right: Bool) {
        func room(_ books: [SeenBook]?, left: Bool) -> Bool {
            let boxes = (books ?? []).compactMap(\.box)
            guard !boxes.isEmpty else { return false }
            let widths = boxes.map { $0.x2 - $0.x1 }.sorted()
            let width = widths[widths.count / 2]
            return left ? boxes.map(\.x1).min()! > width : 1 - boxes.map(\.x2).max()! > width
        }
        return (room(first, left: true), room(last, left: false))
    }

    // MARK: Reading

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
            guard let id = row.int("book_id"), let at = row.double("first_seen"), let sha = row.string("sha256") else {
                continue
            }
            let photo = row.string("relative_path") ?? ""
            if let known = placed[id], (known.lastSeen, known.photo) >= (at, photo) { continue }
            placed[id] = Placed(bookID: id, lastSeen: at, sha256: sha, photo: photo, box: Self.box(row.string("box")))
        }
        // Seen on another shelf since: it stands there now.
        let elsewhere = try latestSightings(db, of: Array(placed.keys), until: cutoff, besides: shelf)
        for (id, seen) in elsewhere.times where seen > placed[id]?.lastSeen ?? .infinity { placed[id] = nil }
        // Said to be gone since it was last seen here.
        for row in try db.query("SELECT book_id, since FROM shelf_mark WHERE shelf = ? AND kind = 'gone'", [shelf]) {
            if let id = row.int("book_id"), let since = row.double("since"), let work = placed[id],
                since >= work.lastSeen
            {
                placed[id] = nil
            }
        }
        return placed
    }

    /// The works of an inventory left to right: as the shelf's last round placed them; a work placed since (a person's
    /// decision on a reading) after the work it stands beside in its photo, or at the end.
    static func order(_ db: any DatabaseConnection, shelf: String, _ works: [Int64: Placed]) throws -> [Int64] {
        var positions: [Int64: Int] = [:]
        for row in try db.query("SELECT book_id, position FROM shelf_place WHERE shelf = ?", [shelf]) {
            if let id = row.int("book_id"), let position = row.int("position"), works[id] != nil {
                positions[id] = Int(position)
            }
        }
        var result = positions.keys.sorted { positions[$0]! < positions[$1]! }
        let unplaced = works.values.filter { positions[$0.bookID] == nil }
        for (sha, group) in Dictionary(grouping: unplaced, by: \.sha256).sorted(by: { $0.key < $1.key }) {
            let inPhoto = try db.query("SELECT book_id, box FROM book_sighting WHERE sha256 = ?", [sha])
                .compactMap { row in row.int("book_id").map { ($0, Self.box(row.string("box"))?.midX ?? 2) } }
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
        var shelves: [Int64: String] = [:], times: [Int64: Double] = [:]
        for part in SQL.parts(of: works) {
            for row in try db.query(
                """
                SELECT s.book_id, s.shelf, p.first_seen FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256
                WHERE s.book_id IN (\(SQL.placeholders(part.count))) AND s.status = 'verified' AND s.shelf IS NOT NULL
                  AND s.shelf IS DISTINCT FROM ? AND p.first_seen >= ? AND p.first_seen < ?
                """, part + [besides, since, until])
            {
                guard let id = row.int("book_id"), let shelf = row.string("shelf"), let at = row.double("first_seen")
                else { continue }
                if at > times[id] ?? -.infinity { times[id] = at; shelves[id] = shelf }
            }
        }
        return (shelves, times)
    }

    struct Mark {
        var kind: String
        var shelf: String
        var since: Double
        var name: String?

        /// What library.json, `shelf show` and `library find` say of the work.
        var missingSince: Date? { kind == "missing" ? Date(timeIntervalSince1970: since) : nil }
        var lentTo: String? { kind == "lent" ? name : nil }
        var lentSince: Date? { kind == "lent" ? Date(timeIntervalSince1970: since) : nil }
    }

    /// The marks of these works (of every work, when nil) that still hold, as library.json says them: a mark is void
    /// once a photo that arrived after it saw the work.
    static func marks(_ db: any DatabaseConnection, of works: [Int64]?) throws -> [Int64: Mark] {
        try valid(db, recordedMarks(db, of: works))
    }

    /// The shelf each of these works (every work, when nil) stands on: that of its latest verified sighting.
    static func currentShelves(_ db: any DatabaseConnection, among works: [Int64]?) throws -> [Int64: String] {
        if let works { return try latestShelves(db, of: works, besides: nil) }
        var latest: [Int64: (shelf: String, at: Double)] = [:]
        for row in try db.query(
            """
            SELECT s.book_id, s.shelf, p.first_seen FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256
            WHERE s.status = 'verified' AND s.shelf IS NOT NULL
            """)
        {
            guard let id = row.int("book_id"), let shelf = row.string("shelf"), let at = row.double("first_seen") else {
                continue
            }
            if at > latest[id]?.at ?? -.infinity { latest[id] = (shelf, at) }
        }
        return latest.mapValues(\.shelf)
    }

    /// The marks of these works (of every work, when nil) as recorded, void or not (a round that sees a work clears
    /// them).
    static func recordedMarks(_ db: any DatabaseConnection, of works: [Int64]?) throws -> [Int64: Mark] {
        let rows =
            try works.map { works in
                try SQL.parts(of: works).flatMap { part in
                    try db.query("SELECT * FROM shelf_mark WHERE book_id IN (\(SQL.placeholders(part.count)))", part)
                }
            } ?? db.query("SELECT * FROM shelf_mark")
        var marks: [Int64: Mark] = [:]
        for row in rows {
            guard let id = row.int("book_id"), let kind = row.string("kind"), let since = row.double("since") else {
                continue
            }
            marks[id] = Mark(kind: kind, shelf: row.string("shelf") ?? "", since: since, name: row.string("name"))
        }
        return marks
    }

    static func valid(_ db: any DatabaseConnection, _ marks: [Int64: Mark]) throws -> [Int64: Mark] {
        guard !marks.isEmpty else { return marks }
        let seen = try latestSightings(
            db, of: Array(marks.keys), until: Date.distantFuture.timeIntervalSince1970,
            besides: nil
        ).times
        return marks.filter { id, mark in (seen[id] ?? -.infinity) < mark.since }
    }

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
                let mark = marks[id]
                return ShelfDocument.Entry(
                    work: work.key, title: work.title, author: work.author, position: index + 1,
                    lastSeen: Date(timeIntervalSince1970: at.lastSeen), photo: at.photo, photoSHA256: at.sha256,
                    box: at.box,
                    missingSince: mark?.missingSince, lentTo: mark?.lentTo, lentSince: mark?.lentSince)
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
        let missingIDs = rows.filter { $0.string("kind") == "missing" }.compactMap { $0.int("book_id") }
        let marks = try self.marks(db, of: missingIDs)
        var changes = ShelfDocument.Changes()
        for row in rows {
            guard let id = row.int("book_id"), let key = row.string("work_key") else { continue }
            let title = row.string("title") ?? "", author = row.string("author"), other = row.string("other_shelf")
            switch row.string("kind") {
            case "arrived":
                changes.arrived.append(.init(work: key, title: title, author: author, isArrival: true, from: other))
            case "moved_out": changes.movedOut.append(.init(work: key, title: title, author: author, to: other))
            default:
                if marks[id]?.kind == "missing" {
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
            return try latest.compactMap { row -> ShelfSummary? in
                guard let shelf = row.string("shelf") else { return nil }
                let last = try db.queryOne(
                    """
                    SELECT * FROM shelf_round WHERE shelf = ? AND closed_at IS NOT NULL ORDER BY closed_at DESC, id DESC LIMIT 1
                    """, [shelf])
                let open = try db.queryOne(
                    "SELECT * FROM shelf_round WHERE shelf = ? AND closed_at IS NULL ORDER BY id DESC LIMIT 1", [shelf])
                return ShelfSummary(
                    shelf: shelf, books: last?.int("books").map(Int.init), lastRound: last.map(Self.round),
                    openRound: open.map(Self.round),
                    missing: standing.filter { $0.shelf == shelf && $0.kind == "missing" }.count,
                    lent: standing.filter { $0.shelf == shelf && $0.kind == "lent" }.count)
            }
        }
    }

    /// The books lent now, on every shelf, by shelf then title.
    package func lent() throws -> [ShelfLoan] {
        try database.read { db in
            let standing = try Self.marks(db, of: nil).filter { $0.value.kind == "lent" }
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
    /// there as the shelf's rounds order it, and that sighting's photo and box. Costs what those shelves hold.
    package func whereabouts(of keys: [String]) throws -> [BookWhereabouts] {
        try database.read { db in
            var orders: [String: [Int64]] = [:]
            var found: [BookWhereabouts] = []
            for key in keys {
                guard let work = try db.queryOne("SELECT id, title, author FROM book WHERE work_key = ?", [key]),
                    let id = work.int("id"),
                    let latest = try db.queryOne(
                        """
                        SELECT s.sha256, s.box, s.shelf, p.first_seen, p.relative_path FROM book_sighting s
                        JOIN photo p ON p.sha256 = s.sha256 WHERE s.book_id = ?
                        ORDER BY CASE WHEN s.status = 'verified' THEN 0 ELSE 1 END, p.first_seen DESC, p.relative_path DESC LIMIT 1
                        """, [id])
                else { continue }
                let shelf = latest.string("shelf") ?? ""
                var position: Int?
                if !shelf.isEmpty {
                    if orders[shelf] == nil {
                        orders[shelf] = try Self.order(db, shelf: shelf, Self.inventory(db, shelf: shelf))
                    }
                    position = orders[shelf]?.firstIndex(of: id).map { $0 + 1 }
                }
                let mark = try Self.marks(db, of: [id])[id]
                found.append(
                    BookWhereabouts(
                        work: key, title: work.string("title") ?? "", author: work.string("author"), shelf: shelf,
                        position: position,
                        lastSeen: latest.date("first_seen") ?? .distantPast,
                        photo: latest.string("relative_path") ?? "",
                        photoSHA256: latest.string("sha256") ?? "", box: Self.box(latest.string("box")),
                        missingSince: mark?.missingSince, lentTo: mark?.lentTo))
            }
            return found
        }
    }

    // MARK: Answers

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
                try Self.mark(db, work.id, shelf: shelf, kind: "lent", name: name, now: now)
                detail = "to \(name), from \(shelf)"
            case .gone:
                try Self.mark(db, work.id, shelf: shelf, kind: "gone", name: nil, now: now)
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

    static func mark(_ db: any DatabaseConnection, _ work: Int64, shelf: String, kind: String, name: String?, now: Date)
        throws(StoreError)
    {
        try db.execute(
            """
            INSERT INTO shelf_mark (book_id, shelf, kind, since, name, round_id) VALUES (?, ?, ?, ?, ?, NULL)
            ON CONFLICT (book_id) DO UPDATE SET shelf = excluded.shelf, kind = excluded.kind, since = excluded.since,
                name = excluded.name, round_id = excluded.round_id
            """, [work, shelf, kind, now, name])
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

    // MARK: Pieces

    struct SeenBook {
        var bookID: Int64
        var box: Box?
        var verified: Bool
        var firstCandidate: CatalogueRecord?
    }

    struct WorkName { var key: String; var title: String; var author: String? }

    static func works(_ db: any DatabaseConnection, _ ids: [Int64]) throws -> [Int64: WorkName] {
        var works: [Int64: WorkName] = [:]
        for part in SQL.parts(of: ids) {
            for row in try db.query(
                "SELECT id, work_key, title, author FROM book WHERE id IN (\(SQL.placeholders(part.count)))", part)
            {
                guard let id = row.int("id"), let key = row.string("work_key") else { continue }
                works[id] = WorkName(key: key, title: row.string("title") ?? "", author: row.string("author"))
            }
        }
        return works
    }

    /// The keys a candidate may name a work of the shelf by: its work key, a record one of its readings matched, an ISBN.
    struct WorkKeys {
        var byKey: [String: Int64] = [:]
        func work(for record: CatalogueRecord) -> Int64? {
            if record.source == LibraryWork.source, let id = byKey[record.key] { return id }
            let matchKey = record.key.hasPrefix("\(record.source):") ? record.key : "\(record.source):\(record.key)"
            return byKey[matchKey] ?? record.isbn13.flatMap { byKey["isbn:\($0)"] }
        }
    }

    static func keys(_ db: any DatabaseConnection, of works: [Int64]) throws -> WorkKeys {
        var keys = WorkKeys()
        for part in SQL.parts(of: works) {
            let list = SQL.placeholders(part.count)
            for row in try db.query("SELECT id, work_key FROM book WHERE id IN (\(list))", part) {
                if let id = row.int("id"), let key = row.string("work_key") { keys.byKey[key] = id }
            }
            for row in try db.query(
                "SELECT DISTINCT book_id, match_key, isbn13 FROM book_sighting WHERE book_id IN (\(list))", part)
            {
                guard let id = row.int("book_id") else { continue }
                if let key = row.string("match_key") { keys.byKey[key] = id }
                if let isbn = row.string("isbn13") { keys.byKey["isbn:\(isbn)"] = id }
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

    static func round(_ row: Row) -> ShelfDocument.Round {
        ShelfDocument.Round(
            openedAt: row.date("opened_at") ?? .distantPast, lastPhotoAt: row.date("last_photo_at") ?? .distantPast,
            closedAt: row.date("closed_at"), photos: Int(row.int("photos") ?? 0), unread: Int(row.int("unread") ?? 0))
    }
}

extension Box {
    var midX: Double { (x1 + x2) / 2 }
}
