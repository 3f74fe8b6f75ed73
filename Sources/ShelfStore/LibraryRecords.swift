import Foundation
import ShelfCore

/// The library and its review queue: the works, their sightings and history, the review items and the decisions
/// taken on them. A concern of the store with a type of its own over the shared database (`Store.library`); the
/// views `ReviewStore` and `LibraryStore` are its surface. The queue's `finish` files a photo's readings here in
/// its own transaction, through this type's statements on that connection (`commitReading`, `closeStaleItems`,
/// `refresh`), so a photo's job and its books commit together.
package struct LibraryRecords: StoreConcern {
    let database: Store

    package var isShared: Bool { database.isShared }

    /// The provider-ready image stored with a photo (a shared store's), as the photo's job keeps it.
    package func photoImage(sha256: String) throws -> [UInt8]? { try database.queue.photoImage(sha256: sha256) }
    package func hasPhotoImage(sha256: String) throws -> Bool { try database.queue.hasPhotoImage(sha256: sha256) }
}

/// The library is one row per work (ARCHITECTURE.md, "One entry per work"); each of its sightings keeps what one photo showed (title,
/// author, ISBN, review state). A book's title, confidence and status are recomputed from its sightings, so
/// replacing one photo's reading (a rescan, a person's decision) never leaves a stale value behind.
extension LibraryRecords {
    /// Adds one reading from a photo to the work it belongs to, or as a new work. `decided`: a person chose
    /// this reading (it counts as verified, and its title wins). Returns the book's row.
    /// `refresh` false: the caller refreshes the book (a batch commit, once for every book of the photo).
    /// `steps`: more steps of the reading's history, recorded with its detection (one statement for them all).
    /// `pending`: a batch commit's buffer, where the sighting and the steps wait to be written with the photo's others.
    @discardableResult
    static func addReading(
        _ db: any DatabaseConnection, _ book: Book, photo: ReviewDocument.Photo, shelf: String?,
        decided: Bool = false, isbnSource: String? = nil, refresh: Bool = true,
        steps: [LibraryDocument.Decision] = [], pending: PendingReadings? = nil, now: Date
    ) throws -> Int64 {
        let isbn = book.checkedISBN // only a checked ISBN counts, always as ISBN-13
        if let pending, pending.mayBeSeen(by: book) { try pending.flush(db) }
        let bookID = try work(
            for: book, photo: photo, decided: decided, db, pending: pending,
            beforeMerge: { try pending?.flush(db) }, now: now)
        let box = try book.box.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        let verified = decided || book.status == .verified
        let isbnSource = isbn == nil ? nil : isbnSource ?? book.match?.source ?? book.source
        var history: [LibraryDocument.Decision] = []
        if !decided { // a decided reading's detection is in the history already
            history.append(LibraryDocument.Decision(action: "detected", by: book.source, at: now, detail: photo.path))
            let notePrefix = LibraryWork.sightingNote + ": "
            if let taken = book.notes?.first(where: { $0.hasPrefix(notePrefix) }) {
                history.append(
                    LibraryDocument.Decision(
                        action: "matched", by: LibraryWork.source, at: now,
                        detail: String(taken.dropFirst(notePrefix.count))))
            } else if let match = book.match {
                history.append(
                    LibraryDocument.Decision(
                        action: "matched", by: match.source, at: now,
                        detail: "\(match.key) (score \(String(format: "%.2f", match.score)))"))
            }
        }
        if let pending {
            pending.add(
                bookID: bookID, sha256: photo.sha256, box: box, confidence: book.confidence, shelf: shelf, seenAt: now,
                verified: verified, title: book.title, author: book.author, titleKey: book.titleKey,
                isbn13: isbn?.isbn13, isbn10: isbn?.isbn10, isbnSource: isbnSource, decided: decided,
                matchKey: book.matchKey)
            pending.add(history + steps, of: bookID)
            if refresh {
                try pending.flush(db)
                try Self.refresh(db, [bookID], now: now)
            }
            return bookID
        }
        try insertSightings(
            db,
            [
                [
                    bookID, photo.sha256, box, book.confidence, shelf, now,
                    (verified ? Book.Status.verified : .needsReview).rawValue, book.title, book.author, book.titleKey,
                    isbn?.isbn13, isbn?.isbn10, isbnSource, decided, book.matchKey,
                ]
            ])
        if refresh { try Self.refresh(db, [bookID], now: now) }
        try recordHistory(db, history.map { (bookID, $0) } + steps.map { (bookID, $0) })
        return bookID
    }

