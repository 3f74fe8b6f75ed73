import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

@Suite struct RowDecodingTests {
    @Test func aColumnWithoutAValueOfItsTypeThrowsNamingTheTableAndColumn() throws {
        let row = Row(values: ["id": .null, "sha256": .integer(7), "kind": .text("stolen")])
        for (column, found) in [("id", "NULL"), ("sha256", "an integer")] {
            let error = try #require(throws: StoreError.self) {
                _ = try row.required(column, of: "job", as: String.self)
            }
            #expect(error.code == StoreError.undecodableRowCode)
            #expect(error.message.hasPrefix("job.\(column) holds \(found) where shelfd reads String"))
        }
        #expect(throws: StoreError.self) { try row.required("kind", of: "shelf_mark", as: ShelfMark.Kind.self) }
        #expect(throws: StoreError.self) { try [row].required("id", of: "job", as: Int64.self) }
    }

    @Test func marksAndChangesReadBackByTheirStoredText() throws {
        let row = Row(values: ["mark": .text("lent"), "change": .text("moved_out"), "at": .integer(60)])
        #expect(try row.required("mark", of: "shelf_mark", as: ShelfMark.Kind.self) == .lent)
        #expect(try row.required("change", of: "shelf_change", as: ShelfChange.Kind.self) == .movedOut)
        #expect(ShelfChange.Kind.movedOut.sqlValue == .text("moved_out"))
        #expect(try row.required("at", of: "photo", as: Date.self) == Date(timeIntervalSince1970: 60))
    }

    // SQLite only: PostgreSQL's columns would take these texts too, but the test needs one engine.
    @Test("A stored state or status no case has is an error naming it, not a guess")
    func unknownStoredTextIsAnError() throws {
        try withStore(.sqlite) { store, _ in
            try store.providers.setProviderHealth(
                ProviderHealth(name: "gemini", state: .backoff, until: nil, code: nil, message: nil),
                now: Date(timeIntervalSince1970: 1))
            try store.write { db in try db.execute("UPDATE provider_state SET state = 'sideways'", []) }
            // It was read as no trouble at all, so the provider would have been asked.
            let health = try #require(throws: StoreError.self) { try store.providers.providerHealth("gemini") }
            #expect(
                health.message.hasPrefix("provider_state.state holds the text \"sideways\" where shelfd reads State"))

            let at = Date(timeIntervalSince1970: 1)
            try store.queue.queuePhoto("a", now: at)
            try store.queue.finishReading(
                try store.queue.claimOne(now: at), [TallyTests.book("Dune")], shelf: nil, now: at)
            #expect(try store.library.libraryPage(search: "", sort: .title, offset: 0, limit: 10).rows.count == 1)
            try store.write { db in try db.execute("UPDATE book SET status = 'lost'", []) }
            // It was shown as waiting for review.
            let status = try #require(throws: StoreError.self) {
                try store.library.libraryPage(search: "", sort: .title, offset: 0, limit: 10)
            }
            #expect(status.message.hasPrefix("book.status holds the text \"lost\""))
        }
    }

    // SQLite only: its columns take a value of any type; PostgreSQL refuses text in a number's column.
    @Test("A row that does not decode is an error, not a row left out")
    func undecodableRowIsAnError() throws {
        try withStore(.sqlite) { store, _ in
            try store.queue.queuePhoto("a", now: Date(timeIntervalSince1970: 1))
            #expect(try store.queue.knownSightings(paths: ["/in/a.jpg"]).count == 1)
            try store.write { db in try db.execute("UPDATE sighting SET mtime = 'soon'", []) }
            let error = try #require(throws: StoreError.self) {
                try store.queue.knownSightings(paths: ["/in/a.jpg"])
            }
            #expect(error.message.hasPrefix("sighting.mtime holds the text \"soon\""))
        }
    }
}
