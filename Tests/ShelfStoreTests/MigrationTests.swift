import Foundation
import ShelfCore
import ShelfPostgres
import ShelfStore
import ShelfTesting
import Testing

/// The one named list of migrations (Migrations.swift) on both engines: a database of the schema before names were
/// recorded upgrades where it is, a fresh one records every migration, and one a newer shelfd migrated is refused.
@Suite(.postgresServer, .serialized)
struct MigrationTests {
    /// Each engine's database as it was at the last count-only version, with photos, books and review items in it.
    static func dump(_ kind: StoreKind) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
            .appendingPathComponent(kind == .sqlite ? "sqlite-schema-24.sql" : "postgres-schema-14.sql")
    }

    static func engine(_ kind: StoreKind) -> DatabaseEngine { kind == .sqlite ? .sqlite : .postgres }

    /// The migrations a database records, in the order they were applied, with whether each has a time.
    static func ledger(_ store: Store) throws -> [(name: String, timed: Bool)] {
        try store.read { db in
            try db.query(
                "SELECT name, CASE WHEN applied_at IS NULL THEN 0 ELSE 1 END AS timed FROM schema_migration ORDER BY name"
            ).map { ($0.string("name") ?? "", $0.int("timed") == 1) }
        }
    }

    static func count(_ table: String, _ store: Store) throws -> Int64 {
        try store.read { try $0.queryOne("SELECT COUNT(*) AS n FROM \(table)")?.int("n") ?? -1 }
    }

    @Test("Every migration has a name of its own and SQL for at least one engine")
    func namesAreUnique() {
        let names = Migration.all.map(\.name)
        #expect(Set(names).count == names.count, "a name used twice: \(names)")
        #expect(Migration.all.allSatisfy { $0.sqlite != nil || $0.postgres != nil })
    }

    @Test(
        "Today's database upgrades where it is: each migration it had is recorded by name, nothing runs again, nothing is lost",
        arguments: StoreKind.allCases)
    func upgradesInPlace(kind: StoreKind) throws {
        let fresh = try StoreSite.with(kind) { site in try SchemaMirrorTests.shape(try site.open()) }
        try StoreSite.with(kind, restoring: Self.dump(kind)) { site in
            let store = try site.open()
            let steps = Migration.steps(on: Self.engine(kind)).map(\.name)
            let ledger = try Self.ledger(store)
            #expect(ledger.map(\.name) == steps.sorted())
            #expect(ledger.allSatisfy { !$0.timed }, "recorded from the count, not applied again")
            #expect(try SchemaMirrorTests.shape(store) == fresh, "the upgraded schema is a fresh one's")

            // What the person had is still there and still works.
            #expect(try Self.count("photo", store) == 2)
            #expect(try Self.count("book", store) == 22)
            #expect(try store.status.queueCounts().review == 2)
            let open = try store.library.openReviewItems()
            #expect(open.count == 20)
            #expect(try store.library.entries().filter { $0.status == .verified }.count == 2)
            let item = try #require(open.first)
            _ = try store.library.decide(item.id, .accept, now: Date(timeIntervalSince1970: 2_000_000_000))
            #expect(try store.library.openReviewItems().count == 19)

            // Opened again, nothing changes.
            let again = try site.open()
            #expect(try Self.ledger(again).map(\.name) == steps.sorted())
        }
    }

    @Test("A new database records every migration of its engine as it applies it", arguments: StoreKind.allCases)
    func freshDatabaseRecordsEach(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let store = try site.open()
            let ledger = try Self.ledger(store)
            #expect(ledger.map(\.name) == Migration.steps(on: Self.engine(kind)).map(\.name).sorted())
            #expect(ledger.allSatisfy { $0.timed })
        }
    }

    @Test(
        "A database that records a migration this shelfd does not know is refused, untouched, with what to do",
        arguments: StoreKind.allCases)
    func newerMigrationRefused(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let store = try site.open()
            try store.write {
                try $0.execute("INSERT INTO schema_migration (name, applied_at) VALUES ('from-a-newer-shelfd', 1)")
            }
            let error = try #require(throws: (any Error).self) { try site.open() }
            #expect("\(error)".contains("newer than this shelfd knows (from-a-newer-shelfd)"))
            #expect("\(error)".contains("Upgrade shelfd"))
            #expect(try Self.ledger(store).count == Migration.steps(on: Self.engine(kind)).count + 1)
        }
    }
}
