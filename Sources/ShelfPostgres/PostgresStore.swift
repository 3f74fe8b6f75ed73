import Foundation
import Logging
import PostgresNIO
import ShelfCore
import ShelfStore

/// The store on a PostgreSQL server, for several shelfd workers sharing one queue (`[store] url`). It stands behind
/// the same seams as the SQLite `Store` (StoreSeams.swift): today the queue (`JobQueue`), the request budgets
/// (`RequestBudgetStore`) and the providers' health (`ProviderHealthStore`).
///
/// Like `Store`, it is one connection per process and every call is short and serialised behind a lock. The seams
/// are synchronous, PostgresNIO is not: each call waits for its round trips on the calling thread
/// (`Session.wait`). The futures complete on the store's own event-loop thread, never on Swift's cooperative pool,
/// so a blocked caller cannot starve the work it waits for; a deadline turns a server that stopped answering into
/// an error instead of a hung worker. ARCHITECTURE.md ("Two stores") says why, and the plan to make the seams async.
package final class PostgresStore: @unchecked Sendable {      // unchecked: `connection` is only used under `lock`
    private let endpoint: Endpoint
    private let logger: Logger
    private let lock = NSLock()
    private var connection: PostgresConnection?
    private var closed = false

    private init(endpoint: Endpoint, logger: Logger) {
        self.endpoint = endpoint
        self.logger = logger
    }

    /// Connects and brings the schema up to date (PostgresSchema.swift): one process at a time migrates, and a
    /// database already migrated by a newer shelfd is refused.
    package static func open(_ endpoint: Endpoint, logger: Logger = Logger(label: "shelfd.postgres")) throws -> PostgresStore {
        let store = PostgresStore(endpoint: endpoint, logger: logger)
        do {
            try store.withSession { try PostgresSchema.migrate($0) }
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// Ends the connection; later calls fail.
    package func close() {
        lock.withLock {
            closed = true
            if let connection { _ = try? Session.wait(connection.close(), timeout: 5) }
            connection = nil
        }
    }

    // PostgresNIO requires a connection closed before it goes.
    deinit { if let connection { _ = try? Session.wait(connection.close(), timeout: 5) } }

    /// The schema version this database is at.
    package func schemaVersion() throws -> Int {
        try withSession { try PostgresSchema.version($0) }
    }

    /// A transaction: committed when `body` returns, rolled back when it throws. Statements that must see each
    /// other's rows locked (a claim, a turn) take their locks with `FOR UPDATE` inside it.
    @discardableResult
    func write<T>(_ body: (Session) throws -> T) throws -> T {
        try withSession { session in
            try session.script("BEGIN")
            do {
                let value = try body(session)
                try session.script("COMMIT")
                return value
            } catch {
                try? session.script("ROLLBACK")
                throw error
            }
        }
    }

    /// Single statements that need no transaction of their own (each is one already).
    @discardableResult
    func read<T>(_ body: (Session) throws -> T) throws -> T { try withSession(body) }

    /// One statement without values, outside the seams (tests, administration).
    func script(_ sql: String) throws { try withSession { try $0.script(sql) } }

    /// The connection, made again when the last one was lost (server restarted, deadline passed).
    private func withSession<T>(_ body: (Session) throws -> T) throws -> T {
        try lock.withLock {
            guard !closed else { throw PostgresStoreError(.closed, "the PostgreSQL store was closed") }
            if connection == nil || connection?.isClosed == true {
                connection = try connect()
            }
            let session = Session(connection: connection!, logger: logger)
            do {
                return try body(session)
            } catch let error as PostgresStoreError where error.kind == .timedOut || error.kind == .connection {
                // The connection's state is unknown: the next call starts a new one.
                if let connection { _ = try? Session.wait(connection.close(), timeout: 5) }
                connection = nil
                throw error
            }
        }
    }

    /// The connections' own event-loop thread, shared by every PostgresStore of the process. Not NIO's singleton
    /// group, which the web server also runs on: a caller blocked in `Session.wait` on one of its threads could be
    /// holding the very thread its answer has to arrive on.
    private static let eventLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()

    private func connect() throws -> PostgresConnection {
        let configuration = try endpoint.configuration()
        let future = PostgresConnection.connect(on: Self.eventLoop, configuration: configuration, id: 1, logger: logger)
        do {
            return try Session.wait(future, timeout: 30)
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresStoreError(.connection, "cannot connect to PostgreSQL at \(endpoint.redacted): \(Session.describe(error))")
        }
    }
}

extension PostgresStore {
    /// Where the database is and how to reach it. Built from `[store] url` by the daemon; tests make it directly.
    package struct Endpoint: Sendable, Equatable {
        package var host: String
        package var port: Int
        package var user: String
        /// From the secret `store_password`, else the URL's own; nil: none (a server that trusts this host).
        package var password: Secret?
        package var database: String
        package var tls: TLSMode

        package init(host: String, port: Int = 5432, user: String, password: Secret? = nil, database: String,
                     tls: TLSMode = .prefer) {
            self.host = host; self.port = port; self.user = user; self.password = password
            self.database = database; self.tls = tls
        }

        /// For messages: never the password.
        package var redacted: String { "postgresql://\(user)@\(host):\(port)/\(database)" }

        func configuration() throws -> PostgresConnection.Configuration {
            let tls: PostgresConnection.Configuration.TLS
            do {
                switch self.tls {
                case .disable: tls = .disable
                // As libpq's sslmode: prefer and require encrypt without checking the certificate (a server's own
                // self-signed one is the common case); verify-full checks it against the system's roots and the host.
                case .prefer, .require:
                    var settings = TLSConfiguration.makeClientConfiguration()
                    settings.certificateVerification = .none
                    let context = try NIOSSLContext(configuration: settings)
                    tls = self.tls == .prefer ? .prefer(context) : .require(context)
                case .verifyFull:
                    tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
            } catch {
                throw PostgresStoreError(.connection, "cannot set up TLS for \(redacted): \(error)")
            }
            return PostgresConnection.Configuration(host: host, port: port, username: user, password: password?.value,
                                                    database: database, tls: tls)
        }
    }

    /// libpq's `sslmode` words that shelfd takes.
    package enum TLSMode: String, Sendable, Equatable, CaseIterable {
        case disable, prefer, require
        case verifyFull = "verify-full"
    }
}

/// What went wrong with the PostgreSQL store, in words that say what to do.
package struct PostgresStoreError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        case connection, timedOut, query, schemaTooNew, notYetSupported, closed
    }
    package var kind: Kind
    package var message: String

    package init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }
    package var description: String { message }
}

