import Foundation
import ShelfCore

/// The open review queue as one CSV, for a spreadsheet or a script: what was read, why it is asked about,
/// the best candidate, and where the spine's crop is.
struct ReviewExport {
    static let columns = [
        "id", "photo", "title", "author", "isbn13", "confidence", "reasons", "best_title", "best_author", "best_isbn13",
        "best_score", "candidates", "crop", "created_at",
    ]

    var reviewFolder: String

    /// The header line; then `rows` of each page of items, given oldest first, as a person works through the queue.
    var header: String { DelimitedText.Separator.comma.text([Self.columns]) }

    func rows(_ reviews: [ReviewDocument]) -> String {
        DelimitedText.Separator.comma.text(reviews.map(row))
    }

    private func row(_ review: ReviewDocument) -> [String] {
        let best = review.candidates.first
        return [
            review.id,
            review.photo.path,
            review.book.title,
            review.book.author ?? "",
            review.book.isbn13 ?? "",
            Self.decimal(review.book.confidence),
            review.reasons.joined(separator: ";"),
            best?.record.title ?? "",
            best?.record.author ?? "",
            best?.record.isbn13 ?? "",
            best.map { Self.decimal($0.score) } ?? "",
            String(review.candidates.count),
            review.crop.map { reviewFolder.isEmpty ? $0 : "\(reviewFolder)/\($0)" } ?? "",
            review.createdAt.formatted(.iso8601),
        ]
    }

    static func decimal(_ value: Double) -> String { String(format: "%.2f", value) }
}
