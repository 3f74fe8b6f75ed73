import Foundation

/// The store's SQLite state copied into a PostgreSQL database, in one PostgreSQL write transaction, and checked
/// (`shelfd store migrate`; ShelfDaemon's `StoreMigration` opens the two and holds the daemon lock).
///
/// Every table PostgreSQL's schema has but `worker` (the daemons that ran here, not state) and the server's own
/// (`skipping`) is copied column by column by name, rows read as `SQLValue`s and inserted as they are, ids kept,
/// parents before children (the foreign keys as PostgreSQL's catalogue lists them, so a table a later schema step
/// adds is copied too). The identity sequences are then set past the copied ids, so rows made afterwards get new
/// ones. The local catalogue stays in SQLite: each worker keeps its own. A database with photos or jobs is refused;
/// rows it holds in the other tables (a provider's health, settings, caches) are replaced by SQLite's.
package enum StoreCopy {
    /// One table's rows: to copy (`--dry-run`), or copied and counted again in PostgreSQL.
    package struct TableRows: Sendable, Equatable {
        package var table: String
        package var rows: Int
        /// Rows PostgreSQL had in this table, which SQLite's replace: state that does not hang on photos (a
        /// provider's health, budgets, settings, caches) written by a shelfd that used the database before.
        package var replaced = 0
    }

    /// Why the copy did not happen (nothing was changed), in words that say what to do.
    package struct Refusal: Error, Sendable, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// The table not copied: SQLite's record of the daemons that ran on it, not state to share.
    package static let processes = "worker"

    /// Copies (or with `dryRun` counts) `sqlite` into `postgres`: the tables in the order copied, and SQLite's tables
    /// PostgreSQL does not have (the local catalogue), which stay where they are.
    package static func copy(
        from sqlite: Store, into postgres: Store, skipping: Set<String>,
        dryRun: Bool
    ) throws -> (tables: [TableRows], stayLocal: [String]) {
        try sqlite.read { local in
            try postgres.write { remote in
                let plan = try Plan.make(local: local, remote: remote, skipping: skipping)
                try refuseUnlessEmpty(remote, target: postgres.location)
                let copied = try plan.tables.map {
                    TableRows(
                        table: $0.name, rows: try count($0.name, in: local),
                        replaced: try count($0.name, in: remote))
                }
                if !dryRun {
                    // Children first, so that no foreign key is left dangling.
                    for table in copied.reversed() where table.replaced > 0 {
                        try remote.execute("DELETE FROM \"\(table.table)\"")
                    }
                    for (table, expected) in zip(plan.tables, copied) {
                        try copy(table, from: local, to: remote)
                        let arrived = try count(table.name, in: remote)
                        guard arrived == expected.rows else {
                            throw Refusal(
                                """
                                \(table.name): SQLite has \(expected.rows) rows but PostgreSQL \(arrived) after the copy. \
                                Nothing was copied (the transaction was rolled back).
                                """)
                        }
                    }
                    // Past the copied ids, so the next photo's job (and every other new row) gets an id of its own.
                    for table in plan.tables {
                        for column in table.identities {
                            _ = try remote.query(
                                """
                                SELECT setval(pg_get_serial_sequence('\(table.name)', '\(column)'), max("\(column)")) AS value
                                FROM "\(table.name)" HAVING max("\(column)") IS NOT NULL
                                """)
                        }
                    }
                }
                return (copied, plan.stayLocal)
            }
        }
    }

    /// A shared database already in use is never merged into: photos or jobs there mean another machine's state.
    private static func refuseUnlessEmpty(_ remote: any DatabaseConnection, target: String) throws {
        let photos = try count("photo", in: remote), jobs = try count("job", in: remote)
        guard photos == 0 && jobs == 0 else {
            throw Refusal(
                """
                \(target) already holds \(photos) photo\(photos == 1 ? "" : "s") and \(jobs) job\(jobs == 1 ? "" : "s"): \
                the copy goes only into a database no shelfd has processed photos in. Nothing was changed.
                """)
        }
    }

    private static func count(_ table: String, in db: any DatabaseConnection) throws -> Int {
        Int(try db.queryOne("SELECT count(*) AS n FROM \"\(table)\"")?.int("n") ?? 0)
    }

    /// A table's rows, a page at a time in SQLite's row order (ids ascending, so a job's `recheck_of` arrives after
    /// the job it names), each page one multi-row INSERT.
    private static func copy(_ table: Plan.Table, from local: any DatabaseConnection, to remote: any DatabaseConnection)
        throws
    {
        let columns = table.columns.map { "\"\($0)\"" }.joined(separator: ", ")
        let page = max(1, min(500, 30_000 / table.columns.count)) // PostgreSQL binds at most 65,535 values
        var after: Int64 = Int64.min
        while true {
            let rows = try local.query(
                """
                SELECT rowid AS shelfd_rowid, \(columns) FROM "\(table.name)" WHERE rowid > ? ORDER BY rowid LIMIT \(page)
                """, [after])
            guard let last = rows.last?.int("shelfd_rowid") else { return }
            var values: [SQLValue] = []
            values.reserveCapacity(rows.count * table.columns.count)
            for row in rows { for column in table.columns { values.append(row[column]) } }
            let tuple = "(" + Array(repeating: "?", count: table.columns.count).joined(separator: ", ") + ")"
            let tuples = Array(repeating: tuple, count: rows.count).joined(separator: ", ")
            do {
                try remote.execute("INSERT INTO \"\(table.name)\" (\(columns)) VALUES \(tuples)", values)
            } catch {
                throw Refusal(
                    "PostgreSQL refused rows of \(table.name): \(error.message). Nothing was copied (the transaction was rolled back)."
                )
            }
            after = last
        }
    }

    /// What to copy, read from the two databases' own catalogues.
    struct Plan {
        struct Table {
            var name: String
            /// PostgreSQL's columns that SQLite's table has too, by name.
            var columns: [String]
            /// Identity columns, whose sequences go past the copied ids.
            var identities: [String]
        }
        var tables: [Table]
        var stayLocal: [String]

        static func make(local: any DatabaseConnection, remote: any DatabaseConnection, skipping: Set<String>) throws
            -> Plan
        {
            var columns: [String: [String]] = [:], identities: [String: [String]] = [:]
            for row in try remote.query(
                """
                SELECT c.table_name::text AS table_name, c.column_name::text AS column_name, c.is_identity::text AS is_identity
                FROM information_schema.columns c JOIN information_schema.tables t
                  ON t.table_schema = c.table_schema AND t.table_name = c.table_name
                WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
                ORDER BY c.table_name, c.ordinal_position
                """)
            {
                let table: String = try row.required("table_name", of: "information_schema.columns")
                let column: String = try row.required("column_name", of: "information_schema.columns")
                if skipping.contains(table) { continue } // `worker` and the server's own tables are not state
                columns[table, default: []].append(column)
                if row.string("is_identity") == "YES" { identities[table, default: []].append(column) }
            }
            var parents: [String: Set<String>] = [:]
            for row in try remote.query(
                """
                SELECT child.relname::text AS child, parent.relname::text AS parent
                FROM pg_constraint c
                JOIN pg_class child ON child.oid = c.conrelid
                JOIN pg_class parent ON parent.oid = c.confrelid
                JOIN pg_namespace n ON n.oid = child.relnamespace
                WHERE c.contype = 'f' AND n.nspname = current_schema()
                """)
            {
                let child: String = try row.required("child", of: "pg_constraint")
                let parent: String = try row.required("parent", of: "pg_constraint")
                // A table that refers to itself copies in one pass.
                if child != parent { parents[child, default: []].insert(parent) }
            }

            let localTables = Set(
                try local.query(
                    """
                    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'
                    """
                ).required("name", of: "sqlite_master", as: String.self))
            var tables: [Table] = []
            for name in foreignKeyOrder(Set(columns.keys), parents: parents)
            where name != StoreCopy.processes && name != Self.counted && name != Migration.ledger {
                guard localTables.contains(name) else {
                    throw Refusal(
                        "The SQLite database has no table \(name): run any shelfd command on it once, to bring it up to date."
                    )
                }
                let here = Set(
                    try local.query("PRAGMA table_info(\"\(name)\")").required(
                        "name", of: "table_info", as: String.self))
                tables.append(
                    Table(
                        name: name, columns: columns[name, default: []].filter(here.contains),
                        identities: identities[name, default: []]))
            }
            // The full-text index's own tables go with the catalogue without being named.
            let stayLocal = localTables.subtracting(columns.keys).filter { !$0.contains("_fts") }.sorted()
            return Plan(tables: tables, stayLocal: stayLocal)
        }

        /// The counts status reads, which PostgreSQL's triggers keep as the jobs are copied: copied too, they would count twice.
        static let counted = "tally"

        /// Parents before children; ties (and any cycle, which the schema has none of) by name.
        static func foreignKeyOrder(_ tables: Set<String>, parents: [String: Set<String>]) -> [String] {
            var order: [String] = [], placed: Set<String> = []
            while placed.count < tables.count {
                let ready = tables.subtracting(placed).filter {
                    parents[$0, default: []].intersection(tables).isSubset(of: placed)
                }.sorted()
                let next = ready.isEmpty ? tables.subtracting(placed).sorted() : ready
                for table in next { order.append(table); placed.insert(table) }
            }
            return order
        }
    }
}
