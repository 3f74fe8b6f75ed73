import Foundation
import ShelfCore
import ShelfDigest

extension ReviewDocument {
    /// Stable across re-runs of the same photo: the photo's hash and what was read, so a decision taken
    /// once applies again when the photo is rescanned. Here, not in ShelfCore, because hashing needs libcrypto.
    package static func id(photoSHA256: String, reading book: Book) -> String {
        let digest = SHA256.hex(of: Array("\(photoSHA256)|\(book.titleKey)".utf8))
        return String(digest.prefix(12))
    }
}

extension LibraryRecords {
    /// Every open item, oldest first.
    package func openReviewItems() throws -> [ReviewItem] {
        try read { db in try Self.reviewItems(db, where: "1 = 1", []) }
    }

    /// The first open item, read from the index on the queue's order: the review page's entry costs the same with ten
    /// open items or forty thousand.
    package func firstOpenReviewID() throws -> String? {
        try readStatement { db in
            try db.queryOne("SELECT id FROM review_item ORDER BY created_at, id LIMIT 1")?.string("id")
        }
    }

    /// Where `item` stands among the open items (oldest first) and its neighbours: the count the triggers keep, the
    /// items before it counted along the queue's index (as many as its place), and two steps along that index.
    package func reviewPlace(of item: ReviewItem) throws -> ReviewPlace {
        let at: [any SQLBindable] = [item.createdAt, item.id]
        return try read { db in
            let total = try db.queryOne("SELECT n FROM tally WHERE name = 'review_items'")?.int("n") ?? 0
            let before =
                try db.queryOne(
                    """
                    SELECT COUNT(*) AS n FROM review_item WHERE created_at < ?1 OR (created_at = ?1 AND id < ?2)
                    """, at)?.int("n") ?? 0
            let previous = try db.queryOne(
                """
                SELECT id FROM review_item WHERE created_at < ?1 OR (created_at = ?1 AND id < ?2)
                ORDER BY created_at DESC, id DESC LIMIT 1
                """, at)?.string("id")
            return ReviewPlace(
                position: Int(before) + 1, total: Int(total), previous: previous,
                next: try Self.openReviewID(db, after: item, wrapping: false))
        }
    }

    package func openReviewID(after item: ReviewItem) throws -> String? {
        try read { db in try Self.openReviewID(db, after: item, wrapping: true) }
    }

    private static func openReviewID(_ db: any DatabaseConnection, after item: ReviewItem, wrapping: Bool) throws
        -> String?
    {
        if let later = try db.queryOne(
            """
            SELECT id FROM review_item WHERE created_at > ?1 OR (created_at = ?1 AND id > ?2) ORDER BY created_at, id LIMIT 1
            """, [item.createdAt, item.id])?.string("id")
        {
            return later
        }
        guard wrapping else { return nil }
        return try db.queryOne("SELECT id FROM review_item WHERE id <> ? ORDER BY created_at, id LIMIT 1", [item.id])?
            .string("id")
    }

    /// The open items of these photos (review/ follows a batch's photos item by item).
    package func openReviewItems(photos: Set<String>) throws -> [ReviewItem] {
        guard !photos.isEmpty else { return [] }
        let list = Array(photos)
        return try read { db in
            try Self.reviewItems(
                db, where: "r.sha256 IN (\(Array(repeating: "?", count: list.count).joined(separator: ", ")))", list)
        }
    }

