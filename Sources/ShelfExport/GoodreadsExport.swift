import Foundation
import ShelfCore

/// The CSV Goodreads exports from My Books → Import and export, which is also what its importer reads.
struct GoodreadsExport: BookTable {
    static let columns = [
        "Book Id", "Title", "Author", "Author l-f", "Additional Authors", "ISBN", "ISBN13", "My Rating",
        "Average Rating", "Publisher", "Binding", "Number of Pages", "Year Published", "Original Publication Year",
        "Date Read", "Date Added", "Bookshelves", "Bookshelves with positions", "Exclusive Shelf", "My Review",
        "Spoiler", "Private Notes", "Read Count", "Owned Copies",
    ]

    var shelf: ReadingShelf
    var days: DayStamp

    func row(_ book: ExportedBook) -> [String] {
        Self.row([ // "Book Id", Goodreads' own: unknown here
            "Title": book.title,
            "Author": book.mainAuthor,
            "Author l-f": book.authors.first.map(AuthorNames.lastFirst),
            "Additional Authors": book.otherAuthors.joined(separator: ", "),
            "ISBN": Self.formula(book.isbn?.isbn10), // ="…" keeps a spreadsheet from eating
            "ISBN13": Self.formula(book.isbn?.isbn13), // the leading zero, as Goodreads does
            "My Rating": "0", // not rated
            "Original Publication Year": book.year.map(String.init), // a matched work's first publication
            "Date Added": days.string(book.added, separator: "/"),
            "Bookshelves": book.tagList(Self.shelfName),
            "Exclusive Shelf": shelf.rawValue,
            "Read Count": shelf == .read ? "1" : "0",
            "Owned Copies": "1", // it was photographed on a shelf: owned
        ])
    }

    static func formula(_ isbn: String?) -> String { "=\"\(isbn ?? "")\"" }

    /// Goodreads shelf names are lower-case letters, digits, `-` and `_`: "Living Room/Top" → "living-room-top".
    static func shelfName(_ folder: String) -> String {
        var name = ""
        for character in folder.lowercased() {
            if character.isLetter || character.isNumber || character == "_" || character == "-" {
                name.append(character)
            } else if !name.isEmpty && name.last != "-" {
                name.append("-")
            }
        }
        while name.last == "-" { name.removeLast() }
        return name
    }
}
