import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfOutputs
import ShelfStore

/// Everything the pages and the API reach: the configuration, the database, the review desk (the one code
/// path of every review decision, shared with `shelfd review`), and the templates.
package struct WebSite: Sendable {
    package let config: Configuration
    package let secrets: Secrets
    package let store: Store
    /// The sessions and login codes the door checks.
    package let sessions: WebSessionStore
    /// The photos' result documents, as `shelfd scan` reads them.
    package let results: PhotoResults
    package let desk: ReviewDesk
    package let library: LibraryDesk            // edits of whole works, shared with `shelfd library`
    /// Where decisions and edits hand their changes: the daemon's, or this process's own for `shelfd web` alone.
    package let files: FilesWriter
    package let templates: Templates
    package let logger: Logger
    private let statusCache = StatusCache()

    package init(config: Configuration, secrets: Secrets, store: Store, logger: Logger, files: FilesWriter? = nil) throws {
        self.config = config
        self.secrets = secrets
        self.store = store
        sessions = store.webSessions
        results = PhotoResults(store: store)
        let files = files ?? FilesWriter(files: LibraryFiles(config: config, store: store, logger: logger))
        self.files = files
        self.desk = ReviewDesk(config: config, store: store, logger: logger, writer: files)
        self.library = LibraryDesk(config: config, store: store, logger: logger, writer: files)
        self.templates = try Templates()
        self.logger = logger
    }

    /// What `shelfd status --json` says, built at most once per change of the database and second.
    package func status() throws -> StatusDocument {
        try statusCache.document(config: config, secrets: secrets, store: store)
    }
}
