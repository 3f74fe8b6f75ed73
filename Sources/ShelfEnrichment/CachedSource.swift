import Foundation
import ShelfCore
import ShelfMatching
import ShelfStore

/// How long cached lookups are believed.
package struct CacheAge: Sendable, Equatable {
    /// Answers that found something: books do not change often.
    package var hits: TimeInterval
    /// Answers that found nothing: shorter, so a book a service adds later is found on a later run.
    package var misses: TimeInterval

    package init(hits: TimeInterval = 90 * 86_400, misses: TimeInterval = 7 * 86_400) {
        self.hits = hits; self.misses = min(misses, hits)
    }

    /// `[enrich] cache_days`: hits for that many days, misses for a week at most.
    package init(days: Int) { self.init(hits: TimeInterval(max(0, days)) * 86_400) }
}

/// A remote source behind the lookup cache: every answer, found or not, is kept in the lookup cache with its
/// age, so a re-run of the same photos asks the network nothing. Errors are never cached. With
/// `refresh` (`--refresh`), the cache is not read, and each answer overwrites what it held.
package struct CachedSource: RemoteBookSource {
    private let source: any BookSource
    private let cache: LookupCache
    private let maxAge: CacheAge
    private let refresh: Bool
    /// The date an answer is kept with, and its age counted to.
    private let time: TimeSource

    package init(
        wrapping source: any BookSource, cache: LookupCache, time: TimeSource, maxAge: CacheAge = CacheAge(),
        refresh: Bool = false
    ) {
        self.source = source; self.cache = cache; self.time = time; self.maxAge = maxAge; self.refresh = refresh
    }

    package var name: String { source.name }

    package var health: SourceHealth {
        (source as? any RemoteBookSource)?.health ?? SourceHealth(source: source.name, state: .ok)
    }

    package func candidates(for query: SpineQuery, limit: Int) async throws(LookupError) -> [CatalogueRecord] {
        guard let key = query.remoteRequest.cacheKey else { return [] }
        if let cached = fresh(key), cached.covers(limit: limit) { return Array(cached.records.prefix(limit)) }
        let records = try await source.candidates(for: query, limit: limit)
        save(key, records, requested: limit)
        return records
    }

    package func record(isbn: ISBN) async throws(LookupError) -> CatalogueRecord? {
        let key = "isbn:\(isbn.isbn13)"
        if let cached = fresh(key) { return cached.records.first }
        let record = try await source.record(isbn: isbn)
        save(key, record.map { [$0] } ?? [], requested: 1)
        return record
    }

    /// The cached answer, unless refreshing or it is older than its kind may be.
    private func fresh(_ key: String) -> CachedLookup? {
        guard !refresh, let cached = try? cache.answer(source: source.name, request: key) else { return nil }
        let age = time.now.timeIntervalSince(cached.fetchedAt)
        return age <= (cached.records.isEmpty ? maxAge.misses : maxAge.hits) ? cached : nil
    }

    private func save(_ key: String, _ records: [CatalogueRecord], requested: Int) {
        // A cache that cannot be written costs a request next time, nothing more; the pipeline reports a
        // failing database through its own writes.
        try? cache.save(
            source: source.name, request: key,
            CachedLookup(records: records, requested: requested, fetchedAt: time.now))
    }
}
