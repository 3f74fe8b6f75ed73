import Foundation

/// `shelfd shelf show --json` and `/api/v1/shelves/<name>` (docs/library.md, "Shelves"): a shelf's inventory in order, left to
/// right, and what its last closed round changed.
package struct ShelfDocument: Codable, Sendable, Equatable {
    /// One work on the shelf, at its place.
    @dynamicMemberLookup
    package struct Entry: Codable, Sendable, Equatable {
        package var book: SeenBook
        /// 1 for the leftmost.
        package var position: Int
        package init(_ book: SeenBook, position: Int) { self.book = book; self.position = position }
        /// The book's facts, read as the entry's own (`entry.title`), as its JSON writes them.
        package subscript<Fact>(dynamicMember fact: KeyPath<SeenBook, Fact>) -> Fact { book[keyPath: fact] }

        // The book's keys and `position` side by side, as `shelfd.shelf/1` has them.
        enum CodingKeys: String, CodingKey { case position }
        package init(from decoder: any Decoder) throws {
            book = try SeenBook(from: decoder)
            position = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .position)
        }
        package func encode(to encoder: any Encoder) throws {
            try book.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(position, forKey: .position)
        }
    }

    /// A work a round found changed: `from` (arrived; nil when new to the library) or `to` (moved out).
    package struct Change: Codable, Sendable, Equatable {
        package var work: String
        package var title: String
        package var author: String?
        /// An arrival says where from, even when it is nowhere (`"from": null`).
        package var isArrival: Bool
        package var from: String?
        package var to: String?
        package init(
            work: String, title: String, author: String?, isArrival: Bool = false, from: String? = nil,
            to: String? = nil
        ) {
            self.work = work; self.title = title; self.author = author; self.isArrival = isArrival; self.from = from
            self.to = to
        }
        enum CodingKeys: String, CodingKey { case work, title, author, from, to }
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(work, forKey: .work)
            try c.encode(title, forKey: .title)
            try c.encode(author, forKey: .author)
            if isArrival { try c.encode(from, forKey: .from) }
            if let to { try c.encode(to, forKey: .to) }
        }
        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            work = try c.decode(String.self, forKey: .work)
            title = try c.decode(String.self, forKey: .title)
            author = try c.decodeIfPresent(String.self, forKey: .author)
            isArrival = c.contains(.from)
            from = try c.decodeIfPresent(String.self, forKey: .from)
            to = try c.decodeIfPresent(String.self, forKey: .to)
        }
    }

    package struct Changes: Codable, Sendable, Equatable {
        package var arrived: [Change]
        package var missing: [Change]
        package var movedOut: [Change]
        enum CodingKeys: String, CodingKey { case arrived, missing, movedOut = "moved_out" }
        package init(arrived: [Change] = [], missing: [Change] = [], movedOut: [Change] = []) {
            self.arrived = arrived; self.missing = missing; self.movedOut = movedOut
        }
        package var isEmpty: Bool { arrived.isEmpty && missing.isEmpty && movedOut.isEmpty }
    }

    /// A round: the photos of the shelf that arrived within `[shelves] round_minutes` of each other.
    package struct Round: Codable, Sendable, Equatable {
        package var openedAt: Date
        package var lastPhotoAt: Date
        /// Nil while open.
        package var closedAt: Date?
        package var photos: Int
        /// Photos of the round that could not be read: while any, no book is called missing.
        package var unread: Int
        enum CodingKeys: String, CodingKey {
            case photos, unread, openedAt = "opened_at", lastPhotoAt = "last_photo_at", closedAt = "closed_at"
        }
        package init(openedAt: Date, lastPhotoAt: Date, closedAt: Date?, photos: Int, unread: Int) {
            self.openedAt = openedAt; self.lastPhotoAt = lastPhotoAt; self.closedAt = closedAt; self.photos = photos
            self.unread = unread
        }
    }

    package var schema = "shelfd.shelf/1"
    package var shelf: String
    package var books: [Entry]
    /// The last closed round, and the round still gathering photos, if any.
    package var lastRound: Round?
    package var openRound: Round?
    /// What the last closed round changed, as it stands now: a book a later photo saw is no longer missing.
    package var changes: Changes
    enum CodingKeys: String, CodingKey {
        case schema, shelf, books, changes, lastRound = "last_round", openRound = "open_round"
    }
    package init(shelf: String, books: [Entry], lastRound: Round?, openRound: Round?, changes: Changes) {
        self.shelf = shelf; self.books = books; self.lastRound = lastRound; self.openRound = openRound
        self.changes = changes
    }
}

