import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfOutputs
import ShelfStore

/// `shelfd shelf`, `shelfd library find` and the shelf pages (docs/library.md, "Shelves"): each shelf's books in order, what
/// its last round changed, a person's answers about books not seen, and where a book is. The rounds and their
/// comparison are the store's (`ShelfRounds`): one code path for the command and the page. After an answer or a round
/// closed, library.json and the exports follow the database (through the process's `FilesWriter`).
package struct ShelfDesk: Sendable {
    private let files: DeskFiles
    private let rounds: ShelfRounds
    private let library: LibraryRecords
    private let quiet: TimeInterval
    private let time: TimeSource

    /// On a database already open (the web page shares the daemon's, and its `writer` and `time`); without a writer
    /// the files are written before a change returns.
    package init(
        config: Configuration, store: Store, logger: Logger, writer: FilesWriter? = nil, time: TimeSource = .system
    ) {
        files = DeskFiles(config: config, store: store, logger: logger, writer: writer)
        rounds = store.shelves
        library = store.library
        quiet = config.shelves.roundQuiet
        self.time = time
    }

    /// Every shelf with a round, after closing the rounds that are due (a `run` from cron may have left one).
    package func list() throws -> [ShelfSummary] {
        try closeDue()
        return try rounds.shelves()
    }

    /// One shelf: its books left to right and its last round's changes.
    package func show(_ name: String) throws -> ShelfDocument {
        try closeDue()
        guard let shelf = try rounds.shelf(Self.normalized(name)) else { throw Self.noSuchShelf(name) }
        return shelf
    }

    /// Ends the shelf's open round now (`shelfd shelf close`).
    package func close(_ name: String) throws -> RoundClosing {
        let (closing, change) = try rounds.close(shelf: Self.normalized(name), quiet: quiet, now: time.now)
        done(change)
        return closing
    }

    /// A person's answer about a book of a shelf: lent, gone or still there. Returns the shelf it was on.
    package func answer(work: String, _ answer: ShelfAnswer) throws -> String {
        let (shelf, change) = try rounds.answer(work: work, answer, now: time.now)
        done(change)
        return shelf
    }

    /// The books lent now, on every shelf.
    package func lent() throws -> [ShelfLoan] { try rounds.lent() }

    /// Where the books matching `text` (title, author or ISBN) are: at most `limit`, by title.
    package func find(_ text: String, limit: Int = 20) throws -> [BookWhereabouts] {
        let page = try library.libraryPage(search: text, sort: .title, offset: 0, limit: limit, photoLimit: 0)
        return try rounds.whereabouts(of: page.rows.map(\.work))
    }

    /// Where each of these works is (the library page's search).
    package func whereabouts(of works: [String]) throws -> [BookWhereabouts] { try rounds.whereabouts(of: works) }

    /// Where one work is, or nil when it is not in the library.
    package func whereabouts(_ work: String) throws -> BookWhereabouts? { try rounds.whereabouts(of: [work]).first }

    private func closeDue() throws { done(try rounds.closeDue(quiet: quiet, now: time.now)) }

    private func done(_ change: FilesChange) {
        if change.changesLibrary { files.changed(change) }
    }

    /// A shelf as a person types it: `den/top`, `den/top/`, `./den`.
    static func normalized(_ name: String) -> String {
        name.split(separator: "/").filter { $0 != "." && !$0.isEmpty }.joined(separator: "/")
    }

    static func noSuchShelf(_ name: String) -> LibraryError {
        LibraryError(
            .notFound,
            "No shelf '\(name)': a shelf is a sub-folder of incoming/ photos arrived in since shelves were kept. "
                + "'shelfd shelf list' lists them.")
    }
}
