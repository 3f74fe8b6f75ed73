/// One book as a source knows it: a row of the local catalogue, an OpenLibrary work or edition,
/// a Google Books volume.
package struct CatalogueRecord: Codable, Sendable, Hashable {
    /// `catalogue`, `openlibrary` or `googlebooks`.
    package var source: String
    /// Stable within the source: `catalogue:<row id>`, `/works/OL893415W`, a Google Books volume id.
    package var key: String
    package var title: String
    package var author: String?
    package var isbn13: String?
    package var isbn10: String?
    package var year: Int?
    /// Another identifier printed on spines, when the catalogue has one (a library's call number, `796.41 Lib`).
    package var tag: String?
    package var series: String?

    package init(
        source: String, key: String, title: String, author: String? = nil, isbn13: String? = nil,
        isbn10: String? = nil, year: Int? = nil, tag: String? = nil, series: String? = nil
    ) {
        self.source = source; self.key = key; self.title = title; self.author = author
        self.isbn13 = isbn13; self.isbn10 = isbn10; self.year = year; self.tag = tag; self.series = series
    }
}

/// A record scored against what a spine showed (0…1, ours, not the source's ranking).
package struct MatchCandidate: Codable, Sendable, Hashable {
    package var record: CatalogueRecord
    package var score: Double
    /// Set when the candidate is a work already in the library: the shelf it was last seen on ("" for photos at the
    /// top of incoming/). Its record is the work's own (source `library` when the work matched no record).
    package var libraryShelf: String?

    package init(record: CatalogueRecord, score: Double, libraryShelf: String? = nil) {
        self.record = record; self.score = score; self.libraryShelf = libraryShelf
    }

    /// "in your library, on shelf living-room", for a person choosing.
    package var libraryLabel: String? {
        libraryShelf.map { $0.isEmpty ? "in your library" : "in your library, on shelf \($0)" }
    }
}

/// A work of the library as a reading's evidence: what it is, and the shelves its other photos saw it on.
package struct LibraryWork: Sendable, Equatable {
    package var key: String
    package var title: String
    package var author: String?
    package var isbn13: String?
    package var isbn10: String?
    /// Its matched record, when it has one.
    package var match: BookMatch?
    /// The shelves it was seen on, "" for the top of incoming/, and the one it was seen on last.
    package var shelves: Set<String>
    package var lastShelf: String

    package init(
        key: String, title: String, author: String?, isbn13: String?, isbn10: String?, match: BookMatch?,
        shelves: Set<String>, lastShelf: String
    ) {
        self.key = key; self.title = title; self.author = author; self.isbn13 = isbn13; self.isbn10 = isbn10
        self.match = match; self.shelves = shelves; self.lastShelf = lastShelf
    }

    /// The work as a candidate's record: its matched record, else the work itself (source `library`).
    package var record: CatalogueRecord {
        CatalogueRecord(
            source: match?.source ?? Self.source, key: match?.key ?? key, title: title, author: author,
            isbn13: isbn13, isbn10: isbn10, year: match?.year)
    }

    /// The source of a candidate that is a work of the library with no record of its own.
    package static let source = "library"
    /// The note of a reading taken as a sighting of a library work (`library_sighting: «Dune» (…), seen on …`): in
    /// its result, and as the "matched by library" step of the work's history.
    package static let sightingNote = "library_sighting"

    /// The key the library's works are looked up under by an edition's ISBN-13, beside their normalised titles
    /// (`LibraryRecords.works(under:besides:)`); a normalised title holds no colon, so the two never meet.
    package static func isbnKey(_ isbn13: String) -> String { "isbn:\(isbn13)" }

    /// The ISBN-13 an `isbnKey` names, nil for a title.
    package static func isbn(ofKey key: String) -> String? {
        key.hasPrefix("isbn:") ? String(key.dropFirst("isbn:".count)) : nil
    }
}

/// A book's accepted match, as written in results and the library (docs/photos.md).
package struct BookMatch: Codable, Sendable, Hashable {
    package var source: String
    package var key: String
    package var score: Double
    package var year: Int?
    package init(source: String, key: String, score: Double, year: Int?) {
        self.source = source; self.key = key; self.score = score; self.year = year
    }
}
