import Foundation
import ShelfCore
import ShelfMatching
import ShelfEnrichment
import ShelfTesting
import Testing

@Suite("OpenLibrary against the emulator", .timeLimit(.minutes(1)))
struct OpenLibrarySourceTests {
    @Test("A spine is searched by normalised title and surname, naming shelfd and its contact")
    func structuredSearch() async throws {
        try await withOpenLibraryEmulator { emulator in
            let records = try await openLibrary(emulator).candidates(for: dune, limit: 5)
            let request = try #require(emulator.requests.first)
            #expect(request.path == "/search.json")
            #expect(
                request.query["title"] == "dune" && request.query["author"] == "herbert" && request.query["q"] == nil)
            #expect(request.query["limit"] == "5")
            #expect(
                Set((request.query["fields"] ?? "").split(separator: ",")).isSuperset(of: [
                    "key", "title", "author_name", "isbn", "first_publish_year",
                ]))
            #expect(request.header("user-agent") == "shelfd/\(ShelfdVersion.current) (\(testContact))")
            #expect(records == [aceDune("openlibrary", key: "/works/OL893415W", year: 1965)])
        }
    }

    @Test("The spine's own ISBN is the record's when the work has that edition")
    func hintPicksTheEdition() async throws {
        try await withOpenLibraryEmulator { emulator in
            let source = openLibrary(emulator)
            let hinted = SpineQuery(title: "Dune", author: "Herbert", isbn: ISBN("0340960191"))
            let chosen = try await source.candidates(for: hinted, limit: 5)
            #expect(chosen.first?.isbn13 == "9780340960196")
            let elsewhere = SpineQuery(title: "Dune", author: "Herbert", isbn: ISBN("9780306406157"))
            let first = try await source.candidates(for: elsewhere, limit: 5)
            #expect(first.first?.isbn13 == "9780441172719")
        }
    }

    @Test("Free text is asked with q=; subtitles and co-authors are kept")
    func freeText() async throws {
        try await withOpenLibraryEmulator { emulator in
            let source = openLibrary(emulator)
            let omens = try await source.candidates(for: SpineQuery(text: "GOOD OMENS  Gaiman"), limit: 3)
            #expect(emulator.requests.first?.query["q"] == "good omens gaiman")
            #expect(emulator.requests.first?.query["title"] == nil)
            #expect(omens.map(\.author) == ["Terry Pratchett & Neil Gaiman"])
            let hobbit = try await source.candidates(for: SpineQuery(title: "The Hobbit", author: "Tolkien"), limit: 3)
            #expect(hobbit.map(\.title) == ["The Hobbit: or There and Back Again"])
            #expect(try await source.candidates(for: SpineQuery(text: " … "), limit: 3).isEmpty)
            #expect(emulator.requests.count == 2, "a spine with nothing on it is not asked about")
        }
    }

    @Test("An ISBN follows the redirect to its edition and names the edition's author")
    func isbnLookup() async throws {
        try await withOpenLibraryEmulator { emulator in
            let isbn = try #require(ISBN("0441172717"))
            let found = try await openLibrary(emulator).record(isbn: isbn)
            let record = try #require(found)
            #expect(
                emulator.requests.map(\.path) == [
                    "/isbn/9780441172719.json", "/books/OL7353617M.json", "/authors/OL79034A.json",
                ])
            #expect(record == aceDune("openlibrary", key: "/works/OL893415W", year: 1990))
        }
    }

    @Test("An edition that names no author takes it from its work")
    func authorFromTheWork() async throws {
        try await withOpenLibraryEmulator { emulator in
            let record = try await openLibrary(emulator).record(isbn: #require(ISBN("9780618640157")))
            #expect(
                emulator.requests.map(\.path) == [
                    "/isbn/9780618640157.json", "/books/OL26331930M.json",
                    "/works/OL27448W.json", "/authors/OL26320A.json",
                ])
            #expect(record?.author == "J.R.R. Tolkien" && record?.key == "/works/OL27448W" && record?.year == 2005)
        }
    }

    @Test("An ISBN OpenLibrary does not know is no record, not an error")
    func unknownISBN() async throws {
        try await withOpenLibraryEmulator { emulator in
            let source = openLibrary(emulator)
            let isbn = try #require(ISBN("9780306406157"))
            let record = try await source.record(isbn: isbn)
            #expect(record == nil)
            #expect(emulator.requests.count == 1)
            #expect(source.health.state == .ok)
        }
    }

    @Test("A 429 pauses the source for its Retry-After; meanwhile nothing is sent")
    func rateLimitHonoursRetryAfter() async throws {
        try await withOpenLibraryEmulator(.init(replies: [.rateLimited(retryAfter: 120)])) { emulator in
            let clock = ManualClock()
            let source = openLibrary(emulator, clock: clock)
            let until = clock.time.now.addingTimeInterval(120)
            #expect(await searchFailure(source) == .rateLimited(until: until))
            let isbn = try #require(ISBN("0441172717"))
            #expect(
                await lookupFailure { () async throws(LookupError) in try await source.record(isbn: isbn) }
                    == .rateLimited(until: until))
            #expect(emulator.requests.count == 1, "a rate-limited source is not asked again before its time")
            #expect(source.health.state == .rateLimited && source.health.until == until)

            clock.advance(by: .seconds(121))
            let records = try await source.candidates(for: dune, limit: 5)
            #expect(records.count == 1)
            #expect(emulator.requests.count == 2 && source.health.state == .ok)
        }
    }

    @Test("A 429 without Retry-After waits a minute, then twice as long when it comes again")
    func rateLimitBacksOff() async throws {
        try await withOpenLibraryEmulator(
            .init(replies: [.rateLimited(retryAfter: nil), .rateLimited(retryAfter: nil)])
        ) { emulator in
            let clock = ManualClock()
            let source = openLibrary(emulator, clock: clock)
            #expect(await searchFailure(source) == .rateLimited(until: clock.time.now.addingTimeInterval(60)))
            clock.advance(by: .seconds(61))
            #expect(await searchFailure(source) == .rateLimited(until: clock.time.now.addingTimeInterval(120)))
            #expect(emulator.requests.count == 2)
        }
    }

    @Test(
        "A failing server makes the source unavailable for a short pause, then it is asked again",
        arguments: [OpenLibraryEmulator.Reply.serverError(503), .serverError(500), .garbage])
    func serverFailure(reply: OpenLibraryEmulator.Reply) async throws {
        try await withOpenLibraryEmulator(.init(replies: [reply])) { emulator in
            let clock = ManualClock()
            let source = openLibrary(emulator, clock: clock)
            guard case .unavailable = await searchFailure(source) else { Issue.record("expected unavailable"); return }
            guard case .unavailable = await searchFailure(source) else { Issue.record("expected unavailable"); return }
            #expect(emulator.requests.count == 1 && source.health.state == .unavailable)
            clock.advance(by: .seconds(31))
            let records = try await source.candidates(for: dune, limit: 5)
            #expect(records.count == 1)
        }
    }

    @Test("A source that cannot be reached is unavailable")
    func unreachable() async throws {
        let emulator = try OpenLibraryEmulator.start(script: .init())
        emulator.stop() // the port is closed: connection refused
        let error = await searchFailure(openLibrary(emulator))
        guard case .unavailable = error else {
            Issue.record("expected unavailable, got \(String(describing: error))"); return
        }
    }

    @Test("Refused for having no contact: says to set one, and is not asked again however long it waits")
    func refusedWithoutContact() async throws {
        try await withOpenLibraryEmulator(.init(refuseAnonymous: true)) { emulator in
            let clock = ManualClock()
            let source = openLibrary(emulator, contact: "", clock: clock)
            guard case .refused(let message) = await searchFailure(source) else {
                Issue.record("expected refused"); return
            }
            #expect(message.contains("[enrich] contact"))
            #expect(emulator.requests.first?.header("user-agent") == "shelfd/\(ShelfdVersion.current)")
            clock.advance(by: .seconds(30 * 86_400))
            guard case .refused = await searchFailure(source) else { Issue.record("expected refused"); return }
            #expect(emulator.requests.count == 1 && source.health.state == .refused && source.health.until == nil)
        }
    }

    @Test("A source starts at most 3 requests a second, however many lookups ask at once")
    func spacing() async throws {
        try await withOpenLibraryEmulator { emulator in
            // Its own limiter (a process makes its sources once), on a manual clock; seven lookups at once.
            let clock = ManualClock()
            let source = openLibrary(emulator, clock: clock, limiter: nil)
            let lookups = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<7 {
                        group.addTask {
                            _ = try await source.candidates(for: SpineQuery(text: "dune \(index)"), limit: 1)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            // Seven starts at ≤ 3 a second, one every 333 ms: the first at once, the seventh two seconds later.
            try await waitUntil("one request made, six waiting their turn") {
                emulator.requests.count == 1 && clock.sleepers == 6
            }
            clock.advance(by: .milliseconds(1_990))
            try await waitUntil("five more made, the seventh still waiting 10 ms short of two seconds") {
                emulator.requests.count == 6 && clock.sleepers == 1
            }
            clock.advance(by: .milliseconds(10))
            try await waitUntil("the seventh made") { emulator.requests.count == 7 }
            try await lookups.value
        }
    }
}
