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
        var row = [
            book.title,
            book.authors.joined(separator: ", "),
            "",
            book.isbn?.isbn13 ?? "",
            "",                                                        // paperback or hardcover: not known
            status.rawValue,
            days.string(book.added, separator: "/"),
            "", "",
            status == .read ? "1" : "0",
        ]
        row += Array(repeating: "", count: 11)                         // moods … content warning description
        row += [book.tagList(), "Yes"]                                 // photographed on a shelf: owned
        return row
    }
}
