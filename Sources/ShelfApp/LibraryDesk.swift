import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfOutputs
import ShelfStore

/// `shelfd library` and the library page: a person's edits of whole works (edit, remove, merge), after each of
/// which library.json, review/ and the exports follow the database (through the process's `FilesWriter`). The edits themselves are the
/// library's (`LibraryRecords.editWork`, `removeWork`, `mergeWorks`): one code path for the command and the page.
package struct LibraryDesk: Sendable {
    private let files: DeskFiles
    private let library: LibraryRecords
    /// The date an edit is recorded at.
    private let time: TimeSource

    /// Edits on a database already open (the web page shares the daemon's, and its `writer` and `time`); without a
    /// writer the files are written before an edit returns.
    package init(
        config: Configuration, store: Store, logger: Logger, writer: FilesWriter? = nil, time: TimeSource = .system
    ) {
        files = DeskFiles(config: config, store: store, logger: logger, writer: writer)
        library = store.library
        self.time = time
    }

    /// One page of the library page's list: the works matching `search` (title, author or ISBN) in `sort` order.
    package func page(search: String, sort: LibrarySort, offset: Int, limit: Int, photoLimit: Int = 4) throws
        -> LibraryPage
    {
        try library.libraryPage(search: search, sort: sort, offset: offset, limit: limit, photoLimit: photoLimit)
    }

    /// One work as the library page shows it, or nil when there is no such work.
    package func entry(_ key: String) throws -> LibraryDocument.Entry? { try library.libraryEntry(key) }

    /// library.json (`shelfd.library/2`) as `/api/v1/library` serves it: the file; before it is written, or on a
    /// node of a shared store that leaves the files to another, made from the database a page of works at a time.
    package func document() throws -> [UInt8] {
        if let data = FileManager.default.contents(atPath: files.library.libraryFile.path) { return Array(data) }
        var data = Data()
        try LibraryDocument.stream(
            generatedAt: time.now,
            pages: { page in
                if library.isShared { try library.libraryPages(size: 250, page) }
            }, to: { data += $0 })
        return Array(data) + Array("\n".utf8)
    }

    /// One work as `shelfd library show` and `/api/v1/library/<work>` give it: every sighting and its whole history.
    package func work(_ key: String) throws -> LibraryDocument.Entry { try library.work(key) }

    package func edit(_ work: String, title: String?, author: String?, isbn: ISBN?) throws -> LibraryChange {
        try done(library.editWork(work, title: title, author: author, isbn: isbn, now: time.now))
    }

    package func remove(_ work: String) throws -> LibraryChange {
        try done(library.removeWork(work, now: time.now))
    }

    package func merge(_ from: String, into: String) throws -> LibraryChange {
        try done(library.mergeWorks(from, into: into, now: time.now))
    }

    private func done(_ change: LibraryChange) -> LibraryChange {
        files.changed(change.files)
        return change
    }
}