/// One line of `shelfd shelf list` and `/api/v1/shelves`.
package struct ShelfSummary: Codable, Sendable, Equatable {
    package var shelf: String
    /// The inventory when its last round closed (nil before the first closes).
    package var books: Int?
    package var lastRound: ShelfDocument.Round?
    package var openRound: ShelfDocument.Round?
    /// Books of the shelf missing now, and lent now.
    package var missing: Int
    package var lent: Int
    enum CodingKeys: String, CodingKey {
        case shelf, books, missing, lent, lastRound = "last_round", openRound = "open_round"
    }
    package init(
        shelf: String, books: Int?, lastRound: ShelfDocument.Round?, openRound: ShelfDocument.Round?,
        missing: Int, lent: Int
    ) {
        self.shelf = shelf; self.books = books; self.lastRound = lastRound; self.openRound = openRound
        self.missing = missing; self.lent = lent
    }
}

/// What a person is told after asking to close a shelf's round (`shelfd shelf close`).
package enum RoundClosing: Sendable, Equatable {
    case closed(ShelfDocument.Changes)
    /// It closes as soon as these photos of it are read.
    case waiting(photos: Int)
    case nothingOpen
}

/// A book lent from a shelf, as the shelves page lists it: to whom, since when.
package struct ShelfLoan: Sendable, Equatable {
    package var work, title: String
    package var author: String?
    package var shelf, to: String
    package var since: Date
    package init(work: String, title: String, author: String?, shelf: String, to: String, since: Date) {
        self.work = work; self.title = title; self.author = author; self.shelf = shelf; self.to = to
        self.since = since
    }
}

/// A person's answer about a book a round did not see (`shelfd shelf answer`, the shelf page).
package enum ShelfAnswer: Sendable, Equatable {
    /// Lent to someone: listed as lent until a photo sees it again.
    case lent(to: String)
    /// Gone for good: it leaves the shelf's inventory; the work stays in the library with its history.
    case gone
    /// Still there: the round misjudged its place.
    case here

    /// The history step's action.
    package var action: String {
        switch self {
        case .lent: "lent"
        case .gone: "gone"
        case .here: "still_there"
        }
    }
}

/// A work, the photo that saw it last, and whether it is missing or lent: what `shelf show` says of each book of a
/// shelf and `library find` of each work it finds, under the same keys (docs/library.md, "Shelves").
package struct SeenBook: Codable, Sendable, Equatable {
    package var work: String
    package var title: String
    package var author: String?
    /// The arrival of the photo that saw it last.
    package var lastSeen: Date
    /// That photo, relative to incoming/, and the book's box in it (for the crop of where it stands).
    package var photo: String
    package var photoSHA256: String
    package var box: Box?
    /// Set while the book is missing (not seen where it stood), from the round that found it so.
    package var missingSince: Date?
    /// Set while the book is lent (until a photo sees it again), with the date of the loan.
    package var lentTo: String?
    package var lentSince: Date?
    enum CodingKeys: String, CodingKey {
        case work, title, author, photo, box, lastSeen = "last_seen", photoSHA256 = "photo_sha256",
            missingSince = "missing_since", lentTo = "lent_to", lentSince = "lent_since"
    }
    /// `mark`: the work's standing mark, which says whether it is missing or lent.
    package init(
        work: String, title: String, author: String?, lastSeen: Date, photo: String, photoSHA256: String, box: Box?,
        mark: ShelfMark? = nil
    ) {
        self.work = work; self.title = title; self.author = author; self.lastSeen = lastSeen; self.photo = photo
        self.photoSHA256 = photoSHA256; self.box = box
        missingSince = mark?.missingSince; lentTo = mark?.lentTo; lentSince = mark?.lentSince
    }
}

/// Where a book is: `shelfd library find` and the library page's search.
@dynamicMemberLookup
package struct BookWhereabouts: Codable, Sendable, Equatable {
    package var book: SeenBook
    /// The shelf of its latest sighting ("" at the top of incoming/), and its place there (1 = leftmost) when the
    /// shelf's rounds have placed it.
    package var shelf: String
    package var position: Int?
    package init(_ book: SeenBook, shelf: String, position: Int?) {
        self.book = book; self.shelf = shelf; self.position = position
    }
    /// The book's facts, read as its own (`found.lentTo`), as its JSON writes them.
    package subscript<Fact>(dynamicMember fact: KeyPath<SeenBook, Fact>) -> Fact { book[keyPath: fact] }

    // The book's keys beside `shelf` and `position`, in one object.
    enum CodingKeys: String, CodingKey { case shelf, position }
    package init(from decoder: any Decoder) throws {
        book = try SeenBook(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        shelf = try container.decode(String.self, forKey: .shelf)
        position = try container.decodeIfPresent(Int.self, forKey: .position)
    }
    package func encode(to encoder: any Encoder) throws {
        try book.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(shelf, forKey: .shelf)
        try container.encodeIfPresent(position, forKey: .position)
    }

    /// "7th from the left on den/top".
    package var placeInWords: String {
        let place = shelf.isEmpty ? "at the top of incoming/" : "on \(shelf)"
        guard let position else { return place }
        return "\(Self.ordinal(position)) from the left \(place)"
    }

    package static func ordinal(_ n: Int) -> String {
        let suffix =
            (11...13).contains(n % 100) ? "th" : ["th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"][n % 10]
        return "\(n)\(suffix)"
    }
}
