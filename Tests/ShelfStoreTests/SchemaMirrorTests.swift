import Foundation
import ShelfPostgres
import ShelfStore
import ShelfTesting
import Testing

/// The store's statements are written once for both engines, so PostgreSQL's schema must have every table, column
/// and index SQLite's has, and no table or column SQLite lacks: a migration (MigrationList.swift) with SQL for one
/// engine only, or a column the other's variant forgot, fails here, not in a worker. The local catalogue
/// (`catalogue_*`, its full-text index) stays in each worker's SQLite file and has no counterpart.
@Suite(.postgresServer)
struct SchemaMirrorTests {
    /// The PostgreSQL type a column of each SQLite declared type has (PostgresSchema.swift's header says why).
    static let counterparts = ["INTEGER": "bigint", "REAL": "double precision", "TEXT": "text", "BLOB": "bytea"]

    struct Shape: Equatable {
        /// Table → column → declared type (SQLite's as written, PostgreSQL's `data_type`).
        var columns: [String: [String: String]] = [:]
        var indexes: Set<String> = []
    }

    @Test(
        "Every table, column and index of SQLite's latest schema is in PostgreSQL's, each column of the matching type")
    func postgresMirrorsSQLite() throws {
        let sqlite = try StoreSite.with(.sqlite) { site in try Self.sqliteShape(try site.open()) }
        let postgres = try StoreSite.with(.postgres) { site in try Self.postgresShape(try site.open()) }
        #expect(sqlite.columns["job"] != nil && !sqlite.indexes.isEmpty, "the schema was read")

        for (table, columns) in sqlite.columns.sorted(by: { $0.key < $1.key }) {
            guard let mirrored = postgres.columns[table] else {
                Issue.record(
                    "table \(table) is in SQLite's schema, not in PostgreSQL's: add its PostgreSQL variant to Migration.all"
                )
                continue
            }
            for (column, type) in columns.sorted(by: { $0.key < $1.key }) {
                guard let expected = Self.counterparts[type.uppercased()] else {
                    Issue.record(
                        "\(table).\(column) has SQLite type «\(type)», which has no PostgreSQL counterpart here")
                    continue
                }
                guard let actual = mirrored[column] else {
                    Issue.record("column \(table).\(column) is in SQLite's schema, not in PostgreSQL's")
                    continue
                }
                #expect(
                    actual == expected, "\(table).\(column): SQLite \(type), so PostgreSQL \(expected), not \(actual)")
            }
        }
        for index in sqlite.indexes.subtracting(postgres.indexes).sorted() {
            Issue.record("index \(index) is in SQLite's schema, not in PostgreSQL's")
        }

        // And nothing of PostgreSQL's is missing from SQLite's, but the tables of its own.
        for (table, columns) in postgres.columns.sorted(by: { $0.key < $1.key })
        where !PostgresStore.tablesOfItsOwn.contains(table) {
            guard let mirrored = sqlite.columns[table] else {
                Issue.record(
                    "table \(table) is in PostgreSQL's schema, not in SQLite's: add its SQLite variant to Migration.all"
                )
                continue
            }
            for column in columns.keys.sorted() where mirrored[column] == nil {
                Issue.record("column \(table).\(column) is in PostgreSQL's schema, not in SQLite's")
            }
        }
    }

    /// A store's tables and indexes, on either engine.
    static func shape(_ store: Store) throws -> Shape {
        store.engine == .sqlite ? try sqliteShape(store) : try postgresShape(store)
    }

    /// A fresh SQLite store's tables and indexes, but the local catalogue's and SQLite's own.
    static func sqliteShape(_ store: Store) throws -> Shape {
        try store.read { db in
            var shape = Shape()
            let tables = try db.query(
                """
                SELECT name FROM sqlite_master
                WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'catalogue\\_%' ESCAPE '\\'
                """)
            for table in tables.compactMap({ $0.string("name") }) {
                let columns = try db.query("SELECT name, type FROM pragma_table_info(?)", [table])
                shape.columns[table] = Dictionary(
                    uniqueKeysWithValues: columns.map { ($0.string("name") ?? "", $0.string("type") ?? "") })
            }
            let indexes = try db.query(
                """
                SELECT name FROM sqlite_master
                WHERE type = 'index' AND sql IS NOT NULL AND tbl_name NOT LIKE 'catalogue\\_%' ESCAPE '\\'
                """)
            shape.indexes = Set(indexes.compactMap { $0.string("name") })
            return shape
        }
    }

    /// A fresh PostgreSQL store's tables and indexes, as the server describes them.
    static func postgresShape(_ store: Store) throws -> Shape {
        try store.read { db in
            var shape = Shape()
            let columns = try db.query(
                """
                SELECT table_name::text AS "table", column_name::text AS name, data_type::text AS type
                FROM information_schema.columns WHERE table_schema = current_schema()
                """)
            for column in columns {
                shape.columns[column.string("table") ?? "", default: [:]][column.string("name") ?? ""] = column.string(
                    "type")
            }
            let indexes = try db.query(
                "SELECT indexname::text AS name FROM pg_indexes WHERE schemaname = current_schema()")
            shape.indexes = Set(indexes.compactMap { $0.string("name") })
            return shape
        }
    }
}
