import Foundation

/// The daemon's durable state: one SQLite database in WAL mode. Every call is short and serialised behind
/// a lock, so the store is safe to share between tasks; other processes (`shelfd status`, `shelfd retry`)
/// open their own connection and rely on WAL and the busy timeout.
package final class Store: @unchecked Sendable {    // unchecked: `connection` is only used under `lock`
    private let connection: SQLiteConnection
    private let lock = NSLock()
    package let path: String

    private init(connection: SQLiteConnection, path: String) {
        self.connection = connection
        self.path = path
    }

    /// Opens (creating if needed) the database and brings its schema up to date.
    package static func open(path: String) throws(StoreError) -> Store {
        let connection = try SQLiteConnection(path: path)
        try connection.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        try Schema.migrate(connection)
        try mergeWorksSharingAnISBN(connection, now: Date())
        return Store(connection: connection, path: path)
    }

    /// Opens an existing database for reading only (`status`, `review list`). Nil when there is none yet.
    package static func openForReading(path: String) throws(StoreError) -> Store? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, mode: .readWrite)
        } catch {
            connection = try SQLiteConnection(path: path, mode: .readOnly)   // not our file: read what we may
        }
        try connection.executeScript("PRAGMA query_only = 1;")
        let version = try connection.queryOne("PRAGMA user_version")?.int("user_version") ?? 0
        guard version > 0 else { return nil }
        return Store(connection: connection, path: path)
    }

    /// A write transaction taken with BEGIN IMMEDIATE: the write lock is held from the start, so two
    /// processes never both read "pending" and claim the same job.
    package func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try lock.withLock {
            try connection.executeScript("BEGIN IMMEDIATE")
            do {
                let value = try body(connection)
                try connection.executeScript("COMMIT")
                return value
            } catch {
                try? connection.executeScript("ROLLBACK")
                throw error
            }
        }
    }

    /// Gives the connection's page cache back while the daemon is idle.
    package func releaseMemory() {
        lock.withLock { connection.releaseMemory() }
    }

    /// A consistent read (one snapshot across several queries).
    package func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try lock.withLock {
            try connection.executeScript("BEGIN")
            defer { try? connection.executeScript("COMMIT") }
            return try body(connection)
        }
    }
}
