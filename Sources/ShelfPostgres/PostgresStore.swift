import Foundation
import Logging
import PostgresNIO
import ShelfCore
import ShelfStore

/// The store on a PostgreSQL server, for several shelfd workers sharing one queue, library and review (`[store] url`).
/// It is the same `Store` as on SQLite, statement for statement, on a `PostgresDatabase` connection: ARCHITECTURE.md
/// ("Two stores") says why one set of statements serves both engines.
package enum PostgresStore {
    /// Tables only PostgreSQL has: its record of the schema's version, and the change counter the node that writes
    /// the files polls (`[store] writes_files`). Neither mirrors SQLite nor is copied from it.
    package static let tablesOfItsOwn: Set<String> = ["shelfd_schema", "files_change"]

    /// Connects and brings the schema up to date (PostgresSchema.swift): one process at a time migrates, and a
    /// database already migrated by a newer shelfd is refused.
    package static func open(_ endpoint: Endpoint, logger: Logger = Logger(label: "shelfd.postgres")) throws -> Store {
        let database = PostgresDatabase(endpoint: endpoint, logger: logger)
        try database.migrate()
        return Store(connection: database, location: endpoint.redacted)
    }
}

/// One connection to PostgreSQL, as the store's statements need it: `?` placeholders numbered as PostgreSQL's `$n`,
/// values bound with their types, rows read back as `SQLValue`s, and the write lock a transaction-wide advisory lock.
///
/// Used only under `Store`'s lock, one call at a time. The seams are synchronous, PostgresNIO is not: each call waits
/// for its round trip on the calling thread (`Session.wait`). The futures complete on the connection's own event-loop
/// thread, never on Swift's cooperative pool, so a blocked caller cannot starve the work it waits for; a deadline turns
/// a server that stopped answering into an error instead of a hung worker, and the next call connects again.
final class PostgresDatabase: DatabaseConnection {
    private let endpoint: PostgresStore.Endpoint
    private let logger: Logger
    private var connection: PostgresConnection?
    private var inTransaction = false
    private(set) var changes = 0

    init(endpoint: PostgresStore.Endpoint, logger: Logger) {
        self.endpoint = endpoint
        self.logger = logger
    }

    // PostgresNIO requires a connection closed before it goes.
    deinit { if let connection { _ = try? Session.wait(connection.close(), timeout: 5) } }

    var engine: DatabaseEngine { .postgres }

    /// Any number fixed for shelfd: the lock every write transaction of every worker holds (SQLite's one writer).
    static let writeLockKey: Int64 = 0x7368_656C_6677 // "shelfw"

    func migrate() throws(StoreError) {
        try translatingErrors("migrations") {
            try PostgresSchema.migrate(Session(connection: try connected(), logger: logger))
        }
    }

    func execute(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError) {
        changes = try run(sql, arguments).metadata.rows ?? 0
    }

    func query(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError) -> [Row] {
        try run(sql, arguments).rows.map(Self.row)
    }

    func executeScript(_ sql: String) throws(StoreError) { _ = try run(sql, []) }

    func begin(_ kind: TransactionKind) throws(StoreError) {
        try executeScript("BEGIN")
        inTransaction = true
        if kind == .write { try executeScript("SELECT pg_advisory_xact_lock(\(Self.writeLockKey))") }
    }

    func commit() throws(StoreError) {
        defer { inTransaction = false }
        try executeScript("COMMIT")
    }

    func rollback() {
        defer { inTransaction = false }
        if connection != nil { try? executeScript("ROLLBACK") }
    }

    func releaseMemory() {}

