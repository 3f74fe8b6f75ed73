import Foundation
import ShelfPostgres
import ShelfStore
import ShelfTesting
import Testing

/// The two engines a store runs on, as the argument of a test that runs on both.
package enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    package var testDescription: String { rawValue }
}

/// One database of a kind, opened as often as a test wants: each handle is what one shelfd process would hold
/// (its own SQLite connection, its own PostgreSQL connection).
package struct StoreSite: Sendable {
    package let kind: StoreKind
    /// The SQLite file; nil on PostgreSQL.
    package let sqlitePath: String?
    private let endpoint: PostgresStore.Endpoint?

    /// Opens the database as `shelfd watch` does, migrating it if needed.
    package func open() throws -> Store {
        if let sqlitePath { return try Store.open(path: sqlitePath) }
        return try PostgresStore.open(endpoint!)
    }

    /// Opens it as `shelfd status` and `shelfd web` do (StoreAccess.openForReading): SQLite's file read-only, PostgreSQL's
    /// database as any worker's.
    package func openForReading() throws -> Store? {
        if let sqlitePath { return try Store.openForReading(path: sqlitePath) }
        return try PostgresStore.open(endpoint!)
    }

    /// Runs `body` with a new, empty database of `kind` (a fresh database on the suite's PostgreSQL server).
    package static func with<T>(_ kind: StoreKind, _ body: (StoreSite) throws -> T) throws -> T {
        switch kind {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "shelfd-store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            return try body(
                StoreSite(kind: kind, sqlitePath: folder.appendingPathComponent("shelfd.db").path, endpoint: nil))
        case .postgres:
            let server = try #require(SharedPostgres.server, "the suite needs the .postgresServer trait")
            let database = try server.createDatabase()
            let endpoint = PostgresStore.Endpoint(
                host: server.host, port: server.port, user: server.user, database: database,
                tls: .disable)
            return try body(StoreSite(kind: kind, sqlitePath: nil, endpoint: endpoint))
        }
    }

    /// Runs `body` with a database of `kind` that holds `dump` (a file of Fixtures/), not yet opened by a store: SQLite's
    /// dump run as a script, PostgreSQL's by psql, as an administrator restores one.
    package static func with<T>(_ kind: StoreKind, restoring dump: URL, _ body: (StoreSite) throws -> T) throws -> T {
        try with(kind) { site in
            if let path = site.sqlitePath {
                let database = try SQLiteConnection(path: path)
                try database.executeScript(try String(contentsOf: dump, encoding: .utf8))
            } else {
                let server = try #require(SharedPostgres.server)
                try server.psql(file: dump, database: site.endpoint!.database)
            }
            return try body(site)
        }
    }
}

/// The PostgreSQL server a suite's tests share (each test makes its own database on it).
package enum SharedPostgres {
    @TaskLocal package static var server: PostgresServer?
}

/// Starts one PostgreSQL server around a whole suite, stopped and deleted after its last test.
package struct PostgresServerTrait: SuiteTrait, TestScoping {
    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    )
        async throws
    {
        try await withPostgres { server in
            try await SharedPostgres.$server.withValue(server) { try await function() }
        }
    }
}

extension Trait where Self == PostgresServerTrait {
    /// One PostgreSQL server for the suite (`StoreSite.with(.postgres)` makes each test's database on it).
    package static var postgresServer: Self { PostgresServerTrait() }
}
