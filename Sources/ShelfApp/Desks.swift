import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfOutputs
import ShelfStore

/// The application layer as a door that serves many requests holds it (the web page and its API): every desk
/// over one open database, the decisions and edits sharing one writer of the files for people.
package struct Desks: Sendable {
    /// Review decisions, the one code path shared with `shelfd review`.
    package let review: ReviewDesk
    /// Edits of whole works, shared with `shelfd library`.
    package let library: LibraryDesk
    /// Shelves, their rounds and answers, shared with `shelfd shelf`.
    package let shelves: ShelfDesk
    package let exports: ExportDesk
    /// The photos' result documents, as `shelfd scan` reads them.
    package let results: PhotoResults
    package let photos: PhotoDesk
    package let images: PhotoImages
    package let queue: QueueDesk
    package let sessions: SessionDesk
    package let metrics: MetricsDesk
    package let presence: WebPresence
    /// The daemon's time: the date the desks act at, and the web door's count of wrong tokens.
    package let time: TimeSource
    private let config: Configuration
    private let secrets: Secrets
    private let store: Store
    private let files: FilesWriter
    private let statusCache = StatusCache()

    /// `files`: the daemon's writer of the files for people; without one (`shelfd web` alone) this process has its own.
    /// `time`: the daemon's, the date the desks act at: decisions, edits, answers and status, the web page's sessions
    /// and login codes, and its count of wrong tokens.
    package init(
        config: Configuration, secrets: Secrets, store: Store, logger: Logger, files: FilesWriter? = nil,
        time: TimeSource = .system
    ) {
        let files = files ?? FilesWriter(files: LibraryFiles(config: config, store: store.library, logger: logger))
        review = ReviewDesk(config: config, store: store, logger: logger, writer: files, time: time)
        library = LibraryDesk(config: config, store: store, logger: logger, writer: files, time: time)
        shelves = ShelfDesk(config: config, store: store, logger: logger, writer: files, time: time)
        exports = ExportDesk(config: config, store: store, time: time)
        results = PhotoResults(store: store)
        photos = PhotoDesk(store: store)
        images = PhotoImages(config: config, store: store, logger: logger)
        queue = QueueDesk(store: store, time: time)
        sessions = SessionDesk(store: store, secrets: secrets, time: time)
        self.time = time
        metrics = MetricsDesk(store: store, time: time)
        presence = WebPresence(store: store)
        self.config = config
        self.secrets = secrets
        self.store = store
        self.files = files
    }

    /// What `shelfd status --json` says, built at most once per change of the database and second.
    package func status() throws -> StatusDocument {
        try statusCache.document(config: config, secrets: secrets, store: store, now: time.now)
    }

    /// Writes what the last decisions and edits changed of library.json, review/ and the exports.
    package func flushFiles() { files.flush() }

    /// After a burst of requests, the memory it took goes back: the database's page cache and malloc's free pages.
    package func releaseMemory() {
        store.releaseMemory()
        IdleMemory.release()
    }
}
