import Foundation
import ShelfCore

/// A library entry as the exports see it: authors one by one, one checked edition, every shelf.
struct ExportedBook {
    var title: String
    /// "First Last", the first one being the main author.
    var authors: [String]
    /// The library's edition shown (seen in most photos, ties the one seen last), else the first edition seen.
    var isbn: ISBN?
    /// Every edition, the shown one first.
    var isbns: [ISBN]
    /// The shelf (sub-folder of incoming/) the book stands on now, where each app keeps a place.
    var shelf: String?
    var added: Date
    /// From the matched record, when there is one.
    var year: Int?

    init(_ entry: LibraryDocument.Entry) {
        title = entry.title
        authors = AuthorNames.split(entry.author)
        let shown = (entry.isbn13 ?? entry.isbn10).flatMap(ISBN.init)
        var all: [ISBN] = shown.map { [$0] } ?? []
        for edition in entry.editions { if let isbn = ISBN(edition.isbn13), !all.contains(isbn) { all.append(isbn) } }
        isbns = all
        isbn = all.first
        shelf = entry.shelf.flatMap { $0.isEmpty ? nil : $0 }
        added = entry.firstSeen
        year = entry.match?.year
    }

    var mainAuthor: String { authors.first ?? "" }
    var otherAuthors: [String] { Array(authors.dropFirst()) }

    /// The shelf as a tag; a comma inside a folder name would split it in a tag list, so it goes.
    func tagList(_ rename: (String) -> String = { $0 }) -> String {
        shelf.map {
            rename($0).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        } ?? ""
    }
}

/// A date as the calendar day it was in one time zone.
struct DayStamp {
    private let calendar: Calendar

    init(_ timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// `2024/03/05` with "/", `2024-03-05` with "-".
    func string(_ date: Date, separator: String) -> String {
        let day = calendar.dateComponents([.year, .month, .day], from: date)
        return [
            String(format: "%04d", day.year ?? 0), String(format: "%02d", day.month ?? 0),
            String(format: "%02d", day.day ?? 0),
        ]
        .joined(separator: separator)
    }
}