    /// Sightings (each row: book_id, sha256, box, confidence, shelf, seen_at, status, title, author, title_key, isbn13,
    /// isbn10, isbn_source, decided, match_key), in one statement. Two readings of one photo on the same work (rare:
    /// the matcher uses each record once per photo) share the sighting: the best confidence, verified if either was.
    static func insertSightings(_ db: any DatabaseConnection, _ rows: [[any SQLBindable]]) throws(StoreError) {
        guard !rows.isEmpty else { return }
        try db.execute(
            """
            INSERT INTO book_sighting (book_id, sha256, box, confidence, shelf, seen_at, status, title, author, title_key,
                                       isbn13, isbn10, isbn_source, decided, match_key)
            VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: rows.count).joined(separator: ", "))
            ON CONFLICT(book_id, sha256) DO UPDATE SET
                confidence = CASE WHEN excluded.confidence > book_sighting.confidence THEN excluded.confidence ELSE book_sighting.confidence END,
                status = CASE WHEN excluded.status = 'verified' THEN 'verified' ELSE book_sighting.status END,
                decided = CASE WHEN excluded.decided > book_sighting.decided THEN excluded.decided ELSE book_sighting.decided END,
                isbn10 = CASE WHEN book_sighting.isbn13 IS NULL THEN excluded.isbn10 ELSE book_sighting.isbn10 END,
                isbn_source = CASE WHEN book_sighting.isbn13 IS NULL THEN excluded.isbn_source ELSE book_sighting.isbn_source END,
                isbn13 = COALESCE(book_sighting.isbn13, excluded.isbn13),
                match_key = COALESCE(book_sighting.match_key, excluded.match_key)
            """, rows.flatMap { $0 })
    }

