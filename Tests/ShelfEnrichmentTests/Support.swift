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

/// A clock a test moves by hand: it decides when a paused source is asked again and how old a cached answer is.
final class TestClock: Sendable {
    private let date = Mutex(Date(timeIntervalSince1970: 1_750_000_000))
    var now: Date { date.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { date.withLock { $0 += seconds } }
    var reading: @Sendable () -> Date { { self.now } }
}

let testContact = "shelf-owner@example.org"

/// Tests that do not read the log keep it off the console.
let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

/// Spacing no test notices, so only the test about spacing waits for it.
func unthrottled() -> RateLimiter { RateLimiter(requestsPerMinute: 600_000, burst: 1_000) }

func openLibrary(
    _ emulator: OpenLibraryEmulator, contact: String = testContact, clock: TestClock = TestClock(),
    logger: Logger = quiet, limiter: RateLimiter? = unthrottled()
) -> OpenLibrarySource {
    OpenLibrarySource(
        baseURL: emulator.baseURL, contact: contact, http: HTTPClient(maxConcurrent: 4), logger: logger,
        limiter: limiter, now: clock.reading)
}

func googleBooks(
    _ emulator: GoogleBooksEmulator, key: String? = GoogleBooksEmulator.defaultKey,
    clock: TestClock = TestClock(), logger: Logger = quiet
) -> GoogleBooksSource {
    GoogleBooksSource(
        baseURL: emulator.baseURL, apiKey: key.map(Secret.init), http: HTTPClient(maxConcurrent: 2),
        logger: logger, limiter: unthrottled(), now: clock.reading)
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
