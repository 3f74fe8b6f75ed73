import Foundation
import ShelfCore
import ShelfMatching
import ShelfEnrichment
import ShelfStore
import ShelfTesting
import Testing

@Suite("The lookup cache", .timeLimit(.minutes(1)))
struct CachedSourceTests {
    @Test("A second lookup, even by a new process, is answered without a request")
    func hitsAreCached() async throws {
        try await withOpenLibraryEmulator { emulator in
            try await withStore { store, path in
                let clock = ManualClock()
                let cached = CachedSource(
                    wrapping: openLibrary(emulator, clock: clock), cache: store.lookupCache, time: clock.time)
                let first = try await cached.candidates(for: dune, limit: 5)
                #expect(
                    try await cached.candidates(for: SpineQuery(title: "DUNE", author: "Herbert, Frank"), limit: 5)
                        == first)
                let isbn = try #require(ISBN("0441172717"))
                let record = try await cached.record(isbn: isbn)
                #expect(try await cached.record(isbn: isbn) == record)
                #expect(
                    emulator.requests.count == 4, "one search, then the ISBN's redirect, edition and author; no repeats"
                )

                let reopened = CachedSource(
                    wrapping: openLibrary(emulator), cache: try Store.open(path: path).lookupCache, time: clock.time)
                #expect(try await reopened.candidates(for: dune, limit: 5) == first)
                #expect(try await reopened.record(isbn: isbn) == record)
                #expect(emulator.requests.count == 4)
            }
        }
    }

    @Test("A miss is cached too, for a shorter time than a hit")
    func missesAreCachedShorter() async throws {
        try await withOpenLibraryEmulator { emulator in
            try await withStore { store, _ in
                let clock = ManualClock()
                let cached = CachedSource(
                    wrapping: openLibrary(emulator, clock: clock), cache: store.lookupCache, time: clock.time,
                    maxAge: CacheAge(days: 90))
                let nowhere = SpineQuery(title: "A Book Nobody Wrote", author: "Nobody")
                let unknown = try #require(ISBN("9780306406157"))
                #expect(try await cached.candidates(for: nowhere, limit: 5).isEmpty)
                #expect(try await cached.record(isbn: unknown) == nil)
                _ = try await cached.candidates(for: dune, limit: 5)
                #expect(try await cached.candidates(for: nowhere, limit: 5).isEmpty)
                #expect(try await cached.record(isbn: unknown) == nil)
                #expect(emulator.requests.count == 3)

                clock.advance(by: .seconds(8 * 86_400)) // past a miss's week, well within a hit's 90 days
                _ = try await cached.candidates(for: nowhere, limit: 5)
                _ = try await cached.record(isbn: unknown)
                _ = try await cached.candidates(for: dune, limit: 5)
                #expect(emulator.requests.count == 5, "the two misses are asked again, the hit is not")
            }
        }
    }

    @Test("Refresh asks again and overwrites what the cache held")
    func refreshOverwrites() async throws {
        try await withOpenLibraryEmulator(.init(books: [])) { emulator in
            try await withStore { store, _ in
                let clock = ManualClock()
                let source = openLibrary(emulator, clock: clock)
                #expect(
                    try await CachedSource(wrapping: source, cache: store.lookupCache, time: clock.time).candidates(
                        for: dune, limit: 5
                    )
                    .isEmpty)

                emulator.setScript(.init()) // OpenLibrary now has the book
                #expect(
                    try await CachedSource(wrapping: source, cache: store.lookupCache, time: clock.time).candidates(
                        for: dune, limit: 5
                    )
                    .isEmpty,
                    "the cached miss still answers")
                let refreshed = try await CachedSource(
                    wrapping: source, cache: store.lookupCache, time: clock.time, refresh: true
                )
                .candidates(for: dune, limit: 5)
                #expect(refreshed.map(\.key) == ["/works/OL893415W"])
                #expect(
                    try await CachedSource(wrapping: source, cache: store.lookupCache, time: clock.time).candidates(
                        for: dune, limit: 5)
                        == refreshed)
                #expect(emulator.requests.count == 2)
            }
        }
    }

    @Test("An error is never cached: the next lookup asks again")
    func errorsAreNotCached() async throws {
        try await withOpenLibraryEmulator(.init(replies: [.serverError(503)])) { emulator in
            try await withStore { store, _ in
                let clock = ManualClock()
                let cached = CachedSource(
                    wrapping: openLibrary(emulator, clock: clock), cache: store.lookupCache, time: clock.time)
                let error = await searchFailure(cached)
                guard case .unavailable = error else { Issue.record("expected unavailable"); return }
                #expect(cached.health.state == .unavailable)
                clock.advance(by: .seconds(31))
                let records = try await cached.candidates(for: dune, limit: 5)
                #expect(records.count == 1)
                #expect(emulator.requests.count == 2 && cached.health.state == .ok)
            }
        }
    }

    @Test("A cached answer serves a smaller limit; a full one does not serve a larger limit")
    func limits() async throws {
        try await withOpenLibraryEmulator { emulator in
            try await withStore { store, _ in
                let clock = ManualClock()
                let cached = CachedSource(
                    wrapping: openLibrary(emulator, clock: clock), cache: store.lookupCache, time: clock.time)
                let tolkien = SpineQuery(text: "tolkien")
                var counts: [Int] = []
                for limit in [1, 5, 3, 1] {
                    counts.append(try await cached.candidates(for: tolkien, limit: limit).count)
                }
                // One of one may not have been all (asked again); two of five was everything (not asked again).
                #expect(counts == [1, 2, 2, 1])
                #expect(emulator.requests.count == 2)
            }
        }
    }
}
