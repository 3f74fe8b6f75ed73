import Foundation
import InMemoryLogging
import Logging
import ShelfCore
import ShelfMatching
import ShelfEnrichment
import ShelfTesting
import Testing

@Suite("Google Books against the emulator", .timeLimit(.minutes(1)))
struct GoogleBooksSourceTests {
    @Test("A spine is searched with intitle: and inauthor:, the key, and a result limit")
    func structuredSearch() async throws {
        try await withGoogleBooksEmulator { emulator in
            let records = try await googleBooks(emulator).candidates(for: dune, limit: 5)
            let request = try #require(emulator.requests.first)
            #expect(request.path == "/books/v1/volumes")
            #expect(request.query["q"] == "intitle:dune inauthor:herbert")
            #expect(request.target.contains("q=intitle:dune+inauthor:herbert"))
            #expect(request.query["key"] == GoogleBooksEmulator.defaultKey && request.query["maxResults"] == "5")
            #expect(request.header("user-agent")?.hasPrefix("shelfd/") == true)
            #expect(records == [aceDune("googlebooks", key: "B1hSG45JCX4C", year: 1990)])
        }
    }

    @Test("Subtitles, co-authors and volumes without an ISBN map to records")
    func recordMapping() async throws {
        try await withGoogleBooksEmulator { emulator in
            let source = googleBooks(emulator)
            let hobbit = try await source.candidates(
                for: SpineQuery(title: "The Hobbit", author: "J. R. R. Tolkien"), limit: 3)
            #expect(hobbit.map(\.title) == ["The Hobbit: Or, There and Back Again"] && hobbit.first?.year == 2012)
            let omens = try await source.candidates(for: SpineQuery(text: "good omens"), limit: 50)
            #expect(
                emulator.requests.last?.query["q"] == "good omens"
                    && emulator.requests.last?.query["maxResults"] == "40")
            let record = try #require(omens.first)
            #expect(record.author == "Terry Pratchett & Neil Gaiman" && record.isbn13 == nil && record.isbn10 == nil)
        }
    }

    @Test("An ISBN is asked as q=isbn:, in its ISBN-13 form; an unknown one is no record")
    func isbnLookup() async throws {
        try await withGoogleBooksEmulator { emulator in
            let source = googleBooks(emulator)
            let record = try await source.record(isbn: #require(ISBN("054792822X")))
            #expect(emulator.requests.first?.query["q"] == "isbn:9780547928227")
            #expect(record?.key == "pD6arNyKyi8C" && record?.isbn10 == "054792822X")
            let unknown = try #require(ISBN("9780306406157"))
            let none = try await source.record(isbn: unknown)
            #expect(none == nil)
        }
    }

    @Test("Without a key, no key= is sent")
    func anonymous() async throws {
        try await withGoogleBooksEmulator { emulator in
            _ = try await googleBooks(emulator, key: nil).candidates(for: dune, limit: 5)
            #expect(emulator.requests.first.map { $0.query["key"] == nil } == true)
        }
    }

    @Test(
        "A spent daily quota pauses the source until midnight Pacific time",
        arguments: [GoogleBooksEmulator.Reply.dailyQuotaExceeded, .dailyLimitExceeded403])
    func dailyQuota(reply: GoogleBooksEmulator.Reply) async throws {
        try await withGoogleBooksEmulator(.init(replies: [reply])) { emulator in
            let clock = ManualClock()
            let source = googleBooks(emulator, clock: clock)
            let midnight = QuotaTimes.nextPacificMidnight(after: clock.time.now)
            #expect(await searchFailure(source) == .rateLimited(until: midnight))
            clock.advance(by: .seconds(midnight.timeIntervalSince(clock.time.now) - 60))
            #expect(await searchFailure(source) == .rateLimited(until: midnight))
            #expect(emulator.requests.count == 1 && source.health.message?.contains("midnight Pacific") == true)
            clock.advance(by: .seconds(61))
            let records = try await source.candidates(for: dune, limit: 5)
            #expect(records.count == 1)
        }
    }

    @Test("A per-minute 429 honours Retry-After")
    func perMinuteLimit() async throws {
        try await withGoogleBooksEmulator(.init(replies: [.rateLimited(retryAfter: 30)])) { emulator in
            let clock = ManualClock()
            let source = googleBooks(emulator, clock: clock)
            #expect(await searchFailure(source) == .rateLimited(until: clock.time.now.addingTimeInterval(30)))
        }
    }

    @Test("A bad key is refused, said so without the key, and never asked again")
    func badKey() async throws {
        try await withGoogleBooksEmulator { emulator in
            let clock = ManualClock()
            let source = googleBooks(emulator, key: "AIzaSy-wrong-SECRET", clock: clock)
            guard case .refused(let message) = await searchFailure(source) else {
                Issue.record("expected refused"); return
            }
            #expect(message.contains("GOOGLE_BOOKS_API_KEY") && !message.contains("SECRET"))
            clock.advance(by: .seconds(7 * 86_400))
            guard case .refused = await searchFailure(source) else { Issue.record("expected refused"); return }
            #expect(emulator.requests.count == 1 && source.health.state == .refused)
        }
    }

    @Test("A project without the Books API enabled is refused, with what to do")
    func accessNotConfigured() async throws {
        try await withGoogleBooksEmulator(.init(then: .accessNotConfigured)) { emulator in
            let source = googleBooks(emulator)
            guard case .refused(let message) = await searchFailure(source) else {
                Issue.record("expected refused"); return
            }
            #expect(message.contains("Enable the Books API"))
        }
    }

    @Test("A failing server makes the source unavailable")
    func serverFailure() async throws {
        try await withGoogleBooksEmulator(.init(replies: [.serverError(503)])) { emulator in
            let source = googleBooks(emulator)
            guard case .unavailable = await searchFailure(source) else { Issue.record("expected unavailable"); return }
            #expect(source.health.state == .unavailable)
        }
    }

    @Test("The key never reaches a log line, an error or the health report")
    func keyStaysSecret() async throws {
        try await withGoogleBooksEmulator(.init(apiKey: "AIzaSy-good-SECRET", replies: [.normal, .dailyQuotaExceeded]))
        { emulator in
            let (logger, logs) = capturingLogger()
            let source = googleBooks(emulator, key: "AIzaSy-good-SECRET", logger: logger)
            _ = try await source.candidates(for: dune, limit: 5)
            let isbn = try #require(ISBN("0441172717"))
            let error = await lookupFailure { () async throws(LookupError) in try await source.record(isbn: isbn) }
            let bad = googleBooks(emulator, key: "AIzaSy-bad-SECRET", logger: logger)
            let refused = await searchFailure(bad)
            #expect(emulator.requests.count == 3 && logs.entries.count >= 3)
            let written =
                logs.entries.map { "\($0.message) \($0.metadata)" }
                + [error, refused].map { "\(String(describing: $0))" }
                + [source.health, bad.health].map { "\($0)" }
            #expect(!written.contains { $0.contains("SECRET") })
        }
    }
}