    /// Every open item a page at a time, oldest first (keyset on the queue's index, `review_item_order`), each page
    /// read in a transaction of its own: a reconcile of review/ or the review export holds a page, never the queue.
    package func openReviewPages(size: Int = 250, _ body: ([ReviewItem]) throws -> Void) throws {
        var after: (createdAt: Double, id: String)? // the stored value itself: a Date may not round-trip exactly
        while true {
            let keyset: [any SQLBindable] = after.map { [$0.createdAt, $0.createdAt, $0.id] } ?? []
            let (page, read, last) = try read { db -> ([ReviewItem], Int, (createdAt: Double, id: String)?) in
                let keys = try db.query(
                    """
                    SELECT id, created_at FROM review_item
                    WHERE \(after == nil ? "1 = 1" : "created_at >= ? AND (created_at > ? OR id > ?)")
                    ORDER BY created_at, id LIMIT ?
                    """, keyset + [Int64(size)])
                guard let row = keys.last, let id = row.string("id") else { return ([], 0, nil) }
                let ids = try keys.required("id", of: "review_item", as: String.self)
                let items = try Self.reviewItems(
                    db, where: "r.id IN (\(Array(repeating: "?", count: ids.count).joined(separator: ", ")))", ids)
                return (items, keys.count, (row.double("created_at") ?? 0, id))
            }
            guard let last else { return }
            if !page.isEmpty { try body(page) }
            if read < size { return }
            after = last
        }
    }

    /// The open item whose id is `id` or starts with it (at least 4 characters, as `review list` shows them).
    package func reviewItem(_ id: String) throws -> ReviewItem {
        try read { db in try Self.reviewItem(db, id) }
    }

    /// The readings of this photo a person has decided (by normalised title + surname): they do not reopen.
    package func decidedReadings(sha256: String) throws -> Set<String> {
        try readStatement { db in
            Set(
                try db.query("SELECT reading_key FROM review_decision WHERE sha256 = ?", [sha256]).compactMap {
                    $0.string("reading_key")
                })
        }
    }

    /// Where the photo has been seen, newest first (absolute paths; some may be gone).
    package func photoLocations(sha256: String) throws -> [String] {
        try read { db in
            try db.query("SELECT path FROM sighting WHERE sha256 = ? ORDER BY seen_at DESC", [sha256]).compactMap {
                $0.string("path")
            }
        }
    }

    /// Carries out a person's decision in one BEGIN IMMEDIATE transaction (the daemon may be writing): the
    /// library takes the decided book (verified, `reviewed_by_user` in its history) or loses the rejected
    /// reading; the decision is remembered for this photo and reading; the item closes, and the photo's job
    /// leaves `review` when it was its last open item.
    package func decide(_ id: String, _ verdict: ReviewVerdict, now: Date) throws -> ReviewResolution {
        try write { db in try Self.decide(db, id, verdict, now: now) }
    }

    /// Several decisions (one photo's, taken at once) in one transaction, each carried out and recorded as `decide`
    /// does it alone.
    package func decide(_ decisions: [(id: String, verdict: ReviewVerdict)], now: Date) throws
        -> [ReviewResolution]
    {
        try write { db in try decisions.map { try Self.decide(db, $0.id, $0.verdict, now: now) } }
    }

    /// The open items of one photo, named by its sha256 or the start of it (six hex digits at least), in the order its
    /// spines stand, left to right. An empty list: no open item on such a photo.
    package func openReviewItems(photo prefix: String) throws -> [ReviewItem] {
        let wanted = prefix.lowercased()
        guard wanted.count >= 6, wanted.allSatisfy(\.isHexDigit) else {
            throw ReviewError(
                code: .notFound,
                message:
                    "'\(prefix)' is not a photo's hash: give at least 6 characters of its sha256, as 'shelfd review show' prints it."
            )
        }
        let items = try read { db in
            try Self.reviewItems(db, where: SQL.hexPrefix(of: "r.sha256"), SQL.hexPrefixArguments(wanted))
        }
        let photos = Set(items.map(\.photo.sha256))
        guard photos.count < 2 else {
            throw ReviewError(
                code: .ambiguous, message: "'\(prefix)' starts the hashes of \(photos.count) photos: give more of it.")
        }
        return items.sorted(by: ReviewItem.standingOrder)
    }

