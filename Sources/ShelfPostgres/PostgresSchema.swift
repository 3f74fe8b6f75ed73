import PostgresNIO
import ShelfStore

/// Brings the PostgreSQL store's schema up to date: `Migration.all`'s PostgreSQL steps (MigrationList.swift), recorded
/// by name as on SQLite (Migrations.swift). The tables follow SQLite's column for column, because the store's statements
/// are the same on both: times are `double precision` seconds since 1970 and flags `bigint` 0 or 1, as SQLite keeps
/// them; ids are identities that a copy from SQLite may set (`store migrate`). `SchemaMirrorTests` checks that every
/// table and column of SQLite's has its counterpart.
enum PostgresSchema {
    /// Any number fixed for shelfd: the advisory lock that lets one process at a time migrate.
    static let lockKey: Int64 = 0x7368_656C_6664 // "shelfd"

    /// Brings the schema up to date under a session advisory lock: a second process starting at the same time waits
    /// for the first, then finds nothing left to do. Each migration is its own transaction, recorded in it. Refuses a
    /// database a newer shelfd migrated, before touching anything.
    static func migrate(_ session: Session) throws {
        // Waiting for another process's migrations may take longer than a statement's usual deadline.
        try session.query("SELECT pg_advisory_lock(\(lockKey))", timeout: 600)
        do {
            var applied = try appliedMigrations(session)
            while true {
                let next: (name: String, sql: String)?
                do {
                    next = try Migration.next(on: .postgres, applied: applied)
                } catch {
                    throw PostgresStoreError(.schemaTooNew, error.description)
                }
                guard let next else { break }
                try transaction(session) {
                    // Several statements in one message: as a PL/pgSQL block (PostgresNIO has no simple query protocol).
                    try session.script("DO $migration$ BEGIN\n\(next.sql)\nEND $migration$")
                    try session.query(
                        """
                        INSERT INTO \(unescaped: Migration.ledger) (name, applied_at) VALUES (\(next.name), extract(epoch FROM now()))
                        """)
                    try session.query(
                        "UPDATE shelfd_schema SET version = \(applied.count + 1), migrated_at = now() WHERE id = 1")
                }
                applied.insert(next.name)
            }
        } catch {
            _ = try? session.query("SELECT pg_advisory_unlock(\(lockKey))")
            throw error
        }
        try session.query("SELECT pg_advisory_unlock(\(lockKey))")
    }

    /// The migrations the database records, after recording those a database of before counted in `shelfd_schema`
    /// (which goes on counting, so that an older shelfd refuses this database once a newer one migrated it).
    static func appliedMigrations(_ session: Session) throws -> Set<String> {
        try transaction(session) {
            try session.script(
                """
                CREATE TABLE IF NOT EXISTS shelfd_schema (
                    id integer PRIMARY KEY CHECK (id = 1),
                    version integer NOT NULL,
                    migrated_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            try session.script("INSERT INTO shelfd_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING")
            let ledgerThere = try session.query("SELECT to_regclass(\(Migration.ledger)) IS NOT NULL").first?.decode(
                Bool.self)
            if ledgerThere != true {
                guard let counted = Migration.counted(try version(session), on: .postgres) else {
                    throw PostgresStoreError(.schemaTooNew, Migration.NewerSchema(migrations: []).description)
                }
                try session.script(Migration.ledgerTable(on: .postgres))
                for name in counted {
                    try session.query("INSERT INTO \(unescaped: Migration.ledger) (name) VALUES (\(name))")
                }
            }
        }
        return Set(
            try session.query("SELECT name FROM \(unescaped: Migration.ledger)").map { try $0.decode(String.self) })
    }

    static func version(_ session: Session) throws -> Int {
        guard let row = try session.query("SELECT version FROM shelfd_schema WHERE id = 1").first else { return 0 }
        return try row.decode(Int.self)
    }

    private static func transaction(_ session: Session, _ body: () throws -> Void) throws {
        try session.script("BEGIN")
        do {
            try body()
            try session.script("COMMIT")
        } catch {
            try? session.script("ROLLBACK")
            throw error
        }
    }
}
