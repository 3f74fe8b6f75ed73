import Foundation
import ShelfCore

/// What `shelfd export --format` can write.
package enum ExportFormat: String, Sendable, CaseIterable {
    case goodreads, storygraph, librarything, libib, json, review

    /// The extension of the default file, `exports/<format>.<extension>`.
    /// `exports/<name>`: where `shelfd export` writes by default, and the files kept current after each change.
    package var defaultFileName: String { "\(rawValue).\(fileExtension)" }

    package var fileExtension: String {
        switch self {
        case .goodreads, .storygraph, .libib, .review: "csv"
        case .librarything: "tsv"
        case .json: "json"
        }
    }

    /// Files another app imports. Only books a person can trust go there unless asked; `json` is the
    /// whole library and `review` is the open queue, so neither is filtered.
    package var isAppFormat: Bool {
        switch self {
        case .goodreads, .storygraph, .librarything, .libib: true
        case .json, .review: false
        }
    }
}

/// Choices that change what an export contains.
package struct ExportOptions: Sendable, Equatable {
    /// Goodreads' `Exclusive Shelf` and StoryGraph's `Read Status` for every book.
    package var exclusiveShelf: ReadingShelf
    /// Adds the books still waiting for review to the app formats.
    package var includeUnverified: Bool
    /// Dates are written as the calendar day it was where the person is.
    package var timeZone: TimeZone
    /// Put before each crop's file name in the review CSV (`review/<id>.jpg`).
    package var reviewFolder: String

    package init(exclusiveShelf: ReadingShelf = .toRead, includeUnverified: Bool = false, timeZone: TimeZone = .current,
                 reviewFolder: String = "review") {
        self.exclusiveShelf = exclusiveShelf; self.includeUnverified = includeUnverified
        self.timeZone = timeZone; self.reviewFolder = reviewFolder
    }
}

/// The bytes of one export, and what was left out of it, for the command to report.
package struct ExportResult: Sendable, Equatable {
    package var data: Data
    /// Rows written: books, or review items for `review`.
    package var count: Int
    /// Books still waiting for review, left out of an app format (see `ExportOptions.includeUnverified`).
    package var unverified: [LibraryDocument.Entry]
    /// Books left out because the format imports by ISBN only (`libib`).
    package var withoutISBN: [LibraryDocument.Entry]
}

/// Turns the library (or the review queue) into one format's file. Pure: no files, no clock.
package enum LibraryExport {
    /// `generatedAt` stamps the `json` document; the other formats have no such field.
    package static func export(_ format: ExportFormat, library: [LibraryDocument.Entry], reviews: [ReviewDocument] = [],
                               options: ExportOptions = ExportOptions(), generatedAt: Date) throws -> ExportResult {
        switch format {
        case .json:
            let data = try JSONStyle.encoder().encode(LibraryDocument(generatedAt: generatedAt, books: library))
            return ExportResult(data: data + Data("\n".utf8), count: library.count, unverified: [], withoutISBN: [])
        case .review:
            let text = ReviewExport(reviewFolder: options.reviewFolder).text(reviews)
            return ExportResult(data: Data(text.utf8), count: reviews.count, unverified: [], withoutISBN: [])
        case .goodreads:
            return table(GoodreadsExport(shelf: options.exclusiveShelf, days: DayStamp(options.timeZone)), library, options)
        case .storygraph:
            return table(StoryGraphExport(status: options.exclusiveShelf, days: DayStamp(options.timeZone)), library, options)
        case .librarything:
            return table(LibraryThingExport(days: DayStamp(options.timeZone)), library, options)
        case .libib:
            return table(LibibExport(days: DayStamp(options.timeZone)), library, options)
        }
    }

    private static func table(_ format: some BookTable, _ library: [LibraryDocument.Entry],
                              _ options: ExportOptions) -> ExportResult {
        var unverified: [LibraryDocument.Entry] = [], withoutISBN: [LibraryDocument.Entry] = [], rows: [[String]] = []
        for entry in library {
            if entry.status != .verified && !options.includeUnverified { unverified.append(entry); continue }
            let book = ExportedBook(entry)
            if type(of: format).needsISBN && book.isbn == nil { withoutISBN.append(entry); continue }
            rows.append(format.row(book))
        }
        let text = type(of: format).separator.text([type(of: format).columns] + rows)
        return ExportResult(data: Data(text.utf8), count: rows.count, unverified: unverified, withoutISBN: withoutISBN)
    }
}

/// One app's import file: its columns in its order, and a row per book.
protocol BookTable {
    static var columns: [String] { get }
    static var separator: DelimitedText.Separator { get }
    /// Books without an ISBN cannot be imported and are left out.
    static var needsISBN: Bool { get }
    func row(_ book: ExportedBook) -> [String]
}

extension BookTable {
    static var separator: DelimitedText.Separator { .comma }
    static var needsISBN: Bool { false }

    /// A row by column name, so a field can never slide into its neighbour's column; unnamed columns are empty.
    static func row(_ fields: [String: String?]) -> [String] {
        precondition(Set(fields.keys).isSubset(of: columns), "no such column: \(Set(fields.keys).subtracting(columns))")
        return columns.map { (fields[$0] ?? nil) ?? "" }
    }
}
