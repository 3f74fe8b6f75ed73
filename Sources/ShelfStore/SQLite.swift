import CSQLite
import Foundation
import ShelfCore

extension [Row] {
    /// One column of every row, each read as `Row.required` reads it.
    package func required<Value: SQLReadable>(_ column: String, of table: String, as _: Value.Type = Value.self)
        throws(StoreError) -> [Value]
    {
        var values: [Value] = []
        values.reserveCapacity(count)
        for row in self { values.append(try row.required(column, of: table)) }
        return values
    }
}

/// A failed SQLite call: the result code, SQLite's message and the statement (never its bound values).
package struct StoreError: Error, Sendable, CustomStringConvertible {
    package var code: Int32
    package var message: String
    package var sql: String?

    /// The code of a PostgreSQL server's failure: its message already says what to do.
    package static let serverCode: Int32 = -1
    /// The code of a row with no value of the type the store reads a column as (`Row.required`).
    package static let undecodableRowCode: Int32 = -2

    package init(code: Int32, message: String, sql: String? = nil) {
        self.code = code; self.message = message; self.sql = sql
    }

    package var description: String {
        var text = "database error \(code): \(message)"
        if code == SQLITE_BUSY || code == SQLITE_LOCKED {
            text += " (another shelfd process holds the database; try again)"
        } else if code == SQLITE_FULL {
            text += " (the disk is full: free space under the state folder)"
        } else if code == SQLITE_READONLY || code == SQLITE_CANTOPEN || code == SQLITE_PERM {
            text += " (check that the state folder is writable by this user)"
        }
        return text
    }
}

/// A value bound to or read from a statement.
package enum SQLValue: Sendable, Equatable {
    case null, integer(Int64), real(Double), text(String), blob([UInt8])
}

package protocol SQLBindable { var sqlValue: SQLValue { get } }
extension Int: SQLBindable { package var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int64: SQLBindable { package var sqlValue: SQLValue { .integer(self) } }
extension Double: SQLBindable { package var sqlValue: SQLValue { .real(self) } }
extension String: SQLBindable { package var sqlValue: SQLValue { .text(self) } }
extension Bool: SQLBindable { package var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension Date: SQLBindable { package var sqlValue: SQLValue { .real(timeIntervalSince1970) } }
extension SQLValue: SQLBindable { package var sqlValue: SQLValue { self } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    package var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// A type a column's value is read as.
package protocol SQLReadable {
    /// Nil for NULL, or a value of another type.
    init?(sqlValue: SQLValue)
}

extension Int64: SQLReadable {
    package init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .integer(let v): self = v
        case .real(let v): self.init(v)
        default: return nil
        }
    }
}

extension Double: SQLReadable {
    package init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .integer(let v): self.init(v)
        case .real(let v): self = v
        default: return nil
        }
    }
}

extension String: SQLReadable {
    package init?(sqlValue: SQLValue) {
        guard case .text(let v) = sqlValue else { return nil }
        self = v
    }
}

extension Date: SQLReadable {
    package init?(sqlValue: SQLValue) {
        guard let seconds = Double(sqlValue: sqlValue) else { return nil }
        self.init(timeIntervalSince1970: seconds)
    }
}

/// An enum stored as its raw value: it is read back by it, and a text no case has is no value of it.
extension SQLReadable where Self: RawRepresentable, RawValue == String {
    package init?(sqlValue: SQLValue) {
        guard let raw = String(sqlValue: sqlValue) else { return nil }
        self.init(rawValue: raw)
    }
}

extension SQLBindable where Self: RawRepresentable, RawValue == String {
    package var sqlValue: SQLValue { .text(rawValue) }
}

extension JobState: SQLReadable, SQLBindable {}
extension Book.Status: SQLReadable {}
extension ProviderHealth.State: SQLReadable {}
extension HardcoverPushRecord.Outcome: SQLReadable {}
extension ShelfMark.Kind: SQLReadable, SQLBindable {}
extension ShelfChange.Kind: SQLReadable, SQLBindable {}

