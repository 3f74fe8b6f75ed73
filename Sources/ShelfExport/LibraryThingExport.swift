import Foundation
import ShelfCore
/// The tab-separated file LibraryThing exports (More → Import/Export), which its importer recognises.
struct LibraryThingExport: BookTable {
    static let columns = [
        "Book Id", "Title", "Sort Character", "Primary Author", "Primary Author Role", "Secondary Author",
        "Secondary Author Roles", "Publication", "Date", "Review", "Rating", "Comment", "Private Comment", "Summary",
        "Media", "Physical Description", "Weight", "Height", "Thickness", "Length", "Dimensions", "Page Count", "LCCN",
        "Acquired", "Date Started", "Date Read", "Barcode", "BCID", "Tags", "Collections", "Languages",
        "Original Languages", "LC Classification", "ISBN", "ISBNs", "Subjects", "Dewey Decimal", "Dewey Wording",
        "Other Call Number", "Copies", "Source", "Entry Date", "From Where", "OCLC", "Work id", "Lending Patron",
        "Lending Status", "Lending Start", "Lending End", "List Price", "Purchase Price", "Value", "Condition", "ISSN",
    ]
    static var separator: DelimitedText.Separator { .tab }

    var days: DayStamp

    func row(_ book: ExportedBook) -> [String] {
        var fields = [String: String?]()
        fields["Title"] = book.title
        // LibraryThing writes people surname first, several secondary authors apart with "|".
        fields["Primary Author"] = book.authors.first.map(AuthorNames.lastFirst)
        fields["Secondary Author"] = book.otherAuthors.map(AuthorNames.lastFirst).joined(separator: "|")
        fields["Date"] = book.year.map(String.init)
        fields["Tags"] = book.tagList()
        fields["ISBN"] = book.isbn.map { "[\($0.isbn13)]" } // its own export brackets the ISBN
        fields["ISBNs"] = book.isbns.flatMap { [$0.isbn13] + ($0.isbn10.map { [$0] } ?? []) }.joined(separator: ", ")
        fields["Copies"] = "1"
        fields["Entry Date"] = days.string(book.added, separator: "-")
        return Self.row(fields)
    }
}
