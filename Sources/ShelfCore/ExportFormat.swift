import Foundation

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

    package init(
        exclusiveShelf: ReadingShelf = .toRead, includeUnverified: Bool = false, timeZone: TimeZone = .current,
        reviewFolder: String = "review"
    ) {
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

    package init(data: Data, count: Int, unverified: [LibraryDocument.Entry], withoutISBN: [LibraryDocument.Entry]) {
        self.data = data; self.count = count; self.unverified = unverified; self.withoutISBN = withoutISBN
    }
}
