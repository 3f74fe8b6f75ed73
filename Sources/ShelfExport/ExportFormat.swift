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
        var data = Data()
        let sorted = reviews.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        var result = try stream(format, pages: { try $0(library) }, reviews: { if !sorted.isEmpty { try $0(sorted) } },
                                options: options, generatedAt: generatedAt, to: { data += $0 })
        result.data = data
        return result
    }

    /// The export written a page of works at a time to `append`, never whole in memory: `pages` calls its argument
    /// once per page, first seen first. The result's `data` is empty; its counts and lists are what was left out.
    /// `reviews` gives the open review items the same way, oldest first (only the `review` format reads them).
    package static func stream(_ format: ExportFormat, pages: (_ page: ([LibraryDocument.Entry]) throws -> Void) throws -> Void,
                               reviews: (_ page: ([ReviewDocument]) throws -> Void) throws -> Void = { _ in },
                               options: ExportOptions = ExportOptions(), generatedAt: Date,
                               to append: (Data) throws -> Void) throws -> ExportResult {
        switch format {
        case .json:
            // library.json's document: each work bounded as library.json holds it.
            var count = 0
            try LibraryDocument.stream(generatedAt: generatedAt, pages: { body in
                try withoutActuallyEscaping(body) { body in try pages { page in count += page.count; try body(page) } }
            }, to: append)
            try append(Data("\n".utf8))
            return ExportResult(data: Data(), count: count, unverified: [], withoutISBN: [])
        case .review:
            let export = ReviewExport(reviewFolder: options.reviewFolder)
            try append(Data(export.header.utf8))
            var count = 0
            try withoutActuallyEscaping(append) { append in
                try reviews { page in count += page.count; try append(Data(export.rows(page).utf8)) }
            }
            return ExportResult(data: Data(), count: count, unverified: [], withoutISBN: [])
        case .goodreads:
            return try table(GoodreadsExport(shelf: options.exclusiveShelf, days: DayStamp(options.timeZone)), pages, options, append)
        case .storygraph:
            return try table(StoryGraphExport(status: options.exclusiveShelf, days: DayStamp(options.timeZone)), pages, options, append)
        case .librarything:
            return try table(LibraryThingExport(days: DayStamp(options.timeZone)), pages, options, append)
        case .libib:
            return try table(LibibExport(days: DayStamp(options.timeZone)), pages, options, append)
        }
    }

    private static func table(_ format: some BookTable, _ pages: (([LibraryDocument.Entry]) throws -> Void) throws -> Void,
                              _ options: ExportOptions, _ append: (Data) throws -> Void) throws -> ExportResult {
        let separator = type(of: format).separator
        var result = ExportResult(data: Data(), count: 0, unverified: [], withoutISBN: [])
        try append(Data(separator.text([type(of: format).columns]).utf8))
        try withoutActuallyEscaping(append) { append in try pages { page in
            var rows: [[String]] = []
            for entry in page {
                // Kept bounded, as library.json holds them: a streamed export keeps these lists, never whole histories.
                if entry.status != .verified && !options.includeUnverified { result.unverified.append(entry.bounded()); continue }
                let book = ExportedBook(entry)
                if type(of: format).needsISBN && book.isbn == nil { result.withoutISBN.append(entry.bounded()); continue }
                rows.append(format.row(book))
            }
            result.count += rows.count
            try append(Data(separator.text(rows).utf8))
        } }
        return result
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