    /// The row of the work `book` belongs to (ARCHITECTURE.md, "One entry per work"), merging the works it shows to be one.
    ///
    /// A reading is linked to a work by any of its sightings: a shared checked ISBN or the same matched record
    /// (strong links), or, when the reading or the sighting is unmatched, the same normalised title and surname
    /// (a title link). Strong links are always followed, so a book matched to the catalogue in one photo and to
    /// OpenLibrary in another is one work once an ISBN joins them. A title link is weaker: it brings in any
    /// unmatched work, but joins a matched work only when nothing matched is linked already, and then only the
    /// oldest one; so an unmatched "Poems" by Brontë never merges Emily's and Anne's, which stay two entries.
    ///
    /// The work kept is the oldest matched one, else the oldest: a matched key is preferred to a title key, and
    /// an entry keeps the key it was first known by, so its `work` changes at most once (from a title to a
    /// record, when an unmatched work is first matched) and a merge never renames the entry a person knows.
    /// The other records of the work stay on their sightings (`book_sighting.match_key`), where they are found.
    /// `beforeMerge` runs before works are merged (a batch commit writes its pending rows then).
    /// `pending`: a batch commit's buffer, which may hold the reading's links read with the photo's others.
    static func work(
        for book: Book, photo: ReviewDocument.Photo, decided: Bool, _ db: any DatabaseConnection,
        pending: PendingReadings? = nil, beforeMerge: () throws -> Void = {}, now: Date
    ) throws -> Int64 {
        // Every work linked to the reading, in one query: by a checked ISBN (1), the matched record (2) or the title and
        // surname (3), each arm on its own index; a work linked several ways comes first by its strongest link.
        var why: [Int64: String] = [:] // per linked work, what links it, for the history
        var linked: [LinkedWork] = [] // oldest first
        let isbn = book.checkedISBN?.isbn13
        let lookup = WorkLookup(book)
        let rows = try pending?.linkedWorks(for: lookup) ?? linkedWorks(db, [lookup])[lookup] ?? []
        for row in rows {
            let id: Int64 = try row.required("id", of: "book")
            if why[id] != nil { continue } // linked twice (by ISBN and record): the first link says why
            switch row.int("link") {
            case 1: why[id] = "ISBN \(isbn ?? "")"
            case 2: why[id] = "record \(book.matchKey ?? "")"
            default: why[id] = "title and author"
            }
            linked.append(
                LinkedWork(
                    id: id, key: row.string("work_key") ?? "", title: row.string("title") ?? "",
                    matched: row.string("match_key") != nil))
        }
        let strong = Set(why.filter { $0.value != "title and author" }.keys)
        let groupMatched = book.match != nil || linked.contains { strong.contains($0.id) && $0.matched }
        var chosen = strong.union(linked.filter { !strong.contains($0.id) && !$0.matched }.map(\.id))
        if !groupMatched, let oldest = linked.first(where: { !strong.contains($0.id) && $0.matched }) {
            chosen.insert(oldest.id)
        }
        let group = linked.filter { chosen.contains($0.id) }
        guard let target = group.first(where: \.matched) ?? group.first else {
            let id = try insertWork(db, book, now: now)
            pending?.taken(lookup, linked: rows, work: id)
            return id
        }
        pending?.taken(lookup, linked: rows, work: target.id)

        if let match = book.match, let key = book.matchKey {
            if !target.matched {
                try db.execute(
                    """
                    UPDATE book SET work_key = ?, match_source = ?, match_key = ?, match_score = ?, match_year = ? WHERE id = ?
                    """, [key, match.source, match.key, match.score, match.year, target.id])
            } else if target.key == key {
                try db.execute(
                    "UPDATE book SET match_score = CASE WHEN match_score < ?1 THEN ?1 ELSE match_score END WHERE id = ?2",
                    [match.score, target.id])
            }
        }
        let by = decided ? "user" : book.match?.source ?? book.source
        if group.count > 1 { try beforeMerge() }
        for other in group where other.id != target.id {
            try merge(
                other.id, into: target.id, db, now: now,
                history: LibraryDocument.Decision(
                    action: "merged", by: by, at: now,
                    detail: "«\(other.title)» (\(other.key)) into «\(target.title)» (\(target.key)): \(photo.path) has "
                        + "the \(why[other.id] ?? "") of the first and the \(why[target.id] ?? "") of the second"))
        }
        return target.id
    }

    /// The works linked to each reading (`work(for:)`), in one query for them all: by a checked ISBN (1), the matched
    /// record (2) or the title and surname (3), each arm on its own index, a work linked several ways once per link;
    /// per reading, oldest work first and its strongest link first.
    static func linkedWorks(_ db: any DatabaseConnection, _ lookups: [WorkLookup]) throws -> [WorkLookup: [Row]] {
        let lookups = Array(Set(lookups))
        guard !lookups.isEmpty else { return [:] }
        var arms: [String] = []
        var arguments: [any SQLBindable] = []
        for (index, lookup) in lookups.enumerated() {
            if let isbn = lookup.isbn13 {
                arms.append("SELECT \(index) AS r, book_id AS id, 1 AS link FROM book_sighting WHERE isbn13 = ?")
                arguments.append(isbn)
            }
            if let key = lookup.matchKey {
                arms.append("SELECT \(index) AS r, id, 2 AS link FROM book WHERE work_key = ?")
                arms.append("SELECT \(index) AS r, book_id AS id, 2 AS link FROM book_sighting WHERE match_key = ?")
                arguments += [key, key]
            }
            arms.append("SELECT \(index) AS r, id, 3 AS link FROM book WHERE work_key = ?")
            arms.append(
                "SELECT \(index) AS r, book_id AS id, 3 AS link FROM book_sighting WHERE title_key = ?"
                    + (lookup.unmatched ? "" : " AND match_key IS NULL"))
            arguments += [lookup.titleKey, lookup.titleKey]
        }
        var linked = Dictionary(uniqueKeysWithValues: lookups.map { ($0, [Row]()) })
        for row in try db.query(
            """
            SELECT l.r, b.id, b.work_key, b.title, b.match_key, l.link FROM book b JOIN (\(arms.joined(separator: " UNION ")))
            l ON l.id = b.id ORDER BY l.r, b.first_seen, b.id, l.link
            """, arguments)
        {
            linked[lookups[Int(try row.required("r", of: "linked_works", as: Int64.self))], default: []].append(row)
        }
        return linked
    }

