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
        var fields = [String: String]()
        fields["item_type"] = "book"
        fields["title"] = book.title
        fields["creators"] = book.authors.joined(separator: ", ")
        fields["first_name"] = main?.given
        fields["last_name"] = main?.family
        fields["ean_isbn13"] = book.isbn?.isbn13
        fields["upc_isbn10"] = book.isbn?.isbn10
        fields["tags"] = book.tagList()
        fields["added"] = days.string(book.added, separator: "-")
        fields["copies"] = "1"
        return Self.columns.map { fields[$0] ?? "" }
    }
}
