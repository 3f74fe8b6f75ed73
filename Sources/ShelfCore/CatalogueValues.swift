import Foundation

/// What one imported file gave.
package struct CatalogueImportReport: Sendable, Equatable, Codable {
    package var path: String
    /// `csv`, `goodreads`, `storygraph`, `librarything`, `openlibrary-editions`, `openlibrary-works`, `openlibrary-authors`.
    package var format: String
    /// New entries (for an authors dump: authors named).
    package var imported: Int
    /// Rows already in the catalogue (the same ISBN, or the same title and surname).
    package var duplicates: Int
    /// Rows that could not be read; the first few reasons are kept.
    package var skipped: Int
    package var skipReasons: [String]

    package init(path: String, format: String, imported: Int, duplicates: Int, skipped: Int, skipReasons: [String]) {
        self.path = path; self.format = format; self.imported = imported; self.duplicates = duplicates
        self.skipped = skipped; self.skipReasons = skipReasons
    }

    enum CodingKeys: String, CodingKey {
        case path, format, imported, duplicates, skipped, skipReasons = "skip_reasons"
    }
}

/// What the local catalogue holds (`shelfd catalogue stats`).
package struct CatalogueStats: Sendable, Codable, Equatable {
    package struct Import: Sendable, Codable, Equatable {
        package var path: String
        package var format: String
        package var startedAt: Date
        /// Nil for an import that was interrupted.
        package var finishedAt: Date?
        package var imported: Int
        package var duplicates: Int
        package var skipped: Int

        package init(
            path: String, format: String, startedAt: Date, finishedAt: Date?, imported: Int, duplicates: Int,
            skipped: Int
        ) {
            self.path = path; self.format = format; self.startedAt = startedAt; self.finishedAt = finishedAt
            self.imported = imported; self.duplicates = duplicates; self.skipped = skipped
        }

        enum CodingKeys: String, CodingKey {
            case path, format, imported, duplicates, skipped, startedAt = "started_at", finishedAt = "finished_at"
        }
    }

    package var entries: Int
    package var withISBN: Int
    package var withTag: Int
    package var imports: [Import]

    /// Before any import.
    package init(entries: Int, withISBN: Int, withTag: Int, imports: [Import]) {
        self.entries = entries; self.withISBN = withISBN; self.withTag = withTag; self.imports = imports
    }

    package static let empty = CatalogueStats(entries: 0, withISBN: 0, withTag: 0, imports: [])

    enum CodingKeys: String, CodingKey { case entries, imports, withISBN = "with_isbn", withTag = "with_tag" }
}

/// What the matcher decided for a spine: taken without asking, offered for review, or no plausible record.
package enum MatchDecision: String, Codable, Sendable { case accepted, review, none }

/// One spine of `shelfd catalogue match --json`: the text, the decision, the best record and the
/// candidates with their scores. Absent values are written as null, so a script finds the same keys on
/// every line.
package struct SpineMatchLine: Codable, Sendable, Equatable {
    package struct Record: Codable, Sendable, Equatable {
        package var title: String
        package var author: String?
        package var isbn: String?
        package var source: String
        package var key: String
        /// A candidate's score; the match itself has the line's.
        package var score: Double?

        package init(_ candidate: MatchCandidate, withScore: Bool) {
            title = candidate.record.title.trimmingCharacters(in: .whitespaces)
            author = candidate.record.author
            isbn = candidate.record.isbn13 ?? candidate.record.isbn10
            source = candidate.record.source
            key = candidate.record.key
            score = withScore ? candidate.score : nil
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(title, forKey: .title)
            try container.encode(author, forKey: .author)
            try container.encode(isbn, forKey: .isbn)
            try container.encode(source, forKey: .source)
            try container.encode(key, forKey: .key)
            try container.encodeIfPresent(score.map(SpineMatchLine.rounded), forKey: .score)
        }
    }

    package var text: String
    package var match: Record?
    /// As the matcher gave it; written rounded to three places.
    package var score: Double
    package var decision: MatchDecision
    package var candidates: [Record]

    package init(text: String, match: Record?, score: Double, decision: MatchDecision, candidates: [Record]) {
        self.text = text; self.match = match; self.score = score; self.decision = decision; self.candidates = candidates
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(text, forKey: .text)
        try container.encode(match, forKey: .match)
        try container.encode(Self.rounded(score), forKey: .score)
        try container.encode(decision, forKey: .decision)
        try container.encode(candidates, forKey: .candidates)
    }

    static func rounded(_ score: Double) -> Double { (score * 1000).rounded() / 1000 }
}