/// One result row, read by column name.
package struct Row: Sendable {
    let values: [String: SQLValue]
    package init(values: [String: SQLValue]) { self.values = values }
    package subscript(_ column: String) -> SQLValue { values[column] ?? .null }
    package func int(_ column: String) -> Int64? { Int64(sqlValue: self[column]) }
    package func double(_ column: String) -> Double? { Double(sqlValue: self[column]) }
    package func string(_ column: String) -> String? { String(sqlValue: self[column]) }
    package func date(_ column: String) -> Date? { Date(sqlValue: self[column]) }

    /// The value of a column the schema or the query never leaves NULL, as a `Value`. A row without one was written
    /// outside shelfd or is damaged: reading it throws, naming `table` and the column, rather than leave it out.
    package func required<Value: SQLReadable>(_ column: String, of table: String, as _: Value.Type = Value.self)
        throws(StoreError) -> Value
    {
        guard let value = Value(sqlValue: self[column]) else {
            throw undecodable(column, of: table, as: "\(Value.self)")
        }
        return value
    }

    /// A JSON document a column that is never NULL holds, decoded; a row without one throws as `required` does.
    package func requiredJSON<Value: Decodable>(_ column: String, of table: String, as _: Value.Type = Value.self)
        throws(StoreError) -> Value
    {
        guard let json = string(column), let value = try? JSONDecoder().decode(Value.self, from: Data(json.utf8))
        else { throw undecodable(column, of: table, as: "\(Value.self) as JSON") }
        return value
    }

    fileprivate func undecodable(_ column: String, of table: String, as type: String) -> StoreError {
        let found =
            switch self[column] {
            case .null: "NULL"
            case .integer: "an integer"
            case .real: "a real"
            case .text(let text): "the text \"\(text.prefix(40))\""
            case .blob: "a blob"
            }
        return StoreError(
            code: StoreError.undecodableRowCode,
            message: """
                \(table).\(column) holds \(found) where shelfd reads \(type): the row was written outside shelfd or \
                the database is damaged. Restore the state folder from a backup, or correct that row.
                """)
    }
}

/// One SQLite connection. Not thread-safe by itself: `Store` serialises every use behind a lock.
package final class SQLiteConnection: DatabaseConnection {
    package var engine: DatabaseEngine { .sqlite }
    private let handle: OpaquePointer

    package enum Mode { case readWriteCreate, readWrite, readOnly }

    /// Frees the pages this connection caches (up to 2 MB each after a busy spell); they are read again
    /// from the file, or the OS's page cache, when next needed.
    package func releaseMemory() {
        _ = sqlite3_db_release_memory(handle)
    }

    package init(path: String, mode: Mode = .readWriteCreate) throws(StoreError) {
        var db: OpaquePointer?
        let flags: Int32 =
            switch mode {
            case .readWriteCreate: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            case .readWrite: SQLITE_OPEN_READWRITE
            case .readOnly: SQLITE_OPEN_READONLY
            }
        let rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            sqlite3_close(db) // a failed open still allocates a handle
            throw StoreError(code: rc, message: "\(message): \(path)")
        }
        handle = db
        sqlite3_busy_timeout(db, 5_000) // `shelfd retry` may write while the daemon does
        sqlite3_extended_result_codes(db, 0)
    }

    deinit { sqlite3_close_v2(handle) }

    package func execute(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError) {
        _ = try run(sql, arguments, collect: false)
    }

    package func query(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError) -> [Row] {
        try run(sql, arguments, collect: true)
    }

    package func begin(_ kind: TransactionKind) throws(StoreError) {
        try executeScript(kind == .write ? "BEGIN IMMEDIATE" : "BEGIN")
    }

    package func commit() throws(StoreError) { try executeScript("COMMIT") }
    package func rollback() { try? executeScript("ROLLBACK") }

    /// Several statements at once, without arguments (schema, pragmas).
    package func executeScript(_ sql: String) throws(StoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "error"
            sqlite3_free(message)
            throw StoreError(code: rc, message: text, sql: sql)
        }
    }

    package var changes: Int { Int(sqlite3_changes(handle)) }

    private func run(_ sql: String, _ arguments: [any SQLBindable], collect: Bool) throws(StoreError) -> [Row] {
        var statement: OpaquePointer?
        var rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, sql) }
        defer { sqlite3_finalize(statement) }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            switch argument.sqlValue {
            case .null: rc = sqlite3_bind_null(statement, position)
            case .integer(let v): rc = sqlite3_bind_int64(statement, position, v)
            case .real(let v): rc = sqlite3_bind_double(statement, position, v)
            case .text(let v): rc = sqlite3_bind_text(statement, position, v, -1, csqlite_transient())
            case .blob(let v):
                rc = v.withUnsafeBytes {
                    sqlite3_bind_blob(statement, position, $0.baseAddress, Int32($0.count), csqlite_transient())
                }
            }
            guard rc == SQLITE_OK else { throw error(rc, sql) }
        }
        var rows: [Row] = []
        // Column names once per statement, not once per row.
        let names = (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
        while true {
            rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw error(rc, sql) }
            guard collect else { continue }
            var values: [String: SQLValue] = Dictionary(minimumCapacity: names.count)
            for (index, name) in names.enumerated() {
                let column = Int32(index)
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: values[name] = .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: values[name] = .real(sqlite3_column_double(statement, column))
                case SQLITE_TEXT: values[name] = .text(String(cString: sqlite3_column_text(statement, column)))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    let bytes = sqlite3_column_blob(statement, column)
                    values[name] = .blob(bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? [])
                default: values[name] = .null
                }
            }
            rows.append(Row(values: values))
        }
        return rows
    }

    private func error(_ rc: Int32, _ sql: String) -> StoreError {
        StoreError(code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}
