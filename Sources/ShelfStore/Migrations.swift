import Foundation

/// One change of the schema, known by its name on both engines. `sqlite` and `postgres` are its SQL on each: one text
/// where the dialects agree, nil where an engine has nothing to do (PostgreSQL keeps no local catalogue; SQLite
/// announces no jobs). The list is `Migration.all` (MigrationList.swift).
///
/// A database records each migration it applied by name, in `schema_migration`, in the transaction that applied it, as
/// GRDB's `DatabaseMigrator` does: a migration is applied once whatever the order of the ones before it, and a database
/// that records a name this shelfd does not know was migrated by a newer one and is refused. Databases migrated before
/// names were recorded kept only a count (SQLite's `user_version`, PostgreSQL's `shelfd_schema.version`): the first
/// that many migrations of their engine are recorded for them on their first open. The count is still kept, so that
/// an older shelfd refuses a database a newer one migrated.
package struct Migration: Sendable {
    package let name: String
    package let sqlite: String?
    package let postgres: String?

    /// A migration both engines apply as written.
    init(_ name: String, sql: String) { self.init(name, sqlite: sql, postgres: sql) }

    init(_ name: String, sqlite: String? = nil, postgres: String? = nil) {
        self.name = name
        self.sqlite = sqlite
        self.postgres = postgres
    }

    /// This engine's SQL, if it has any.
    package func sql(on engine: DatabaseEngine) -> String? { engine == .sqlite ? sqlite : postgres }

    /// The migrations an engine applies, in order.
    package static func steps(on engine: DatabaseEngine) -> [(name: String, sql: String)] {
        all.compactMap { migration in migration.sql(on: engine).map { (migration.name, $0) } }
    }

    /// The table that records the applied migrations.
    package static let ledger = "schema_migration"

    /// Creates the ledger: `applied_at` is NULL for the migrations of a database that counted them.
    package static func ledgerTable(on engine: DatabaseEngine) -> String {
        """
        CREATE TABLE \(ledger) (
            name \(engine == .sqlite ? "TEXT" : "text") PRIMARY KEY,
            applied_at \(engine == .sqlite ? "REAL" : "double precision")
        )
        """
    }

    /// The names to record for a database that counted `count` migrations on this engine; nil when it counted more
    /// than this shelfd has (a newer shelfd migrated it).
    package static func counted(_ count: Int, on engine: DatabaseEngine) -> [String]? {
        let steps = steps(on: engine)
        guard count <= steps.count else { return nil }
        return steps.prefix(count).map(\.name)
    }

    /// The next migration a database that applied `applied` needs, nil when none; throws what to tell a person when it
    /// applied one this shelfd does not know.
    package static func next(on engine: DatabaseEngine, applied: Set<String>) throws(NewerSchema) -> (
        name: String, sql: String
    )? {
        let known = Set(all.map(\.name))
        let unknown = applied.subtracting(known)
        guard unknown.isEmpty else { throw NewerSchema(migrations: unknown.sorted()) }
        return steps(on: engine).first { !applied.contains($0.name) }
    }

    /// A database a newer shelfd migrated: nothing is touched, as its tables may mean what this one does not know.
    package struct NewerSchema: Error, CustomStringConvertible {
        /// The migrations it applied that this shelfd does not know; empty when only its count says so.
        package var migrations: [String]

        package init(migrations: [String]) { self.migrations = migrations }

        package var description: String {
            let which = migrations.isEmpty ? "" : " (\(migrations.joined(separator: ", ")))"
            return """
                the database has migrations newer than this shelfd knows\(which): a newer shelfd has used it. Upgrade \
                shelfd on this machine, or restore a backup taken before; do not point an older one at it
                """
        }
    }
}

/// Brings a SQLite database's schema up to date.
enum SQLiteMigrator {
    /// One migration per IMMEDIATE transaction, which re-reads the ledger inside it, so two processes starting
    /// together never apply the same migration twice.
    static func migrate(_ db: SQLiteConnection, now: Date) throws(StoreError) {
        while true {
            try db.executeScript("BEGIN IMMEDIATE")
            do throws(StoreError) {
                let applied = try appliedMigrations(db)
                let next: (name: String, sql: String)?
                do {
                    next = try Migration.next(on: .sqlite, applied: applied)
                } catch {
                    throw StoreError(code: StoreError.serverCode, message: error.description)
                }
                guard let next else {
                    try db.executeScript("COMMIT")
                    return
                }
                try db.executeScript(next.sql)
                try db.execute(
                    "INSERT INTO \(Migration.ledger) (name, applied_at) VALUES (?, ?)",
                    [next.name, now.timeIntervalSince1970])
                try db.executeScript("PRAGMA user_version = \(applied.count + 1)")
                try db.executeScript("COMMIT")
            } catch {
                try? db.executeScript("ROLLBACK")
                throw error
            }
        }
    }

    /// Whether every migration this shelfd knows is applied, read without writing (`Store.openForReading`).
    static func isCurrent(_ db: SQLiteConnection) throws(StoreError) -> Bool {
        try userVersion(db) >= Migration.steps(on: .sqlite).count
    }

    static func userVersion(_ db: SQLiteConnection) throws(StoreError) -> Int {
        Int(try db.queryOne("PRAGMA user_version")?.int("user_version") ?? 0)
    }

    /// The migrations the database records, after recording those a database of before counted (in the caller's
    /// transaction).
    private static func appliedMigrations(_ db: SQLiteConnection) throws(StoreError) -> Set<String> {
        let ledgerThere =
            try db.queryOne(
                "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?", [Migration.ledger])
            != nil
        if !ledgerThere {
            guard let counted = Migration.counted(try userVersion(db), on: .sqlite) else {
                throw StoreError(
                    code: StoreError.serverCode, message: Migration.NewerSchema(migrations: []).description)
            }
            try db.executeScript(Migration.ledgerTable(on: .sqlite))
            for name in counted {
                try db.execute("INSERT INTO \(Migration.ledger) (name) VALUES (?)", [name])
            }
        }
        return Set(try db.query("SELECT name FROM \(Migration.ledger)").compactMap { $0.string("name") })
    }
}