    private func run(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError) -> PostgresQueryResult {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument.sqlValue {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let value): bindings.append(ByteBuffer(bytes: value))
            }
        }
        let query = PostgresQuery(unsafeSQL: Self.numberedPlaceholders(sql), binds: bindings)
        return try translatingErrors(sql) {
            try Session.wait(try connected().query(query, logger: logger), timeout: Session.deadline)
        }
    }

    /// The connection, made again when the last one was lost (server restarted, deadline passed), unless a
    /// transaction was under way on it: that one is over, and its caller must hear so.
    private func connected() throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        connection = nil
        if inTransaction {
            throw PostgresStoreError(
                .connection, "the connection to PostgreSQL was lost during a transaction, which was rolled back")
        }
        let future = PostgresConnection.connect(
            on: Self.eventLoop, configuration: try endpoint.configuration(), id: 1, logger: logger)
        do {
            let made = try Session.wait(future, timeout: 30)
            connection = made
            return made
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresStoreError(
                .connection, "cannot connect to PostgreSQL at \(endpoint.redacted): \(Session.describe(error))")
        }
    }

    /// Every failure as the store's error; a lost connection or a deadline also ends the connection, whose state is
    /// unknown, so that the next call starts a new one.
    private func translatingErrors<T>(_ sql: String, _ body: () throws -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            let failure = Session.failure(error, in: sql)
            if failure.kind == .timedOut || failure.kind == .connection {
                if let connection { _ = try? Session.wait(connection.close(), timeout: 5) }
                connection = nil
            }
            throw StoreError(code: StoreError.serverCode, message: failure.message, sql: sql)
        }
    }

    /// The connections' own event-loop thread, shared by every PostgresDatabase of the process. Not NIO's singleton
    /// group, which the web server also runs on: a caller blocked in `Session.wait` on one of its threads could be
    /// holding the very thread its answer has to arrive on.
    static let eventLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()

    /// SQLite's placeholders as PostgreSQL's: `?NNN` is `$NNN`, a bare `?` the number after the largest so far (as
    /// SQLite counts them). Quoted text and comments are left alone.
    static func numberedPlaceholders(_ sql: String) -> String {
        guard sql.contains("?") else { return sql }
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var largest = 0
        var characters = sql.makeIterator()
        var pending: Character? = nil
        func next() -> Character? {
            if let waiting = pending { pending = nil; return waiting }
            return characters.next()
        }
        while let character = next() {
            switch character {
            case "'":
                result.append(character)
                while let inside = next() {
                    result.append(inside)
                    if inside == "'" { break }
                }
            case "-":
                result.append(character)
                guard let following = next() else { break }
                result.append(following)
                if following == "-" {
                    while let inside = next() {
                        result.append(inside)
                        if inside == "\n" { break }
                    }
                }
            case "?":
                var digits = ""
                while let digit = next() {
                    if digit.isASCII && digit.isNumber { digits.append(digit) } else { pending = digit; break }
                }
                let number = Int(digits) ?? (largest + 1)
                largest = max(largest, number)
                result += "$\(number)"
            default:
                result.append(character)
            }
        }
        return result
    }

    /// A row as the store reads rows: integers, reals, text and bytes; PostgreSQL's booleans as SQLite's 0 and 1, its
    /// numerics (the sum of bigints) as integers when whole.
    static func row(_ row: PostgresRow) -> Row {
        var values: [String: SQLValue] = [:]
        for cell in row { values[cell.columnName] = value(of: cell) }
        return Row(values: values)
    }

    private static func value(of cell: PostgresCell) -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8:
            return (try? cell.decode(Int64.self)).map(SQLValue.integer) ?? .null
        case .float4, .float8:
            return (try? cell.decode(Double.self)).map(SQLValue.real) ?? .null
        case .numeric:
            guard let number = try? cell.decode(Decimal.self) else { return .null }
            let double = NSDecimalNumber(decimal: number).doubleValue
            if double.rounded() == double, abs(double) < 9e15 { return .integer(Int64(double)) }
            return .real(double)
        case .bool:
            return (try? cell.decode(Bool.self)).map { .integer($0 ? 1 : 0) } ?? .null
        case .bytea:
            return (try? cell.decode(ByteBuffer.self)).map { .blob(Array($0.readableBytesView)) } ?? .null
        default:
            return (try? cell.decode(String.self)).map(SQLValue.text) ?? .null
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

        package init(
            host: String, port: Int = 5432, user: String, password: Secret? = nil, database: String,
            tls: TLSMode = .prefer
        ) {
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
            return PostgresConnection.Configuration(
                host: host, port: port, username: user, password: password?.value,
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
        case connection, timedOut, query, schemaTooNew
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

    /// One statement without values (BEGIN, COMMIT, DDL). PostgresNIO speaks only the extended protocol, one
    /// statement a message: a migration's several statements run as one `DO` block (PostgresSchema.migrate).
    func script(_ sql: String) throws {
        _ = try run(sql) {
            try Self.wait(connection.query(PostgresQuery(unsafeSQL: sql), logger: logger), timeout: Session.deadline)
        }
    }

    private func run<T>(_ sql: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw Self.failure(error, in: sql) }
    }

    /// Any failure of a statement in words: a lost connection, or the server's message with the statement's first line.
    static func failure(_ error: any Error, in sql: String) -> PostgresStoreError {
        if let error = error as? PostgresStoreError { return error }
        if let error = error as? PSQLError, isConnectionLost(error) {
            return PostgresStoreError(.connection, "the connection to PostgreSQL was lost: \(describe(error))")
        }
        let statement = sql.split(separator: "\n").first.map(String.init) ?? sql
        return PostgresStoreError(.query, "PostgreSQL: \(describe(error)) (in: \(statement.prefix(120)))")
    }

    /// The connection is gone (closed, cut, or ended by the server: shutdown, an administrator): the next call
    /// connects again.
    static func isConnectionLost(_ error: PSQLError) -> Bool {
        if [.serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown].contains(error.code) {
            return true
        }
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("08") || state.hasPrefix("57P")
    }

    /// Waits on the calling thread for a future NIO completes on its own threads, for at most `timeout` seconds.
    static func wait<T>(_ future: EventLoopFuture<T>, timeout: TimeInterval) throws -> T {
        precondition(
            !future.eventLoop.inEventLoop, "PostgresStore called on its own event loop: it would wait for itself")
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        future.whenComplete { result in
            outcome.set(result)
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else {
            throw PostgresStoreError(
                .timedOut, "PostgreSQL did not answer within \(Int(timeout)) s (is the server up and reachable?)")
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

private final class Outcome<T>: @unchecked Sendable { // unchecked: written once before the semaphore is signalled
    private var result: Result<T, any Error>?
    func set(_ result: Result<T, any Error>) { self.result = result }
    func get() throws -> T {
        guard let result else { throw PostgresStoreError(.timedOut, "PostgreSQL gave no answer") }
        return try result.get()
    }
}
