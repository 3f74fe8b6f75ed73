import Foundation
import ShelfCore

/// A person's edits of whole works (`shelfd library`, the library page). Each one is a decision on every
/// reading of the work, remembered per photo and reading in `review_decision` — the table `shelfd review`
/// writes — so the pipeline applies it again when a photo is read again, and placed through `apply` (the same
/// identity rule as a new reading: a shared ISBN or record joins works). One transaction each.
extension LibraryRecords {
    /// The work's title, author or ISBN in a person's words (nil keeps what is there; an empty author is none).
    /// The work keeps its record, so it stays the entry it was.
    package func editWork(_ key: String, title: String?, author: String?, isbn: ISBN?, now: Date) throws
        -> LibraryChange
    {
        try write { db in
            let work = try Self.workRow(db, key)
            let isbns = try db.query("SELECT DISTINCT isbn13 FROM book_sighting WHERE book_id = ?", [work.id]).map {
                $0.string("isbn13")
            }
            var changed: [String] = []
            if let title, title != work.title { changed.append("title") }
            if let author, author != (work.author ?? "") { changed.append("author") }
            if let isbn, isbns != [isbn.isbn13] { changed.append("ISBN") }
            guard !changed.isEmpty else {
                throw LibraryError(
                    .nothingToChange, "«\(work.title)» already has this title, author and ISBN: nothing to change.")
            }
            let detail = "edited \(changed.joined(separator: ", ")) in the library"
            let readings = try Self.placedReadings(db, of: work)
            var files = try Self.closeItems(db, ofWork: work.id) // decided now
            var target = work.id
            for reading in readings {
                var book = reading.decidedBook
                if let title { book.title = title }
                if let author { book.author = author.isEmpty ? nil : author }
                if let isbn { book.isbn13 = isbn.isbn13; book.isbn10 = isbn.isbn10 }
                target = try Self.redecide(
                    reading, as: book, isbnSource: isbn == nil ? reading.isbnSource : "user",
                    detail: detail, from: [work.id, target], db, now: now)
            }
            try Self.retire(work, into: target, db, now: now)
            for sha in Set(readings.map(\.sha256)) { try Self.closeJobIfReviewed(db, sha256: sha, now: now) }
            files.works.formUnion([work.id, target])
            files.photos.formUnion(readings.map(\.sha256))
            return LibraryChange(
                action: "edited", work: try Self.workKey(db, target) ?? key, detail: detail, files: files)
        }
    }

    /// Takes the work out of the library: every reading that put it there is rejected for its photo, so reading
    /// the same photo again does not bring it back; a photo that shows it anew (another photo, another reading)
    /// does.
    package func removeWork(_ key: String, now: Date) throws -> LibraryChange {
        try write { db in
            let work = try Self.workRow(db, key)
            let readings = try Self.placedReadings(db, of: work)
            let decision = StoredDecision(
                action: .rejected, book: nil, isbnSource: nil, detail: "removed from the library")
            var rejected = readings.flatMap { reading in reading.keys.map { (reading.sha256, $0) } }
            for row in try db.query("SELECT sha256, reading FROM review_item WHERE book_id = ?", [work.id]) {
                let book: Book = try row.requiredJSON("reading", of: "review_item")
                rejected.append((try row.required("sha256", of: "review_item"), book.titleKey))
            }
            for (sha, readingKey) in rejected {
                try Self.remember(decision, sha256: sha, readingKey: readingKey, db, now: now)
            }
            var files = try Self.closeItems(db, ofWork: work.id)
            files.works.insert(work.id)
            files.photos.formUnion(readings.map(\.sha256))
            try db.execute("DELETE FROM book_sighting WHERE book_id = ?", [work.id])
            try db.execute("DELETE FROM book WHERE id = ?", [work.id]) // its history goes with it
            for sha in Set(rejected.map { $0.0 }) { try Self.closeJobIfReviewed(db, sha256: sha, now: now) }
            let photos = Set(readings.map(\.sha256)).count
            return LibraryChange(
                action: "removed", work: nil,
                detail: "removed «\(work.title)» (\(work.key)), seen in \(photos) photo\(photos == 1 ? "" : "s")",
                files: files)
        }
    }

