import Foundation
import InMemoryLogging
import Logging
import ShelfCore
import ShelfMatching
import ShelfEnrichment
import ShelfHTTP
import ShelfStore
import ShelfTesting
import Synchronization
import Testing

let testContact = "shelf-owner@example.org"

/// Tests that do not read the log keep it off the console.
let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

/// Spacing no test notices, so only the test about spacing waits for it.
func unthrottled() -> RateLimiter { RateLimiter(requestsPerMinute: 600_000, burst: 1_000, clock: ContinuousClock()) }

func openLibrary(
    _ emulator: OpenLibraryEmulator, contact: String = testContact, clock: ManualClock = ManualClock(),
    logger: Logger = quiet, limiter: RateLimiter? = unthrottled()
) -> OpenLibrarySource {
    OpenLibrarySource(
        baseURL: emulator.baseURL, contact: contact, http: HTTPClient(maxConcurrent: 4), logger: logger,
        time: clock.time, limiter: limiter)
}

func googleBooks(
    _ emulator: GoogleBooksEmulator, key: String? = GoogleBooksEmulator.defaultKey,
    clock: ManualClock = ManualClock(), logger: Logger = quiet
) -> GoogleBooksSource {
    GoogleBooksSource(
        baseURL: emulator.baseURL, apiKey: key.map(Secret.init), http: HTTPClient(maxConcurrent: 2),
        logger: logger, time: clock.time, limiter: unthrottled())
}

/// The LookupError a lookup threw; nil (and a recorded issue) if it answered.
func lookupFailure<T>(_ lookup: () async throws(LookupError) -> T) async -> LookupError? {
    do {
        let value = try await lookup()
        Issue.record("expected a LookupError, got \(value)")
        return nil
    } catch {
        return error
    }
}

/// A new store in a temporary directory, for the lookup cache.
func withStore<T>(_ body: (Store, String) async throws -> T) async throws -> T {
    try await withTemporaryDirectory { directory in
        let path = directory.appendingPathComponent("shelfd.db").path
        return try await body(try Store.open(path: path), path)
    }
}

/// A logger whose every line, metadata included, the test can read back.
func capturingLogger() -> (Logger, InMemoryLogHandler) {
    var handler = InMemoryLogHandler()
    handler.logLevel = .trace
    let captured = handler
    return (Logger(label: "test") { _ in captured }, handler)
}

let dune = SpineQuery(title: "Dune", author: "Frank Herbert")

/// Dune in the Ace paperback (ISBN 9780441172719) as `source` records it: under its key, with the year it gives.
func aceDune(_ source: String, key: String, year: Int) -> CatalogueRecord {
    CatalogueRecord(
        source: source, key: key, title: "Dune", author: "Frank Herbert", isbn13: "9780441172719",
        isbn10: "0441172717", year: year)
}

/// The LookupError a search of `source` for Dune threw; nil (and a recorded issue) if it answered.
func searchFailure(_ source: some BookSource) async -> LookupError? {
    await lookupFailure { () async throws(LookupError) in try await source.candidates(for: dune, limit: 5) }
}