/// One connection's statements, in the caller's transaction if it opened one.
struct Session {
    let connection: PostgresConnection
    let logger: Logger
    /// A statement's longest wait for the server.
    static let deadline: TimeInterval = 30

    /// Runs one statement (values bound through interpolation) and returns its rows.
    @discardableResult
    func query(_ query: PostgresQuery, timeout: TimeInterval = Session.deadline) throws -> [PostgresRow] {
        try run(query.sql) { try Self.wait(connection.query(query, logger: logger), timeout: timeout).rows }
    }

    /// Runs one statement and returns how many rows it changed.
    @discardableResult
    func execute(_ query: PostgresQuery) throws -> Int {
        try run(query.sql) { try Self.wait(connection.query(query, logger: logger), timeout: Session.deadline).metadata.rows ?? 0 }
    }

    /// One statement without values (BEGIN, COMMIT, DDL). PostgresNIO speaks only the extended protocol, one
    /// statement a message: a migration's several statements run as one `DO` block (PostgresSchema.migrate).
    func script(_ sql: String) throws {
        _ = try run(sql) { try Self.wait(connection.query(PostgresQuery(unsafeSQL: sql), logger: logger), timeout: Session.deadline) }
    }

    private func run<T>(_ sql: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresStoreError {
            throw error
        } catch let error as PSQLError where Self.isConnectionLost(error) {
            throw PostgresStoreError(.connection, "the connection to PostgreSQL was lost: \(Self.describe(error))")
        } catch {
            let statement = sql.split(separator: "\n").first.map(String.init) ?? sql
            throw PostgresStoreError(.query, "PostgreSQL: \(Self.describe(error)) (in: \(statement.prefix(120)))")
        }
    }

    /// The connection is gone (closed, cut, or ended by the server: shutdown, an administrator): the next call
    /// connects again.
    static func isConnectionLost(_ error: PSQLError) -> Bool {
        if [.serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown].contains(error.code) { return true }
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("08") || state.hasPrefix("57P")
    }

    /// Waits on the calling thread for a future NIO completes on its own threads, for at most `timeout` seconds.
    static func wait<T>(_ future: EventLoopFuture<T>, timeout: TimeInterval) throws -> T {
        precondition(!future.eventLoop.inEventLoop, "PostgresStore called on its own event loop: it would wait for itself")
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        future.whenComplete { result in
            outcome.set(result)
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else {
            throw PostgresStoreError(.timedOut, "PostgreSQL did not answer within \(Int(timeout)) s (is the server up and reachable?)")
        }
        return try outcome.get()
    }

    /// The server's own message when there is one (PSQLError's description hides it on purpose).
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] {
            let code = error.serverInfo?[.sqlState].map { " [\($0)]" } ?? ""
            return message + code
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }
}

private final class Outcome<T>: @unchecked Sendable {      // unchecked: written once before the semaphore is signalled
    private var result: Result<T, any Error>?
    func set(_ result: Result<T, any Error>) { self.result = result }
    func get() throws -> T {
        guard let result else { throw PostgresStoreError(.timedOut, "PostgreSQL gave no answer") }
        return try result.get()
    }
}