    /// The photos of one shelf (nil: the top of incoming/) with open items, by path, with how many each has: the
    /// paths under the shelf's folder are read, those of its sub-folders (other shelves) left out.
    package func openReviewPhotos(shelf: String?) throws -> [OpenPhoto] {
        let (condition, argument): (String, String) =
            if let shelf {
                ("p.relative_path LIKE ? ESCAPE '\\'", Self.likeEscaped(shelf) + "/%")
            } else {
                ("p.relative_path NOT LIKE ?", "%/%")
            }
        return try read { db in
            try db.query(
                """
                SELECT r.sha256, p.relative_path, COUNT(*) AS open FROM review_item r JOIN photo p ON p.sha256 = r.sha256
                WHERE \(condition) GROUP BY r.sha256, p.relative_path ORDER BY p.relative_path
                """, [argument]
            ).compactMap { row -> OpenPhoto? in
                guard let sha256 = row.string("sha256"), let path = row.string("relative_path") else { return nil }
                let photo = ReviewDocument.Photo(path: path, sha256: sha256)
                return photo.shelf == shelf ? OpenPhoto(photo: photo, open: Int(row.int("open") ?? 0)) : nil
            }
        }
    }

    /// `text` matched literally by LIKE … ESCAPE '\'.
    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }

    private static func decide(_ db: any DatabaseConnection, _ id: String, _ verdict: ReviewVerdict, now: Date) throws
        -> ReviewResolution
    {
        let item = try Self.reviewItem(db, id)
        let decision = try Self.decision(verdict, on: item.book)
        try Self.remember(decision, sha256: item.photo.sha256, readingKey: item.book.titleKey, db, now: now)
        guard let bookID = try db.queryOne("SELECT book_id FROM review_item WHERE id = ?", [item.id])?.int("book_id")
        else {
            throw ReviewError(
                code: .notFound, message: "Review item \(item.id) has no book any more; run 'shelfd review list'.")
        }
        let shelf = try db.queryOne(
            "SELECT shelf FROM book_sighting WHERE book_id = ? AND sha256 = ?",
            [bookID, item.photo.sha256])?.string("shelf")
        try db.execute("DELETE FROM book_sighting WHERE book_id = ? AND sha256 = ?", [bookID, item.photo.sha256])
        try db.execute("DELETE FROM review_item WHERE id = ?", [item.id])
        var placed: Book?
        var target: Int64?
        if let decided = decision.book {
            let chosen = try Self.apply(
                decided, isbnSource: decision.isbnSource, detail: decision.detail, reading: item.book,
                photo: item.photo, shelf: shelf, db, now: now)
            if chosen != bookID,
                try db.queryOne("SELECT 1 AS one FROM book_sighting WHERE book_id = ?", [bookID]) == nil
            {
                // The reading was all this book had: its history goes with the reading to the chosen work.
                try db.execute("UPDATE book_history SET book_id = ? WHERE book_id = ?", [chosen, bookID])
            }
            target = chosen
            placed = decided
        } else {
            try Self.recordPersonStep(
                db, bookID, "reviewed_by_user", detail: "\(decision.detail) in \(item.photo.path)", now: now)
        }
        try Self.refresh(db, bookID, now: now)
        try Self.closeJobIfReviewed(db, sha256: item.photo.sha256, now: now)
        return ReviewResolution(
            id: item.id, photoSHA256: item.photo.sha256, book: placed, detail: decision.detail,
            files: FilesChange(
                works: Set([bookID] + [target].compactMap { $0 }), closedItems: [item.id],
                photos: [item.photo.sha256]),
            undo: ReviewUndo(item: item, shelf: shelf, work: target, detail: decision.detail))
    }

    /// Takes decisions back in one transaction (the review page's undo): each decision is forgotten, the reading
    /// leaves the work it was put in (which keeps a `review_undone` step, or goes when that was its only sighting), and
    /// its item opens again as it was, in its old place in the queue. An item open again already (the photo was read
    /// since) is left as it is. Returns what changed of the files, with the items opened. Throws `ReviewError`, and
    /// takes nothing back, when the work a decision made was edited, merged or removed in the library since.
    package func reopen(_ decisions: [ReviewUndo], now: Date) throws -> FilesChange {
        try write { db in
            var change = FilesChange()
            for undo in decisions {
                let item = undo.item, sha256 = item.photo.sha256
                guard try db.queryOne("SELECT 1 AS one FROM review_item WHERE id = ?", [item.id]) == nil else {
                    continue
                }
                // A later edit, merge or removal in the library retired the work the decision made: taking the
                // decision back would undo that too, so nothing is taken back.
                if let work = undo.work, try db.queryOne("SELECT 1 AS one FROM book WHERE id = ?", [work]) == nil {
                    throw ReviewError(
                        code: .notFound,
                        message: "«\(item.book.title)» cannot be taken back: its work was edited, merged or removed "
                            + "in the library since. Find the book in the library to change it.")
                }
                try db.execute(
                    "DELETE FROM review_decision WHERE sha256 = ? AND reading_key = ?", [sha256, item.book.titleKey])
                if let work = undo.work {
                    try db.execute(
                        "DELETE FROM book_sighting WHERE book_id = ? AND sha256 = ? AND decided = 1", [work, sha256])
                    try Self.recordPersonStep(
                        db, work, "review_undone", detail: "\(undo.detail) in \(item.photo.path), taken back", now: now)
                    try Self.refresh(db, work, now: now)
                    change.works.insert(work)
                }
                let bookID = try Self.addReading(db, item.book, photo: item.photo, shelf: undo.shelf, now: now)
                try db.execute(
                    "INSERT INTO review_item (id, sha256, book_id, reading, created_at) VALUES (?, ?, ?, ?, ?)",
                    [
                        item.id, sha256, bookID, String(decoding: try JSONEncoder().encode(item.book), as: UTF8.self),
                        item.createdAt,
                    ])
                try db.execute(
                    "UPDATE job SET state = 'review', updated_at = ? WHERE sha256 = ? AND state = 'done'",
                    [now, sha256])
                change.works.insert(bookID)
                change.openedItems.insert(item.id)
                change.photos.insert(sha256)
            }
            return change
        }
    }

    // MARK: Inside a batch commit

    /// Adds one reading of a committed photo to the library: a decision a person took on this reading before
    /// applies again; a reading that still needs a person opens (or keeps) its review item. Returns the book and the
    /// id of the item kept open, if any. `decisions`: the photo's decisions by reading key (read once for the batch).
    /// The book is refreshed by the caller (`refresh`, once for every book of the photo).
    /// `pending`: the photo's sightings and steps not yet written (`PendingReadings`).
    static func commitReading(
        _ db: any DatabaseConnection, _ book: Book, photo: ReviewDocument.Photo, shelf: String?,
        decisions: [String: Row], pending: PendingReadings, now: Date
    ) throws -> (bookID: Int64?, reviewID: String?) {
        let sha256 = photo.sha256
        if let row = decisions[book.titleKey] {
            let decision = try StoredDecision(row)
            if let decided = decision.book {
                try pending.flush(db)
                pending.forgetLinks()
                try apply(
                    decided, isbnSource: decision.isbnSource, detail: decision.detail, reading: book, photo: photo,
                    shelf: shelf, db, now: now)
            }
            return (nil, nil)
        }
        guard book.status == .needsReview else {
            return (
                try addReading(db, book, photo: photo, shelf: shelf, refresh: false, pending: pending, now: now), nil
            )
        }
        let id = ReviewDocument.id(photoSHA256: sha256, reading: book)
        var reading = book
        reading.reviewID = id
        // the only cause before matching
        if (reading.reviewReasons ?? []).isEmpty { reading.reviewReasons = ["low_confidence"] }
        let bookID = try addReading(
            db, book, photo: photo, shelf: shelf, refresh: false,
            steps: [
                LibraryDocument.Decision(
                    action: "needs_review", by: book.source, at: now,
                    detail: "\(photo.path): \((reading.reviewReasons ?? []).joined(separator: ", "))")
            ], pending: pending, now: now)
        try db.execute(
            """
            INSERT INTO review_item (id, sha256, book_id, reading, created_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET book_id = excluded.book_id, reading = excluded.reading
            """, [id, sha256, bookID, String(decoding: try JSONEncoder().encode(reading), as: UTF8.self), now])
        return (bookID, id)
    }

    /// After a photo's readings are in: its items for readings it no longer gives are closed, and its job is
    /// `review` only while one is open.
    /// Returns the items closed.
    static func closeStaleItems(_ db: any DatabaseConnection, sha256: String, keeping open: [String], now: Date) throws
        -> Set<String>
    {
        let placeholders = Array(repeating: "?", count: open.count).joined(separator: ",")
        // PostgreSQL has no empty list: none kept is every item of the photo.
        let closed = try db.query(
            "DELETE FROM review_item WHERE sha256 = ?" + (open.isEmpty ? "" : " AND id NOT IN (\(placeholders))")
                + " RETURNING id", [sha256] + open
        ).required("id", of: "review_item", as: String.self)
        // With an item kept open the job stays `review`; with none, a job in review has nothing left to wait for.
        if open.isEmpty {
            try db.execute(
                "UPDATE job SET state = 'done', updated_at = ? WHERE sha256 = ? AND state = 'review'", [now, sha256])
        }
        return Set(closed)
    }

    static func closeJobIfReviewed(_ db: any DatabaseConnection, sha256: String, now: Date) throws {
        guard try db.queryOne("SELECT 1 AS one FROM review_item WHERE sha256 = ?", [sha256]) == nil else { return }
        try db.execute(
            "UPDATE job SET state = 'done', updated_at = ? WHERE sha256 = ? AND state = 'review'", [now, sha256])
    }

    // MARK: Decisions

    /// A decision as remembered: what the book became (nil when rejected) and how to say it.
    struct StoredDecision {
        enum Action: String, SQLReadable { case accepted, edited, rejected }
        var action: Action
        var book: Book?
        var isbnSource: String?
        var detail: String

        init(action: Action, book: Book?, isbnSource: String?, detail: String) {
            self.action = action; self.book = book; self.isbnSource = isbnSource; self.detail = detail
        }

        init(_ row: Row) throws {
            action = try row.required("action", of: "review_decision")
            book = try row.string("book").map { try JSONDecoder().decode(Book.self, from: Data($0.utf8)) }
            isbnSource = row.string("isbn_source")
            detail = row.string("detail") ?? ""
        }
    }

    /// Remembers a decision on one reading of a photo: it is applied again whenever the photo gives that reading.
    static func remember(
        _ decision: StoredDecision, sha256: String, readingKey: String, _ db: any DatabaseConnection,
        now: Date
    ) throws {
        try db.execute(
            """
            INSERT INTO review_decision (sha256, reading_key, action, book, isbn_source, detail, decided_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(sha256, reading_key) DO UPDATE SET action = excluded.action, book = excluded.book,
                isbn_source = excluded.isbn_source, detail = excluded.detail, decided_at = excluded.decided_at
            """,
            [
                sha256, readingKey, decision.action.rawValue,
                try decision.book.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) },
                decision.isbnSource, decision.detail, now,
            ])
    }

    /// The book a verdict makes of a reading: verified, with no candidates or reasons left.
    static func decision(_ verdict: ReviewVerdict, on reading: Book) throws(ReviewError) -> StoredDecision {
        var book = reading
        book.status = .verified
        book.candidates = nil; book.reviewReasons = nil; book.reviewID = nil
        switch verdict {
        case .accept:
            return StoredDecision(action: .accepted, book: book, isbnSource: nil, detail: "accepted as read")
        case .pick(let n):
            let candidates = reading.candidates ?? []
            guard n >= 1, candidates.indices.contains(n - 1) else {
                throw ReviewError(
                    code: .noSuchCandidate,
                    message: candidates.isEmpty
                        ? "This book has no candidates: accept it as read, or edit it."
                        : "There are \(candidates.count) candidates: give --candidate 1…\(candidates.count).")
            }
            let record = candidates[n - 1].record
            book.title = record.title; book.author = record.author ?? reading.author
            book.isbn13 = record.isbn13; book.isbn10 = record.isbn10
            // A work of the library with no record of its own is joined by its title and author, not by a record.
            book.match =
                record.source == LibraryWork.source
                ? nil
                : BookMatch(source: record.source, key: record.key, score: candidates[n - 1].score, year: record.year)
            return StoredDecision(
                action: .accepted, book: book, isbnSource: record.source, detail: "accepted candidate \(n)")
        case .edit(let title, let author, let isbn):
            var changed: [String] = []
            if let title, title != reading.title { book.title = title; changed.append("title") }
            if let author, author != reading.author {
                book.author = author.isEmpty ? nil : author; changed.append("author")
            }
            if let isbn, isbn.isbn13 != reading.isbn13 {
                book.isbn13 = isbn.isbn13; book.isbn10 = isbn.isbn10; changed.append("ISBN")
            }
            var detail = changed.isEmpty ? "accepted as read" : "edited \(changed.joined(separator: ", "))"
            var isbnSource = isbn == nil ? nil : "user"
            // An ISBN that came with the matched record is the record's: it stays only while the words name that work.
            if !changed.contains("ISBN"), let record = reading.matchedRecord, let kept = book.isbn13,
                kept == record.isbn13
            {
                let named = book.titleKey
                if named == reading.titleKey || named == Book.titleKey(title: record.title, author: record.author) {
                    isbnSource = record.source
                } else {
                    book.isbn13 = nil; book.isbn10 = nil; isbnSource = nil
                    detail += "; ISBN \(kept) left with «\(record.title)»"
                }
            }
            book.match = nil // a person's own words name no record
            return StoredDecision(action: .edited, book: book, isbnSource: isbnSource, detail: detail)
        case .reject:
            return StoredDecision(action: .rejected, book: nil, isbnSource: nil, detail: "rejected")
        }
    }

    /// Puts a decided reading into the library: the decided title, author, ISBN and match, with this reading's
    /// box and confidence. Returns the book's row.
    @discardableResult
    static func apply(
        _ decided: Book, isbnSource: String?, detail: String, reading: Book, photo: ReviewDocument.Photo,
        shelf: String?, _ db: any DatabaseConnection, now: Date
    ) throws -> Int64 {
        var book = decided
        book.box = reading.box; book.confidence = reading.confidence; book.source = reading.source
        let bookID = try addReading(
            db, book, photo: photo, shelf: shelf, decided: true, isbnSource: isbnSource, now: now)
        try recordPersonStep(db, bookID, "reviewed_by_user", detail: "\(detail) in \(photo.path)", now: now)
        return bookID
    }

    // MARK: Reading items

    static func reviewItem(_ db: any DatabaseConnection, _ id: String) throws -> ReviewItem {
        let wanted = id.lowercased()
        guard wanted.count >= 4, wanted.allSatisfy(\.isHexDigit) else {
            throw ReviewError(
                code: .notFound, message: "'\(id)' is not a review id: give one as 'shelfd review list' shows it.")
        }
        let found = try reviewItems(db, where: SQL.hexPrefix(of: "r.id"), SQL.hexPrefixArguments(wanted))
        guard found.count < 2 else {
            throw ReviewError(code: .ambiguous, message: "'\(id)' starts \(found.count) review ids: give more of it.")
        }
        guard let item = found.first else {
            throw ReviewError(
                code: .notFound,
                message: "No open review item \(id) (decided already?); 'shelfd review list' shows the open ones.")
        }
        return item
    }

    private static func reviewItems(
        _ db: any DatabaseConnection, where condition: String, _ arguments: [any SQLBindable]
    ) throws -> [ReviewItem] {
        try db.query(
            """
            SELECT r.id, r.sha256, r.reading, r.created_at, p.relative_path FROM review_item r
            JOIN photo p ON p.sha256 = r.sha256 WHERE \(condition) ORDER BY r.created_at, r.id
            """, arguments
        ).compactMap { row in
            guard let id = row.string("id"), let sha = row.string("sha256"), let json = row.string("reading") else {
                return nil
            }
            return ReviewItem(
                id: id, photo: ReviewDocument.Photo(path: row.string("relative_path") ?? "", sha256: sha),
                book: try JSONDecoder().decode(Book.self, from: Data(json.utf8)),
                createdAt: row.date("created_at") ?? Date(timeIntervalSince1970: 0))
        }
    }
}
