import Foundation
import ShelfPostgres
import ShelfStore
import ShelfTesting
import Testing

/// The views of the store the contract covers; both stores conform.
typealias ContractStore = JobQueue & RequestBudgetStore & ProviderHealthStore

/// The two stores, as arguments of each contract test.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// One database of a kind, opened as often as a test wants: each handle is what one shelfd process would hold
/// (its own SQLite connection, its own PostgreSQL connection).
struct StoreSite {
    let kind: StoreKind
    private let sqlitePath: String?
    private let endpoint: PostgresStore.Endpoint?

    func open() throws -> any ContractStore {
        if let sqlitePath { return try Store.open(path: sqlitePath) }
        return try PostgresStore.open(endpoint!)
    }

    /// Runs `body` with a new, empty database of `kind` (a fresh database on the suite's PostgreSQL server).
    static func with<T>(_ kind: StoreKind, _ body: (StoreSite) throws -> T) throws -> T {
        switch kind {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-contract-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            return try body(StoreSite(kind: kind, sqlitePath: folder.appendingPathComponent("shelfd.db").path, endpoint: nil))
        case .postgres:
            let server = try #require(SharedPostgres.server, "the suite needs the .postgresServer trait")
            let database = try server.createDatabase()
            let endpoint = PostgresStore.Endpoint(host: server.host, port: server.port, user: server.user, database: database,
                                                  tls: .disable)
            return try body(StoreSite(kind: kind, sqlitePath: nil, endpoint: endpoint))
        }
    }
}

/// The PostgreSQL server a suite's tests share (each test makes its own database on it).
enum SharedPostgres {
    @TaskLocal static var server: PostgresServer?
}

/// Starts one PostgreSQL server around a whole suite, stopped and deleted after its last test.
struct PostgresServerTrait: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withPostgres { server in
            try await SharedPostgres.$server.withValue(server) { try await function() }
        }
    }
}

extension Trait where Self == PostgresServerTrait {
    static var postgresServer: Self { PostgresServerTrait() }
}

/// Runs `body(0) … body(count - 1)` on threads of their own, all at once, and returns their results in order.
/// Threads, not tasks: the stores' calls block, and the point is that several callers are inside them together.
func onThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
    let results = Results<T>(count: count)
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            results.set(index, Result { try body(index) })
            group.leave()
        }
        thread.start()
    }
    group.wait()
    return try results.all()
}

private final class Results<T: Sendable>: @unchecked Sendable {      // unchecked: `values` only under `lock`
    private let lock = NSLock()
    private var values: [Result<T, any Error>?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: Result<T, any Error>) { lock.withLock { values[index] = value } }
    func all() throws -> [T] { try lock.withLock { try values.map { try $0!.get() } } }
}
