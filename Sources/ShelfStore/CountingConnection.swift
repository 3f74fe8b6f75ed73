/// The store's connection with a count of the statements sent through it. Used only under `Store`'s lock, like the
/// connection it wraps, so a plain counter is enough.
final class CountingConnection: DatabaseConnection {
    let base: any DatabaseConnection
    private(set) var statements = 0

    init(_ base: any DatabaseConnection) { self.base = base }

    var engine: DatabaseEngine { base.engine }
    var changes: Int { base.changes }

    func execute(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError) {
        statements += 1
        try base.execute(sql, arguments)
    }

    func query(_ sql: String, _ arguments: [any SQLBindable]) throws(StoreError) -> [Row] {
        statements += 1
        return try base.query(sql, arguments)
    }

    func executeScript(_ sql: String) throws(StoreError) {
        statements += 1
        try base.executeScript(sql)
    }

    func begin(_ kind: TransactionKind) throws(StoreError) {
        // BEGIN, and on PostgreSQL the write lock's statement after it.
        statements += base.engine == .postgres && kind == .write ? 2 : 1
        try base.begin(kind)
    }

    func commit() throws(StoreError) {
        statements += 1
        try base.commit()
    }

    func rollback() {
        statements += 1
        base.rollback()
    }

    func releaseMemory() { base.releaseMemory() }
}
