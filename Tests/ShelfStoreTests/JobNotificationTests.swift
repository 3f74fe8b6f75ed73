import Foundation
import ShelfCore
@testable import ShelfPostgres
import ShelfStore
import ShelfTesting
import Synchronization
import Testing

/// PostgreSQL announces jobs made due, and a listener hears them again after its connection was lost.
@Suite(.postgresServer, .serialized)
struct JobNotificationTests {
    @Test("A queued photo wakes a listener, also after the server ended its connection", .timeLimit(.minutes(3)))
    func queuedJobWakesTheListener() async throws {
        let server = try #require(SharedPostgres.server)
        let endpoint = PostgresStore.Endpoint(
            host: server.host, port: server.port, user: server.user,
            database: try server.createDatabase(), tls: .disable)
        let store = try PostgresStore.open(endpoint)
        let wakes = Wakes()
        let listener = Task { await PostgresStore.listenForJobs(endpoint) { wakes.add() } }
        defer { listener.cancel() }

        // One wake-up once it listens; a machine busy with other tests' builds may take a while to connect.
        try await wakes.wait(beyond: 0, "the listener is connected", timeout: .seconds(60))
        var seen = wakes.count
        try queue(store, photo: 1)
        try await wakes.wait(beyond: seen, "a queued photo is announced")

        // Every other session ended, as a server restart would: the listener connects again and hears the next one.
        _ = try store.read {
            try $0.query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                """)
        }
        seen = wakes.count
        // It tries again every 5 s; a machine busy with other tests may take a few tries.
        try await wakes.wait(beyond: seen, "the listener connected again", timeout: .seconds(60))
        seen = wakes.count
        try queue(store, photo: 2)
        try await wakes.wait(beyond: seen, "a photo queued after the loss is announced")
    }

    private func queue(_ store: Store, photo: Int) throws {
        _ = try store.queue.recordSighting(
            path: "/shelves/\(photo).jpg", relativePath: "\(photo).jpg",
            sha256: String(repeating: "\(photo)", count: 64), size: 1_000, mtime: 1,
            syncConflict: false, provider: "gemini", now: Date())
    }
}

private final class Wakes: Sendable {
    private let counter = Atomic<Int>(0)
    var count: Int { counter.load(ordering: .relaxed) }
    func add() { counter.add(1, ordering: .relaxed) }

    func wait(beyond seen: Int, _ what: String, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil(what, timeout: timeout, every: .milliseconds(20)) { count > seen }
    }
}
