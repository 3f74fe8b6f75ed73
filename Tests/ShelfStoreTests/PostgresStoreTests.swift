import Foundation
import ShelfCore
@testable import ShelfPostgres
import ShelfStore
import ShelfTesting
import Testing

/// What only the PostgreSQL store has: its migrations shared by many processes, and its connection errors.
@Suite(.postgresServer, .serialized)
struct PostgresStoreTests {
    private func endpoint(_ database: String, password: Secret? = nil) throws -> PostgresStore.Endpoint {
        let server = try #require(SharedPostgres.server)
        return PostgresStore.Endpoint(
            host: server.host, port: server.port, user: server.user, password: password,
            database: database, tls: .disable)
    }

    @Test("Workers starting together migrate the schema once, one after the other")
    func migrationsUnderTheLock() throws {
        let endpoint = try endpoint(try #require(SharedPostgres.server).createDatabase())
        let versions = try onThreads(4) { _ in
            let store = try PostgresStore.open(endpoint)
            return Int(
                try store.read { try $0.queryOne("SELECT version FROM shelfd_schema WHERE id = 1")?.int("version") }
                    ?? 0)
        }
        #expect(versions == Array(repeating: Migration.steps(on: .postgres).count, count: 4))
    }

    @Test("A database that counts more migrations than this shelfd has, and records none by name, is refused")
    func newerSchemaIsRefused() throws {
        let endpoint = try endpoint(try #require(SharedPostgres.server).createDatabase())
        try PostgresStore.open(endpoint).write {
            try $0.execute("UPDATE shelfd_schema SET version = \(Migration.steps(on: .postgres).count + 1)")
            try $0.execute("DROP TABLE schema_migration")
        }
        let error = try #require(throws: StoreError.self) { try PostgresStore.open(endpoint) }
        #expect(error.description.contains("newer than this shelfd knows"))
        #expect(error.description.contains("Upgrade shelfd"))
    }

    @Test("A server that is not there is named in the error, without the password")
    func unreachableServer() throws {
        var endpoint = try endpoint("nowhere", password: Secret("hunter2"))
        endpoint.port = try freeLoopbackPort()
        let error = try #require(throws: StoreError.self) { try PostgresStore.open(endpoint) }
        #expect(error.description.contains("cannot connect"))
        #expect(error.description.contains("postgresql://postgres@127.0.0.1:\(endpoint.port)/nowhere"))
        #expect(!error.description.contains("hunter2"))
    }

    @Test("A store finds its server again after the connection is lost")
    func reconnects() throws {
        let endpoint = try endpoint(try #require(SharedPostgres.server).createDatabase())
        let store = try PostgresStore.open(endpoint)
        func backend() throws -> Int64? {
            try store.read { try $0.queryOne("SELECT pg_backend_pid() AS pid")?.int("pid") }
        }
        let before = try #require(try backend())
        // Another session ends this store's connection, as a server restart or a network cut would.
        let admin = try PostgresStore.open(endpoint)
        let cut = try admin.read { try $0.queryOne("SELECT pg_terminate_backend(\(before)) AS cut")?.int("cut") }
        #expect(cut == 1, "the server ended the store's connection")
        // The next call either finds the loss (and says so) or has already connected again; never a wrong answer.
        do { _ = try store.providers.providerHealth("gemini") } catch {
            #expect("\(error)".contains("connection to PostgreSQL was lost"), "\(error)")
        }
        let after = try #require(try backend())
        #expect(after != before, "a new connection")
        #expect(try store.providers.providerHealth("gemini") == nil)
    }
}
