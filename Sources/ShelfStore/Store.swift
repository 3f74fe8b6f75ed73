import Foundation
import ShelfCore
import Synchronization

/// The daemon's durable state: one SQLite database in WAL mode by default, or a PostgreSQL database several
/// workers share (`[store] url`, opened by ShelfPostgres). Every call is short and serialised behind a lock, so the
/// store is safe to share between tasks; other processes (`shelfd status`, `shelfd retry`, other workers) open
/// their own connection, and every write transaction holds the database's one write lock (`TransactionKind.write`).
// unchecked: `connection` is only used under `lock`, `aside` under `asideLock`
package final class Store: @unchecked Sendable {
    private let connection: CountingConnection
    private let lock = NSLock()
    /// Transactions and claims so far (under `lock`); the statements are the connection's count.
    private var activityCounts = StoreActivity()
    /// The database's file, or its URL without the password: for messages.
    package let location: String
    /// A second connection for the long reads of the files for people (`readAside`), opened on first use: SQLite
    /// lets it read beside the first one's writes, so a decision never waits for a page of library.json.
    private let openAside: (@Sendable () throws(StoreError) -> any DatabaseConnection)?
    private var aside: (any DatabaseConnection)? // only used under `asideLock`
    private let asideLock = NSLock()
    /// Providers lately read to be fine: what was read, and when (`providerHealth`).
    let fineProviders = Mutex<[String: (health: ProviderHealth?, read: ContinuousClock.Instant)]>([:])

    /// A store on a connection whose schema is already up to date (ShelfPostgres opens PostgreSQL's this way).
    /// `openAside`, when given, opens another connection to the same database for `readAside`.
    package init(
        connection: any DatabaseConnection, location: String,
        openAside: (@Sendable () throws(StoreError) -> any DatabaseConnection)? = nil
    ) {
        self.connection = CountingConnection(connection)
        self.location = location
        self.openAside = openAside
    }

    /// The engine under this store.
    package var engine: DatabaseEngine { connection.engine }

    /// Whether other machines' workers share this store (PostgreSQL's): what one machine keeps in files (answers,
    /// results, the photos' images) is then kept in the database too.
    package var isShared: Bool { engine == .postgres }

    // Each concern of the store is a type of its own, with its own statements, over this database.

    /// The photos' queue: sightings, jobs, leases, saved answers, each batch's commit (PhotoQueue.swift).
    package var queue: PhotoQueue { PhotoQueue(database: self) }
    /// The library and its review queue (LibraryRecords.swift).
    package var library: LibraryRecords { LibraryRecords(database: self) }
    /// Shelves as places: rounds, inventories, and what people answer about books not seen (ShelfRounds.swift).
    package var shelves: ShelfRounds { ShelfRounds(database: self) }
    /// The providers' shared state: health, probes, request budgets, latencies (ProviderHealth.swift).
    package var providers: ProviderState { ProviderState(database: self) }
    /// Gemini's Batch API jobs and their photos (BatchAPIJobs.swift).
    package var batchAPIJobs: BatchAPIJobs { BatchAPIJobs(database: self) }
    /// The local catalogue's tables (Catalogue.swift).
    package var catalogue: Catalogue { Catalogue(database: self) }
    /// The remote book sources' cached answers (LookupCache.swift).
    package var lookupCache: LookupCache { LookupCache(database: self) }
    /// A shared store's result documents and the files' change counter (ResultDocuments.swift).
    package var results: ResultDocuments { ResultDocuments(database: self) }
    /// What `status` and the overview read of the queue (StatusQueries.swift).
    package var status: StatusQueries { StatusQueries(database: self) }
    /// What `/metrics` and `/healthz` read (MetricsQueries.swift).
    package var metrics: MetricsQueries { MetricsQueries(database: self) }
    /// The workers sharing this store, as each registers itself (WorkerRegistry.swift).
    package var workers: WorkerRegistry { WorkerRegistry(database: self) }
    /// The web page's sessions and login codes (WebSessions.swift).
    package var webSessions: WebSessionStore { WebSessionStore(database: self) }
    /// What was added to Hardcover, and the verified works still to add (HardcoverPushes.swift).
    package var hardcover: HardcoverPushes { HardcoverPushes(database: self) }
    /// Pruning and the database's size (StoreMaintenance.swift).
    package var maintenance: StoreMaintenance { StoreMaintenance(database: self) }
    /// Small facts kept by name (StoreSettings.swift).
    package var settings: StoreSettings { StoreSettings(database: self) }

    /// Opens (creating if needed) the database and brings its schema up to date.
    package static func open(path: String) throws(StoreError) -> Store {
        let connection = try SQLiteConnection(path: path)
        try connection.executeScript(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        let now = Date()
        try SQLiteMigrator.migrate(connection, now: now)
        try LibraryRecords.mergeWorksSharingAnISBN(connection, now: now)
        return Store(
            connection: connection, location: path,
            openAside: { () throws(StoreError) in
                let aside = try SQLiteConnection(path: path, mode: .readWrite)
                try aside.executeScript("PRAGMA query_only = 1;")
                return aside
            })
    }

    /// Opens an existing database for reading only (`status`, `review list`). Nil when there is none yet.
    package static func openForReading(path: String) throws(StoreError) -> Store? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, mode: .readWrite)
        } catch {
            connection = try SQLiteConnection(path: path, mode: .readOnly) // not our file: read what we may
        }
        // Read once: a daemon may be creating or upgrading the file right now. Before its first step there is
        // nothing yet; part way, its remaining steps are finished here rather than a table this binary reads found
        // missing (each step re-reads the version inside its own transaction).
        guard try SQLiteMigrator.userVersion(connection) > 0 else { return nil }
        if try !SQLiteMigrator.isCurrent(connection) { try? SQLiteMigrator.migrate(connection, now: Date()) }
        try connection.executeScript("PRAGMA query_only = 1;")
        return Store(connection: connection, location: path)
    }

    /// A write transaction holding the database's write lock from the start, so two processes never both read
    /// "pending" and claim the same job.
    package func write<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T {
        try lock.withLock {
            activityCounts.transactions += 1
            activityCounts.writeTransactions += 1
            try connection.begin(.write)
            do {
                let value = try body(connection)
                try connection.commit()
                return value
            } catch {
                connection.rollback()
                throw error
            }
        }
    }

    /// Gives the connections' page caches back while the daemon is idle.
    package func releaseMemory() {
        lock.withLock { connection.releaseMemory() }
        asideLock.withLock { aside?.releaseMemory() }
    }

    /// A consistent read (one snapshot across several queries).
    package func read<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T {
        try lock.withLock {
            activityCounts.transactions += 1
            try connection.begin(.read)
            defer { try? connection.commit() }
            return try body(connection)
        }
    }

    /// A consistent read on the second connection, for reads that take a while and need not see this store's
    /// uncommitted work (a page of library.json or an export): the store's lock stays free for decisions and
    /// commits meanwhile. On a store without one (PostgreSQL's) it is `read`. Not counted in `activity`, which is what
    /// the photos cost.
    package func readAside<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T {
        guard let openAside else { return try read(body) }
        return try asideLock.withLock {
            let connection = try aside ?? openAside()
            aside = connection
            try connection.begin(.read)
            defer { try? connection.commit() }
            return try body(connection)
        }
    }

    /// One statement on its own: it is its own snapshot, so it goes without BEGIN and COMMIT (one round trip to a
    /// server, not three). Several statements that must agree belong in `read`.
    package func readStatement<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T {
        try lock.withLock { try body(connection) }
    }

    /// What this store sent its database since it was opened (CountingConnection.swift).
    package var activity: StoreActivity {
        lock.withLock {
            var activity = activityCounts
            activity.statements = connection.statements
            return activity
        }
    }

    /// Counts a claim and how long it took.
    func recordClaim(seconds: Double) {
        lock.withLock {
            activityCounts.claims += 1
            activityCounts.claimSeconds += seconds
        }
    }
}

/// A concern of the store: a type of its own with its own statements, over the one database `Store` owns.
protocol StoreConcern: Sendable {
    var database: Store { get }
}

extension StoreConcern {
    func write<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T { try database.write(body) }
    func read<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T { try database.read(body) }
    func readAside<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T { try database.readAside(body) }
    func readStatement<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T { try database.readStatement(body) }
    var engine: DatabaseEngine { database.engine }
}
