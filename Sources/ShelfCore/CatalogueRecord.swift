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

    package init(source: String, key: String, title: String, author: String? = nil, isbn13: String? = nil,
                 isbn10: String? = nil, year: Int? = nil, tag: String? = nil, series: String? = nil) {
        self.source = source; self.key = key; self.title = title; self.author = author
        self.isbn13 = isbn13; self.isbn10 = isbn10; self.year = year; self.tag = tag; self.series = series
    }
}

/// A record scored against what a spine showed (0…1, ours, not the source's ranking).
package struct MatchCandidate: Codable, Sendable, Hashable {
    package var record: CatalogueRecord
    package var score: Double
    package init(record: CatalogueRecord, score: Double) { self.record = record; self.score = score }
}

/// A book's accepted match, as written in results and the library (README, "The main job").
package struct BookMatch: Codable, Sendable, Hashable {
    package var source: String
    package var key: String
    package var score: Double
    package var year: Int?
    package init(source: String, key: String, score: Double, year: Int?) {
        self.source = source; self.key = key; self.score = score; self.year = year
    }
}
