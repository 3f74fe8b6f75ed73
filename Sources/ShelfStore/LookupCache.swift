import Foundation
import ShelfCore

/// A remote source's answer to one normalised question, as cached (ARCHITECTURE.md, "One entry per work"): records found, or none.
package struct CachedLookup: Sendable, Equatable {
    package var records: [CatalogueRecord]
    /// The limit the answer was fetched with.
    package var requested: Int
    package var fetchedAt: Date

    package init(records: [CatalogueRecord], requested: Int, fetchedAt: Date) {
        self.records = records; self.requested = requested; self.fetchedAt = fetchedAt
    }

    /// Whether it answers a question asking for `limit` records: it was asked for as many, or it
    /// already held everything the source had.
    package func covers(limit: Int) -> Bool { requested >= limit || records.count < requested }
}

/// The remote book sources' answers, kept so that a question is asked once (`CachedSource`). A concern of the store
/// with a type of its own over the shared database (`Store.lookupCache`).
package struct LookupCache: StoreConcern {
    let database: Store

    /// The cached answer of `source` to `request`, however old; nil when never asked (or unreadable).
    package func answer(source: String, request: String) throws -> CachedLookup? {
        try database.read { db in
            guard
                let row = try db.queryOne(
                    "SELECT * FROM lookup_cache WHERE source = ? AND request = ?", [source, request]),
                let json = row.string("records"), let fetchedAt = row.date("fetched_at"),
                let records = try? JSONDecoder().decode([CatalogueRecord].self, from: Data(json.utf8))
            else { return nil }
            return CachedLookup(records: records, requested: Int(row.int("requested") ?? 0), fetchedAt: fetchedAt)
        }
    }

    /// Stores (or replaces) the answer of `source` to `request`.
    package func save(source: String, request: String, _ lookup: CachedLookup) throws {
        let json = String(decoding: try JSONStyle.encoder(pretty: false).encode(lookup.records), as: UTF8.self)
        try database.write { db in
            try db.execute(
                """
                INSERT INTO lookup_cache (source, request, records, requested, fetched_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(source, request) DO UPDATE SET records = excluded.records, requested = excluded.requested,
                    fetched_at = excluded.fetched_at
                """, [source, request, json, lookup.requested, lookup.fetchedAt])
        }
    }
}