    /// Makes `from` part of `into`, which keeps its key, title and record: the merge a new reading does when it
    /// links two works (sightings, history and open items move; a `merged` step), then each reading of `from` is
    /// decided as `into`, so reading its photo again finds `into`.
    package func mergeWorks(_ fromKey: String, into intoKey: String, now: Date) throws -> LibraryChange {
        try write { db in
            let from = try Self.workRow(db, fromKey), into = try Self.workRow(db, intoKey)
            guard from.id != into.id else {
                throw LibraryError(.sameWork, "«\(from.title)» is already that work: nothing to merge.")
            }
            let readings = try Self.placedReadings(db, of: from)
            let ownPhotos = Set(
                try db.query("SELECT sha256 FROM book_sighting WHERE book_id = ?", [into.id]).compactMap {
                    $0.string("sha256")
                })
            try Self.merge(
                from.id, into: into.id, db, now: now,
                history: LibraryDocument.Decision(
                    action: "merged", by: "user", at: now,
                    detail: "«\(from.title)» (\(from.key)) into «\(into.title)» (\(into.key)): merged by a person"))
            let detail = "merged into «\(into.title)»"
            var target = into.id
            for reading in readings {
                var book = reading.decidedBook
                book.title = into.title; book.author = into.author; book.match = into.match
                if ownPhotos.contains(reading.sha256) {
                    // The photo's sighting of `into` stayed (LibraryRecords.merge keeps one per photo): remember only.
                    let decision = StoredDecision(
                        action: .edited, book: book, isbnSource: reading.isbnSource, detail: detail)
                    for readingKey in reading.keys {
                        try Self.remember(decision, sha256: reading.sha256, readingKey: readingKey, db, now: now)
                    }
                } else {
                    target = try Self.redecide(
                        reading, as: book, isbnSource: reading.isbnSource, detail: detail,
                        from: [into.id, target], db, now: now)
                }
            }
            try Self.refresh(db, target, now: now)
            // The open items of `from` moved to `into`; their documents, which do not name the work, stay as they are.
            return LibraryChange(
                action: "merged", work: try Self.workKey(db, target) ?? into.key,
                detail: "merged «\(from.title)» (\(from.key)) into «\(into.title)» (\(into.key))",
                files: FilesChange(works: [from.id, into.id, target], photos: Set(readings.map(\.sha256))))
        }
    }

    /// One work as library.json writes it, or nil when no work has this key.
    package func libraryEntry(_ key: String) throws -> LibraryDocument.Entry? {
        try read { db in
            guard let id = try db.queryOne("SELECT id FROM book WHERE work_key = ?", [key])?.int("id") else {
                return nil
            }
            return try Self.entries(db, only: id).first
        }
    }

    /// One work's whole history, every sighting and every step (library.json holds it bounded), for
    /// `shelfd library show` and `/api/v1/library/<work>`.
    package func work(_ key: String) throws -> LibraryDocument.Entry {
        guard let entry = try libraryEntry(key) else { throw LibraryError.noSuchWork(key) }
        return entry
    }

    // MARK: Pieces

    /// Closes every open item of the work (a person decided the whole work); returns them as a change of review/.
    static func closeItems(_ db: any DatabaseConnection, ofWork id: Int64) throws -> FilesChange {
        var change = FilesChange()
        for row in try db.query("DELETE FROM review_item WHERE book_id = ? RETURNING id, sha256", [id]) {
            if let item = row.string("id") { change.closedItems.insert(item) }
            if let sha = row.string("sha256") { change.photos.insert(sha) }
        }
        return change
    }

    /// A work as an edit sees it.
    struct WorkRow {
        var id: Int64
        var key: String
        var title: String
        var author: String?
        var source: String
        var match: BookMatch?
    }

    static func workRow(_ db: any DatabaseConnection, _ key: String) throws -> WorkRow {
        guard let row = try db.queryOne("SELECT * FROM book WHERE work_key = ?", [key]), let id = row.int("id") else {
            throw LibraryError.noSuchWork(key)
        }
        let match = row.string("match_source").flatMap { source in
            row.string("match_key").map {
                BookMatch(
                    source: source, key: $0, score: row.double("match_score") ?? 0,
                    year: row.int("match_year").map(Int.init))
            }
        }
        return WorkRow(
            id: id, key: key, title: row.string("title") ?? "", author: row.string("author"),
            source: row.string("source") ?? "", match: match)
    }

    static func workKey(_ db: any DatabaseConnection, _ id: Int64) throws -> String? {
        try db.queryOne("SELECT work_key FROM book WHERE id = ?", [id])?.string("work_key")
    }

    /// One photo's reading as it stands in a work, and the keys its decisions are remembered by.
    struct PlacedReading {
        var sha256: String
        var photo: ReviewDocument.Photo
        var shelf: String?
        var book: Book
        var isbnSource: String?
        /// The `review_decision.reading_key`s that lead to this sighting: the reading's own title key, or, for
        /// a reading a person decided, the keys of the readings the decision was taken on.
        var keys: [String]

        /// The reading as a person's decision: verified, with nothing left to ask.
        var decidedBook: Book {
            var decided = book
            decided.status = .verified
            decided.candidates = nil; decided.reviewReasons = nil; decided.reviewID = nil
            return decided
        }
    }