    /// What a reading's work is looked up by.
    struct WorkLookup: Hashable {
        var isbn13: String?
        var matchKey: String?
        var titleKey: String
        /// An unmatched reading is linked by its title to matched works too.
        var unmatched: Bool

        init(_ book: Book) {
            isbn13 = book.checkedISBN?.isbn13; matchKey = book.matchKey; titleKey = book.titleKey;
            unmatched = book.match == nil
        }

        /// Every key a sighting or a work of this reading could be found by.
        var keys: [String] { [isbn13, matchKey, titleKey].compactMap { $0 } }
    }

    /// A work as the identity rule sees it.
    private struct LinkedWork {
        var id: Int64
        var key: String
        var title: String
        var matched: Bool
    }

    /// The works with these ids, oldest first.
    private static func works(_ ids: [Int64], _ db: any DatabaseConnection) throws(StoreError) -> [LinkedWork] {
        guard !ids.isEmpty else { return [] }
        let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ",")
        return try db.query(
            """
            SELECT id, work_key, title, match_key FROM book WHERE id IN (\(placeholders)) ORDER BY first_seen, id
            """, ids
        ).compactMap { row in
            row.int("id").map {
                LinkedWork(
                    id: $0, key: row.string("work_key") ?? "", title: row.string("title") ?? "",
                    matched: row.string("match_key") != nil)
            }
        }
    }

    private static func insertWork(_ db: any DatabaseConnection, _ book: Book, now: Date) throws -> Int64 {
        try db.insert(
            """
            INSERT INTO book (work_key, title, author, confidence, status, source, match_source, match_key, match_score,
                              match_year, first_seen, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                book.workKey, book.title, book.author, book.confidence, book.status.rawValue, book.source,
                book.match?.source, book.match?.key, book.match?.score, book.match?.year, now, now,
            ])
    }

    /// Moves everything of work `from` to `target` (sightings, history, open review items), removes it, and
    /// records `history` (the `merged` step naming both). A photo seen in both keeps one sighting: the one a
    /// person decided, so a merge never undoes a review decision.
    static func merge(
        _ from: Int64, into target: Int64, _ db: any DatabaseConnection, now: Date,
        history: LibraryDocument.Decision
    ) throws(StoreError) {
        try db.execute(
            """
            DELETE FROM book_sighting WHERE book_id = ?2 AND decided = 0
                AND sha256 IN (SELECT sha256 FROM book_sighting WHERE book_id = ?1 AND decided = 1)
            """, [from, target])
        try db.execute(
            """
            UPDATE book_sighting SET book_id = ?1
            WHERE book_id = ?2 AND sha256 NOT IN (SELECT sha256 FROM book_sighting WHERE book_id = ?1)
            """, [target, from])
        try db.execute("DELETE FROM book_sighting WHERE book_id = ?", [from]) // the same photo on both: one is enough
        try db.execute("UPDATE book_history SET book_id = ? WHERE book_id = ?", [target, from])
        try db.execute("UPDATE review_item SET book_id = ? WHERE book_id = ?", [target, from])
        try ShelfRounds.merge(from, into: target, db)
        // The work was first seen when the earlier of the two was, by whoever read it then.
        try db.execute(
            """
            UPDATE book SET (first_seen, source) = (SELECT o.first_seen, o.source FROM book o WHERE o.id = ?1)
            WHERE id = ?2 AND first_seen > (SELECT o.first_seen FROM book o WHERE o.id = ?1)
            """, [from, target])
        try db.execute("DELETE FROM book WHERE id = ?", [from])
        try recordHistory(db, target, history)
        try refresh(db, target, now: now)
    }

    /// Once, after the upgrade that made ISBNs part of a work's identity (its migration leaves the note
    /// `merge_by_isbn` in `setting`): ISBNs stored before are checked (a failing one is dropped, an ISBN-10 made
    /// ISBN-13), and entries that share one are merged, as a new sighting of the book would merge them. Runs
    /// in one BEGIN IMMEDIATE transaction, like a migration, so two processes starting together do it once.
    static func mergeWorksSharingAnISBN(_ db: any DatabaseConnection, now: Date) throws(StoreError) {
        try db.begin(.write)
        do {
            if try db.queryOne("SELECT 1 AS one FROM setting WHERE key = 'merge_by_isbn'") != nil {
                for row in try db.query("SELECT DISTINCT isbn13 FROM book_sighting WHERE isbn13 IS NOT NULL") {
                    let stored: String = try row.required("isbn13", of: "book_sighting")
                    let checked = ISBN(stored)
                    guard checked?.isbn13 != stored else { continue } // already in its checked form
                    try db.execute(
                        """
                        UPDATE book_sighting SET isbn13 = ?1, isbn10 = ?2, isbn_source = CASE WHEN ?1 IS NULL THEN NULL ELSE isbn_source END
                        WHERE isbn13 = ?3
                        """, [checked?.isbn13, checked?.isbn10, stored])
                }
                for row in try db.query(
                    """
                    SELECT isbn13 FROM book_sighting WHERE isbn13 IS NOT NULL GROUP BY isbn13 HAVING COUNT(DISTINCT book_id) > 1
                    """)
                {
                    let isbn: String = try row.required("isbn13", of: "book_sighting")
                    let ids = try db.query("SELECT DISTINCT book_id FROM book_sighting WHERE isbn13 = ?", [isbn])
                        .map { row throws(StoreError) in
                            try row.required("book_id", of: "book_sighting", as: Int64.self)
                        }
                    let group = try works(ids, db)
                    guard let target = group.first(where: \.matched) ?? group.first else { continue } // none left
                    for other in group where other.id != target.id {
                        try merge(
                            other.id, into: target.id, db, now: now,
                            history: LibraryDocument.Decision(
                                action: "merged", by: "shelfd", at: now,
                                detail:
                                    "«\(other.title)» (\(other.key)) into «\(target.title)» (\(target.key)): both were seen with ISBN \(isbn)"
                            ))
                    }
                }
                try db.execute("DELETE FROM setting WHERE key = 'merge_by_isbn'")
            }
            try db.commit()
        } catch {
            db.rollback()
            throw error
        }
    }

    /// Recomputes a book from its sightings: the title and author of the reading a person decided, else the
    /// most confident one; the best confidence; verified when a person decided or any reading was verified.
    /// A book no photo shows any more is removed (with its history).
    static func refresh(_ db: any DatabaseConnection, _ id: Int64, now: Date) throws(StoreError) {
        try refresh(db, [id], now: now)
    }

    /// The same for several books at once: one statement for them all (and one more when some lost their last sighting).
    static func refresh(_ db: any DatabaseConnection, _ ids: Set<Int64>, now: Date) throws(StoreError) {
        guard !ids.isEmpty else { return }
        let list = ids.sorted().map(String.init).joined(separator: ",")
        try db.execute(
            """
            UPDATE book SET (title, author, confidence, status) = (
                SELECT s.title,
                       COALESCE(s.author, (SELECT a.author FROM book_sighting a WHERE a.book_id = book.id AND a.author IS NOT NULL
                                           ORDER BY a.decided DESC, a.confidence DESC LIMIT 1)),
                       (SELECT MAX(c.confidence) FROM book_sighting c WHERE c.book_id = book.id),
                       CASE WHEN EXISTS (SELECT 1 FROM book_sighting v WHERE v.book_id = book.id AND (v.decided = 1 OR v.status = 'verified'))
                            THEN 'verified' ELSE 'needs_review' END
                FROM book_sighting s WHERE s.book_id = book.id ORDER BY s.decided DESC, s.confidence DESC, s.seen_at LIMIT 1),
                updated_at = ?
            WHERE id IN (\(list)) AND EXISTS (SELECT 1 FROM book_sighting e WHERE e.book_id = book.id)
            """, [now])
        guard db.changes < ids.count else { return }
        try db.execute(
            "DELETE FROM book WHERE id IN (\(list)) AND NOT EXISTS (SELECT 1 FROM book_sighting e WHERE e.book_id = book.id)"
        )
    }

    /// Removes a photo's sightings before its new reading is added. Returns the books that lost one: the caller
    /// refreshes them once the new reading is in, so a book read again keeps its row, history and first sighting.
    static func forgetSightings(_ db: any DatabaseConnection, of sha256: String) throws -> [Int64] {
        try db.query("DELETE FROM book_sighting WHERE sha256 = ? RETURNING book_id", [sha256]).compactMap {
            $0.int("book_id")
        }
    }

    /// Adds a step to a work's history, unless the same step (action, by whom, detail) is already there: reading
    /// the same photo again does not repeat it.
    static func recordHistory(_ db: any DatabaseConnection, _ bookID: Int64, _ decision: LibraryDocument.Decision)
        throws(StoreError)
    {
        try recordHistory(db, [(bookID, decision)])
    }

    /// A step a person took on a work (`action` by `user`), with what they decided in words.
    static func recordPersonStep(
        _ db: any DatabaseConnection, _ bookID: Int64, _ action: String, detail: String, now: Date
    ) throws(StoreError) {
        try recordHistory(db, bookID, LibraryDocument.Decision(action: action, by: "user", at: now, detail: detail))
    }

    /// Steps of one work or several in one statement (a photo's readings: detection, match, review), in this order.
    static func recordHistory(
        _ db: any DatabaseConnection,
        _ decisions: [(bookID: Int64, step: LibraryDocument.Decision)]
    ) throws(StoreError) {
        var steps: [(bookID: Int64, step: LibraryDocument.Decision)] = []
        for (bookID, step) in decisions
        where !steps.contains(where: {
            ($0.bookID, $0.step.action, $0.step.by, $0.step.detail) == (bookID, step.action, step.by, step.detail)
        }) {
            steps.append((bookID, step))
        }
        guard !steps.isEmpty else { return }
        let rows = Array(
            repeating: "SELECT ? AS book_id, ? AS action, ? AS agent, ? AS at, ? AS detail", count: steps.count)
        try db.execute(
            """
            INSERT INTO book_history (book_id, action, agent, at, detail)
            SELECT s.book_id, s.action, s.agent, s.at, s.detail FROM (\(rows.joined(separator: " UNION ALL "))) AS s
            WHERE NOT EXISTS (SELECT 1 FROM book_history h WHERE h.book_id = s.book_id AND h.action = s.action
                              AND h.agent = s.agent AND h.detail IS NOT DISTINCT FROM s.detail)
            """,
            steps.flatMap { [$0.bookID, $0.step.action, $0.step.by, $0.step.at, $0.step.detail] as [any SQLBindable] })
    }
}
