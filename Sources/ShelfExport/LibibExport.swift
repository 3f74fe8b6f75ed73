import Foundation
import ShelfCore
/// The CSV Libib exports and imports (one file for every kind of item; books are `item_type` book).
/// Libib skips a row without a valid ISBN or UPC, so those books are left out and listed instead.
struct LibibExport: BookTable {
    static let columns = [
        "item_type", "title", "creators", "first_name", "last_name", "collection", "ean_isbn13", "upc_isbn10",
        "description", "publisher", "publish_date", "group", "tags", "notes", "price", "length", "number_of_discs",
        "number_of_players", "age_group", "ensemble", "aspect_ratio", "esrb", "rating", "review", "review_date",
        "status", "began", "completed", "added", "copies",
    ]
    static var needsISBN: Bool { true }

    var days: DayStamp

    func row(_ book: ExportedBook) -> [String] {
        let main = book.authors.first.map(AuthorNames.givenAndFamily)
        return Self.row([
            "item_type": "book",
            "title": book.title,
            "creators": book.authors.joined(separator: ", "),
            "first_name": main?.given,
            "last_name": main?.family,
            "ean_isbn13": book.isbn?.isbn13,
            "upc_isbn10": book.isbn?.isbn10,
            "group": book.tagList(), // Libib's groups are where items are kept
            "added": days.string(book.added, separator: "-"),
            "copies": "1",
        ])
    }
}
