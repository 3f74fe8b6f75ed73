import Foundation
import ShelfCore

/// Turns the library (or the review queue) into one format's file. Pure: no files, no clock.
package enum LibraryExport {
    /// `generatedAt` stamps the `json` document; the other formats have no such field.
    package static func export(
        _ format: ExportFormat, library: [LibraryDocument.Entry], reviews: [ReviewDocument] = [],
        options: ExportOptions = ExportOptions(), generatedAt: Date
    ) throws -> ExportResult {
        var data = Data()
        let sorted = reviews.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        var result = try stream(
            format, pages: { try $0(library) }, reviews: { if !sorted.isEmpty { try $0(sorted) } },
            options: options, generatedAt: generatedAt, to: { data += $0 })
        result.data = data
        return result
    }

    /// The export written a page of works at a time to `append`, never whole in memory: `pages` calls its argument
    /// once per page, first seen first. The result's `data` is empty; its counts and lists are what was left out.
    /// `reviews` gives the open review items the same way, oldest first (only the `review` format reads them).
    package static func stream(
        _ format: ExportFormat, pages: (_ page: ([LibraryDocument.Entry]) throws -> Void) throws -> Void,
        reviews: (_ page: ([ReviewDocument]) throws -> Void) throws -> Void = { _ in },
        options: ExportOptions = ExportOptions(), generatedAt: Date,
        to append: (Data) throws -> Void
    ) throws -> ExportResult {
        switch format {
        case .json:
            // library.json's document: each work bounded as library.json holds it.
            var count = 0
            try LibraryDocument.stream(
                generatedAt: generatedAt,
                pages: { body in
                    try withoutActuallyEscaping(body) { body in
                        try pages { page in
                            count += page.count; try body(page)
                        }
                    }
                }, to: append)
            try append(Data("\n".utf8))
            return ExportResult(data: Data(), count: count, unverified: [], withoutISBN: [])
        case .review:
            let export = ReviewExport(reviewFolder: options.reviewFolder)
            try append(Data(export.header.utf8))
            var count = 0
            try withoutActuallyEscaping(append) { append in
                try reviews { page in
                    count += page.count; try append(Data(export.rows(page).utf8))
                }
            }
            return ExportResult(data: Data(), count: count, unverified: [], withoutISBN: [])
        case .goodreads:
            return try table(
                GoodreadsExport(shelf: options.exclusiveShelf, days: DayStamp(options.timeZone)), pages, options, append
            )
        case .storygraph:
            return try table(
                StoryGraphExport(status: options.exclusiveShelf, days: DayStamp(options.timeZone)), pages, options,
                append)
        case .librarything:
            return try table(LibraryThingExport(days: DayStamp(options.timeZone)), pages, options, append)
        case .libib:
            return try table(LibibExport(days: DayStamp(options.timeZone)), pages, options, append)
        }
    }

    private static func table(
        _ format: some BookTable, _ pages: (([LibraryDocument.Entry]) throws -> Void) throws -> Void,
        _ options: ExportOptions, _ append: (Data) throws -> Void
    ) throws -> ExportResult {
        let separator = type(of: format).separator
        var result = ExportResult(data: Data(), count: 0, unverified: [], withoutISBN: [])
        try append(Data(separator.text([type(of: format).columns]).utf8))
        try withoutActuallyEscaping(append) { append in
            try pages { page in
                var rows: [[String]] = []
                for entry in page {
                    // Kept bounded, as library.json holds them: a streamed export keeps these lists, never whole histories.
                    if entry.status != .verified && !options.includeUnverified {
                        result.unverified.append(entry.bounded()); continue
                    }
                    let book = ExportedBook(entry)
                    if type(of: format).needsISBN && book.isbn == nil {
                        result.withoutISBN.append(entry.bounded()); continue
                    }
                    rows.append(format.row(book))
                }
                result.count += rows.count
                try append(Data(separator.text(rows).utf8))
            }
        }
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
