import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfStore

// The application's desks and status, on the database this configuration names: opened here, where the wiring knows
// both engines (`StoreAccess`), so that ShelfApp needs neither.

extension ReviewDesk {
    /// `writing`: open the database for decisions; otherwise read-only (`list`, `show`).
    package init(config: Configuration, writing: Bool, logger: Logger) throws {
        let store: Store? =
            writing && StoreAccess.exists(config: config)
            ? try StoreAccess.open(config: config) : try StoreAccess.openForReading(config: config)
        self.init(config: config, store: store, logger: logger)
    }
}

extension LibraryDesk {
    /// Opens the database for edits (the daemon may be running: each edit is one BEGIN IMMEDIATE transaction).
    package init(config: Configuration, logger: Logger) throws {
        guard StoreAccess.exists(config: config) else {
            throw LibraryError(.notFound, "The library is empty: shelfd has not catalogued any photo yet.")
        }
        self.init(config: config, store: try StoreAccess.open(config: config), logger: logger)
    }
}

extension ShelfDesk {
    /// Opens the database for rounds and answers (the daemon may be running: each change is one write transaction).
    package init(config: Configuration, logger: Logger) throws {
        guard StoreAccess.exists(config: config) else {
            throw LibraryError(
                .notFound, "Nothing yet: shelfd has not catalogued any photo, so there is no shelf and no book to find."
            )
        }
        self.init(config: config, store: try StoreAccess.open(config: config), logger: logger)
    }
}

extension StatusReport {
    /// The status of the database this configuration names, opened for this report (nil: none yet).
    package static func build(config: Configuration, secrets: Secrets? = nil, now: Date) throws
        -> StatusDocument
    {
        try build(
            config: config, secrets: secrets, store: try StoreAccess.openForReading(config: config, secrets: secrets),
            now: now)
    }
}
