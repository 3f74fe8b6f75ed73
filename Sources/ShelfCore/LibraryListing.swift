import Foundation

/// How the library page orders its rows.
package enum LibrarySort: String, Sendable, CaseIterable {
    case title, author, added, shelf
}

/// One row of the library page: enough to list a work, without its history.
package struct LibraryRow: Sendable, Equatable {
    package var work: String
    package var title: String
    package var author: String?
    /// The edition shown: the ISBN seen in most photos (of those, the one seen last), as library.json shows it.
    package var isbn13: String?
    package var status: Book.Status
    package var shelves: [String]
    /// The photos it was seen in, newest first (at most `photoLimit`), and how many there are.
    package var photos: [String]
    package var photoCount: Int
    package var firstSeen: Date

    package init(
        work: String, title: String, author: String? = nil, isbn13: String? = nil, status: Book.Status,
        shelves: [String], photos: [String], photoCount: Int, firstSeen: Date
    ) {
        self.work = work; self.title = title; self.author = author; self.isbn13 = isbn13; self.status = status
        self.shelves = shelves; self.photos = photos; self.photoCount = photoCount; self.firstSeen = firstSeen
    }
}

/// One page of the library and how many works match in all.
package struct LibraryPage: Sendable, Equatable {
    package var rows: [LibraryRow]
    package var total: Int

    package init(rows: [LibraryRow], total: Int) {
        self.rows = rows; self.total = total
    }
}
