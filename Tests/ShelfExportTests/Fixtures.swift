import Foundation
import ShelfCore
import ShelfExport

/// A hand-made library with what trips exports up: ISBN-10 and 13, no ISBN, a 979 ISBN (no ISBN-10),
/// a surname with a particle, two authors in one string, a comma and quotes in a title, non-ASCII, several
/// shelves (one nested, one with a comma), a book seen just before midnight UTC, and one still in review.
enum Fixtures {
    static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    static func sighting(_ shelf: String?, _ seen: String, confidence: Double = 0.9) -> LibraryDocument.Sighting {
        LibraryDocument.Sighting(
            photo: (shelf.map { "\($0)/" } ?? "") + "IMG_0001.jpg", photoSHA256: "ab12", box: nil,
            confidence: confidence, shelf: shelf, seenAt: date(seen))
    }

    static let library: [LibraryDocument.Entry] = [
        LibraryDocument.Entry(
            work: "openlibrary:/works/OL893415W", title: "Dune", author: "Frank Herbert",
            isbn13: "9780441172719", isbn10: "0441172717", confidence: 0.93, status: .verified, source: "gemini",
            match: BookMatch(source: "openlibrary", key: "/works/OL893415W", score: 0.97, year: 1965),
            firstSeen: date("2024-03-05T10:00:00Z"),
            editions: [
                .init(isbn13: "9780441172719", isbn10: "0441172717", source: "gemini"),
                .init(isbn13: "9780340960196", isbn10: "0340960191", source: "openlibrary"),
            ],
            shelves: ["living-room"], shelf: "living-room", sightings: [sighting("living-room", "2024-03-05T10:00:00Z")]
        ),
        LibraryDocument.Entry(
            work: "title:left hand of darkness|guin", title: "The Left Hand of Darkness", author: "Ursula K. Le Guin",
            isbn13: nil, isbn10: nil, confidence: 0.88, status: .verified, source: "gemini",
            firstSeen: date("2024-03-06T23:30:00Z"),
            shelves: ["Bedroom", "living-room"], shelf: "living-room",
            sightings: [sighting("Bedroom", "2024-03-06T23:30:00Z"), sighting("living-room", "2024-03-07T08:00:00Z")]),
        LibraryDocument.Entry(
            work: "title:good omens|gaiman", title: "Good Omens", author: "Neil Gaiman & Terry Pratchett",
            isbn13: "9791032305690", isbn10: nil, confidence: 0.81, status: .verified, source: "gemini",
            firstSeen: date("2024-03-07T08:00:00Z"),
            shelves: ["living-room"], shelf: "living-room", sightings: [sighting("living-room", "2024-03-07T08:00:00Z")]
        ),
        LibraryDocument.Entry(
            work: "title:eats shoots leaves|truss", title: "Eats, Shoots & Leaves: The \"Zero Tolerance\" Approach",
            author: "Truss, Lynne", isbn13: "9781592400874", isbn10: "1592400876", confidence: 0.77, status: .verified,
            source: "gemini", firstSeen: date("2024-03-07T08:00:00Z"),
            shelves: ["Study, top"], shelf: "Study, top", sightings: [sighting("Study, top", "2024-03-07T08:00:00Z")]),
        LibraryDocument.Entry(
            work: "title:cien anos de soledad|marquez", title: "Cien años de soledad", author: "Gabriel García Márquez",
            isbn13: "9780307474728", isbn10: "0307474720", confidence: 0.9, status: .verified, source: "gemini",
            firstSeen: date("2024-03-08T12:00:00Z"),
            shelves: ["Estantería/Arriba"], shelf: "Estantería/Arriba",
            sightings: [sighting("Estantería/Arriba", "2024-03-08T12:00:00Z")]),
        LibraryDocument.Entry(
            work: "title:smudged spine|", title: "Smudged Spine", author: nil, isbn13: nil, isbn10: nil,
            confidence: 0.31, status: .needsReview, source: "gemini", firstSeen: date("2024-03-08T12:00:00Z"),
            sightings: [sighting(nil, "2024-03-08T12:00:00Z", confidence: 0.31)], reviewID: "5d41402abc4b"),
    ]

    static let reviews: [ReviewDocument] = {
        var smudged = Book(
            title: "Smudged Spine", author: nil, isbn13: nil, isbn10: nil, confidence: 0.31,
            box: Box(x1: 0.6, y1: 0.15, x2: 0.63, y2: 0.85), status: .needsReview, source: "gemini")
        smudged.reviewReasons = ["low_confidence", "no_match"]
        var wizard = Book(
            title: "A Wizard of Earthsea", author: "Le Guin", isbn13: nil, isbn10: nil, confidence: 0.55,
            box: nil, status: .needsReview, source: "gemini")
        wizard.reviewReasons = ["low_confidence", "ambiguous_match"]
        let candidates = [
            MatchCandidate(
                record: CatalogueRecord(
                    source: "catalogue", key: "catalogue:17", title: "A Wizard of Earthsea",
                    author: "Ursula K. Le Guin", isbn13: "9780547773742", year: 1968), score: 0.82),
            MatchCandidate(
                record: CatalogueRecord(
                    source: "catalogue", key: "catalogue:18", title: "The Tombs of Atuan",
                    author: "Ursula K. Le Guin"), score: 0.41),
        ]
        return [
            ReviewDocument(
                id: "5d41402abc4b", photo: .init(path: "IMG_0001.jpg", sha256: "ab12"), book: smudged,
                candidates: [], reasons: ["low_confidence", "no_match"], crop: nil,
                createdAt: date("2024-03-08T12:00:05Z")),
            ReviewDocument(
                id: "7d793037a076", photo: .init(path: "Bedroom/IMG_0002.jpg", sha256: "cd34"), book: wizard,
                candidates: candidates, reasons: ["low_confidence", "ambiguous_match"], crop: "7d793037a076.jpg",
                createdAt: date("2024-03-06T23:30:05Z")),
        ]
    }()

    /// Exports of the fixtures are compared in UTC, so the golden files do not depend on where tests run.
    static let options = ExportOptions(timeZone: TimeZone(identifier: "UTC")!)
}