    static func placedReadings(_ db: any DatabaseConnection, of work: WorkRow) throws -> [PlacedReading] {
        let workMatchKey = work.match.map { match in
            match.key.hasPrefix("\(match.source):") ? match.key : "\(match.source):\(match.key)"
        }
        let identity = try workIdentity(db, work, matchKey: workMatchKey)
        return try db.query(
            """
            SELECT s.*, p.relative_path FROM book_sighting s JOIN photo p ON p.sha256 = s.sha256
            WHERE s.book_id = ? ORDER BY s.seen_at, s.sha256
            """, [work.id]
        ).compactMap { row -> PlacedReading? in
            guard let sha = row.string("sha256"), let titleKey = row.string("title_key") else { return nil }
            var match: BookMatch?
            if let key = row.string("match_key") {
                match =
                    key == workMatchKey
                    ? work.match
                    : BookMatch(source: String(key.prefix { $0 != ":" }), key: key, score: 0, year: nil)
            }
            let box = row.string("box").flatMap { try? JSONDecoder().decode(Box.self, from: Data($0.utf8)) }
            let book = Book(
                title: row.string("title") ?? work.title, author: row.string("author"), isbn13: row.string("isbn13"),
                isbn10: row.string("isbn10"), confidence: row.double("confidence") ?? 0, box: box,
                status: try row.required("status", of: "book_sighting"), source: work.source,
                match: match)
            // A person's decisions on this photo whose book belongs here (the identity rule: an ISBN or record of
            // the work, or its title when unmatched): two readings of one photo share one sighting, and each
            // reading's key must lead back to the work.
            var keys = [titleKey]
            for decision in try db.query(
                "SELECT reading_key, book FROM review_decision WHERE sha256 = ? AND book IS NOT NULL", [sha])
            {
                let key: String = try decision.required("reading_key", of: "review_decision")
                let decided: Book = try decision.requiredJSON("book", of: "review_decision")
                let linked =
                    decided.checkedISBN.map { identity.isbns.contains($0.isbn13) } == true
                    || decided.matchKey.map(identity.records.contains) == true
                    || (decided.matchKey == nil && identity.titles.contains(decided.titleKey))
                if linked && !keys.contains(key) { keys.append(key) }
            }
            return PlacedReading(
                sha256: sha, photo: ReviewDocument.Photo(path: row.string("relative_path") ?? "", sha256: sha),
                shelf: row.string("shelf"), book: book, isbnSource: row.string("isbn_source"), keys: keys)
        }
    }

    /// What links a reading to the work: its ISBNs, its records, its title keys.
    private static func workIdentity(
        _ db: any DatabaseConnection, _ work: WorkRow,
        matchKey: String?
    ) throws -> (isbns: Set<String>, records: Set<String>, titles: Set<String>) {
        let rows = try db.query("SELECT isbn13, match_key, title_key FROM book_sighting WHERE book_id = ?", [work.id])
        return (
            Set(rows.compactMap { $0.string("isbn13") }),
            Set(rows.compactMap { $0.string("match_key") } + [matchKey, work.key].compactMap { $0 }),
            Set(rows.compactMap { $0.string("title_key") } + [work.key])
        )
    }

    /// Remembers `decided` for the reading's photo and puts it back in the library where the identity rule
    /// places it. `from`: where the reading's sighting is, first choice first (an earlier reading may have
    /// merged its work into another). Returns the work it went to.
    static func redecide(
        _ reading: PlacedReading, as decided: Book, isbnSource: String?, detail: String, from bookIDs: [Int64],
        _ db: any DatabaseConnection, now: Date
    ) throws -> Int64 {
        let decision = StoredDecision(action: .edited, book: decided, isbnSource: isbnSource, detail: detail)
        for readingKey in reading.keys {
            try remember(decision, sha256: reading.sha256, readingKey: readingKey, db, now: now)
        }
        for bookID in bookIDs {
            try db.execute("DELETE FROM book_sighting WHERE book_id = ? AND sha256 = ?", [bookID, reading.sha256])
            if db.changes > 0 { break }
        }
        return try apply(
            decided, isbnSource: isbnSource, detail: detail, reading: reading.book, photo: reading.photo,
            shelf: reading.shelf, db, now: now)
    }

    /// After an edit moved every reading of `work` to another row (an unmatched work's new title is a new key):
    /// its history and first sighting go along, and the empty row goes.
    static func retire(_ work: WorkRow, into target: Int64, _ db: any DatabaseConnection, now: Date) throws {
        // merged already
        guard try db.queryOne("SELECT 1 AS one FROM book WHERE id = ?", [work.id]) != nil else { return }
        guard target != work.id,
            try db.queryOne("SELECT 1 AS one FROM book_sighting WHERE book_id = ?", [work.id]) == nil
        else {
            return try refresh(db, work.id, now: now)
        }
        try db.execute("UPDATE book_history SET book_id = ? WHERE book_id = ?", [target, work.id])
        try ShelfRounds.merge(work.id, into: target, db)
        try db.execute(
            """
            UPDATE book SET (first_seen, source) = (SELECT o.first_seen, o.source FROM book o WHERE o.id = ?1)
            WHERE id = ?2 AND first_seen > (SELECT o.first_seen FROM book o WHERE o.id = ?1)
            """, [work.id, target])
        try db.execute("DELETE FROM book WHERE id = ?", [work.id])
    }
}
