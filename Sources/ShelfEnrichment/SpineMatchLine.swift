import Foundation
import ShelfCore

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

        init(_ candidate: MatchCandidate, withScore: Bool) {
            title = candidate.record.title.trimmingCharacters(in: .whitespaces)
            author = candidate.record.author
            isbn = candidate.record.isbn13 ?? candidate.record.isbn10
            source = candidate.record.source
            key = candidate.record.key
            score = withScore ? SpineMatchLine.rounded(candidate.score) : nil
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(title, forKey: .title)
            try container.encode(author, forKey: .author)
            try container.encode(isbn, forKey: .isbn)
            try container.encode(source, forKey: .source)
            try container.encode(key, forKey: .key)
            try container.encodeIfPresent(score, forKey: .score)
        }
    }

    package var text: String
    package var match: Record?
    package var score: Double
    package var decision: MatchDecision
    package var candidates: [Record]

    package init(text: String, result: MatchResult) {
        self.text = text
        match = result.best.map { Record($0, withScore: false) }
        score = Self.rounded(result.best?.score ?? result.candidates.first?.score ?? 0)
        decision = result.decision
        candidates = result.candidates.map { Record($0, withScore: true) }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(text, forKey: .text)
        try container.encode(match, forKey: .match)
        try container.encode(score, forKey: .score)
        try container.encode(decision, forKey: .decision)
        try container.encode(candidates, forKey: .candidates)
    }

    static func rounded(_ score: Double) -> Double { (score * 1000).rounded() / 1000 }
}
