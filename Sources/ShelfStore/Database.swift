/// The SQL engine a store runs on.
package enum DatabaseEngine: String, Sendable {
    /// One file, one machine: the default.
    case sqlite
    /// A server several workers share (`[store] url`, the ShelfPostgres target).
    case postgres
}

/// How a transaction begins.
package enum TransactionKind: Sendable {
    /// Holds the database's one write lock from the start: SQLite's `BEGIN IMMEDIATE`, PostgreSQL's transaction-wide
    /// advisory lock. Two writers, in this process or another, on this machine or another, never interleave, so a
    /// transaction that reads "pending" and then claims it is right on both engines.
    case write
    /// A consistent snapshot for several queries.
    case read
}

/// What the store's statements run on. `Store`'s statements are written once, in the SQL both engines speak:
/// `?` placeholders, `ON CONFLICT`, `RETURNING`, `IS NOT DISTINCT FROM`, `CASE` rather than SQLite's scalar `MAX`,
/// integers 0/1 rather than booleans. The few places where they differ ask `engine`.
package protocol DatabaseConnection: AnyObject {
    var engine: DatabaseEngine { get }
    func execute(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError)
    func query(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError) -> [Row]
    /// Statements without values (schema, pragmas, transaction control).
    func executeScript(_ sql: String) throws(StoreError)
    /// Rows the last `execute` changed.
    var changes: Int { get }
    func begin(_ kind: TransactionKind) throws(StoreError)
    func commit() throws(StoreError)
    func rollback()
    /// Gives cached pages back while the daemon is idle (SQLite's page cache; nothing on a server).
    func releaseMemory()
}

extension DatabaseConnection {
    package func execute(_ sql: String) throws(StoreError) { try execute(sql, []) }
    package func query(_ sql: String) throws(StoreError) -> [Row] { try query(sql, []) }

    package func queryOne(_ sql: String, _ arguments: [any SQLBindable] = []) throws(StoreError) -> Row? {
        try query(sql, arguments).first
    }

    /// An `INSERT` into a table with an `id` key; returns the new row's id.
    package func insert(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError) -> Int64 {
        guard let id = try queryOne(sql + " RETURNING id", arguments)?.int("id") else {
            throw StoreError(code: 1, message: "the insert returned no id", sql: sql)
        }
        return id
    }

    /// Writes a whole row: a new one, or, where a row with the same `key` is there, its other columns replaced.
    /// `row` names every column, the key among them, with its value.
    package func upsert(into table: String, key: String, _ row: KeyValuePairs<String, any SQLBindable>)
        throws(StoreError)
    {
        let columns = row.map(\.key)
        let replaced = columns.filter { $0 != key }.map { "\($0) = excluded.\($0)" }
        try execute(
            "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(SQL.placeholders(columns.count))) "
                + "ON CONFLICT (\(key)) DO UPDATE SET \(replaced.joined(separator: ", "))",
            row.map(\.value))
    }

    /// `column` in an order that ignores ASCII case (SQLite's `NOCASE`; PostgreSQL's `lower`, which its index uses too).
    package func caseless(_ column: String) -> String {
        engine == .sqlite ? "\(column) COLLATE NOCASE" : "lower(\(column))"
    }

    /// A reading's title key up to its surname (`title:<title>|`), as the index `book_sighting_title_part` holds it:
    /// SQLite's `instr` is PostgreSQL's `strpos`.
    package func titlePart(_ column: String) -> String {
        "substr(\(column), 1, \(engine == .sqlite ? "instr" : "strpos")(\(column), '|'))"
    }
}

/// Pieces of statements built for a number of values.
package enum SQL {
    /// Values of `column` that start with a lowercase hex prefix (an id or a hash as a person types it), as a range
    /// its index walks: `LIKE 'p%'` is case-insensitive in SQLite, so it would read every row. With
    /// `hexPrefixArguments(prefix)` as the arguments.
    package static func hexPrefix(of column: String) -> String { "\(column) >= ? AND \(column) < ?" }
    // "g" follows every hex digit
    package static func hexPrefixArguments(_ prefix: String) -> [any SQLBindable] { [prefix, prefix + "g"] }

    /// "?, ?, ?" for a list of `count` values.
    package static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// "(?, ?), (?, ?)" for `count` rows of `width` values.
    package static func rows(_ count: Int, of width: Int) -> String {
        Array(repeating: "(\(placeholders(width)))", count: count).joined(separator: ", ")
    }

    /// A long list in parts a statement's bound values can hold.
    package static func parts<Value>(of values: [Value], size: Int = 500) -> [[Value]] {
        stride(from: 0, to: values.count, by: size).map { Array(values[$0..<min($0 + size, values.count)]) }
    }
}
