import Foundation
import ShelfCore

/// The CSV StoryGraph exports from Manage Account, which its importer takes back.
struct StoryGraphExport: BookTable {
    static let columns = [
        "Title", "Authors", "Contributors", "ISBN/UID", "Format", "Read Status", "Date Added", "Last Date Read",
        "Dates Read", "Read Count", "Moods", "Pace", "Character- or Plot-Driven?", "Strong Character Development?",
        "Loveable Characters?", "Diverse Characters?", "Flawed Characters?", "Star Rating", "Review",
        "Content Warnings", "Content Warning Description", "Tags", "Owned?",
    ]

    var status: ReadingShelf
    var days: DayStamp

    func row(_ book: ExportedBook) -> [String] {
        Self.row([ // Format (paperback, hardcover): not known
            "Title": book.title,
            "Authors": book.authors.joined(separator: ", "),
            "ISBN/UID": book.isbn?.isbn13,
            "Read Status": status.rawValue,
            "Date Added": days.string(book.added, separator: "/"),
            "Read Count": status == .read ? "1" : "0",
            "Tags": book.tagList(),
            "Owned?": "Yes", // photographed on a shelf: owned
        ])
    }
}
