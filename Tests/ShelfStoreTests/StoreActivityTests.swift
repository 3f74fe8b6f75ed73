import Foundation
import ShelfCore
import ShelfStore
import ShelfTesting
import Testing

/// What a store counts of its own traffic (`Store.activity`, /metrics' `shelfd_store_*`), on SQLite and PostgreSQL alike.
@Suite(.postgresServer, .serialized)
struct StoreActivityTests {
    @Test(
        "A store counts its statements with BEGIN and COMMIT (and PostgreSQL's write lock), its transactions (and which write) and its claims",
        arguments: StoreKind.allCases)
    func countsWhatItSends(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let store = try site.open()
            let start = store.activity

            _ = try store.write { db in try db.query("SELECT 1 = 1 AS one") }
            let written = store.activity
            #expect(written.transactions - start.transactions == 1)
            #expect(written.writeTransactions - start.writeTransactions == 1)
            #expect(
                written.statements - start.statements == (kind == .sqlite ? 3 : 4),
                "BEGIN, the lock on a server, the query, COMMIT")

            _ = try store.read { db in try db.query("SELECT 1 = 1 AS one") }
            let read = store.activity
            #expect(read.transactions - written.transactions == 1)
            #expect(read.statements - written.statements == 3, "BEGIN, the query, COMMIT")
            #expect(read.writeTransactions == written.writeTransactions)
            #expect(read.claims == start.claims)

            _ = try store.readStatement { db in try db.query("SELECT 1 = 1 AS one") }
            let alone = store.activity
            #expect(
                alone.statements - read.statements == 1 && alone.transactions == read.transactions,
                "one statement on its own: no BEGIN or COMMIT")

            _ = try store.queue.recordSighting(
                path: "/in/p.jpg", relativePath: "p.jpg", sha256: "sha", size: 1, mtime: 0, syncConflict: false,
                provider: "gemini", providerChoice: nil, now: Date())
            let claimed = try store.queue.claim(limit: 5, provider: "gemini", owner: "a", lease: 60, now: Date())
            let empty = try store.queue.claim(limit: 5, provider: "gemini", owner: "a", lease: 60, now: Date())
            #expect(claimed.count == 1 && empty.isEmpty)
            let after = store.activity
            #expect(after.claims - alone.claims == 2, "a claim that finds nothing counts too")
            #expect(after.claimSeconds > alone.claimSeconds)
        }
    }
}
