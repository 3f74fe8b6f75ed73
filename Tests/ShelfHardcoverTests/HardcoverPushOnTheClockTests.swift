import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfHardcover
import ShelfTesting
import Synchronization
import Testing
@testable import ShelfStore

/// A library of verified works in a real SQLite store, and a Hardcover emulator that knows their editions, on a
/// manual clock: pushing 30 works at Hardcover's 60 requests a minute takes a simulated minute, not a real one.
final class HardcoverShelf: Sendable {
    let clock = ManualClock()
    let time: TimeSource
    let folder: URL
    let store: Store
    let emulator: HardcoverEmulator
    let config: Configuration

    init(editions: [HardcoverEmulator.Edition], shelvesAsLists: Bool = false) throws {
        time = clock.time
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-hardcover-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
        let time = self.time
        emulator = try HardcoverEmulator.start(script: .init(editions: editions), now: { time.now })
        var config = Configuration.defaults(home: folder.path)
        config.hardcover.url = emulator.url
        config.hardcover.shelvesAsLists = shelvesAsLists
        self.config = config
    }

    deinit {
        emulator.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The desk a process builds: a second one is what a restarted process holds.
    func desk(token: String = "hc-token") throws -> HardcoverDesk {
        var secrets = Secrets()
        secrets[.hardcoverToken] = Secret(token)
        var logger = Logger(label: "shelfd.hardcover")
        logger.logLevel = .warning
        return try #require(HardcoverDesk(config: config, secrets: secrets, store: store, time: time, logger: logger))
    }

    /// Runs `body` with the clock moving whenever the push waits for its turn.
    func onTheClock<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let outcome = Outcome<T>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { outcome.set(try await body()) }
            try await clock.run(until: "the push", limit: .seconds(3600), step: .seconds(5)) { outcome.isSet }
            try await group.waitForAll()
        }
        return try #require(outcome.value)
    }

    /// Commits `books` as the reading of a photo on `shelf`, as the pipeline's batch commit does.
    func commit(photo sha: String, shelf: String? = nil, _ books: [Book]) throws {
        try store.queue.commitReading(photo: sha, shelf: shelf, books, at: time.now)
    }
}

final class Outcome<T: Sendable>: Sendable {
    private let box = Mutex<T?>(nil)
    func set(_ value: T) { box.withLock { $0 = value } }
    var value: T? { box.withLock { $0 } }
    var isSet: Bool { value != nil }
}

/// A valid ISBN-13 for each number: 978, nine digits, the check digit.
func isbn13(_ number: Int) -> String {
    let body = "978" + String(format: "%09d", number)
    let sum = body.enumerated().reduce(0) { $0 + Int(String($1.element))! * ($1.offset % 2 == 0 ? 1 : 3) }
    return body + String((10 - sum % 10) % 10)
}

func verified(_ title: String, by author: String, isbn: String?) -> Book {
    Book(
        title: title, author: author, isbn13: isbn, isbn10: nil, confidence: 0.95,
        box: Box(x1: 0.1, y1: 0.1, x2: 0.15, y2: 0.9), status: .verified, source: "gemini")
}

/// Thirty works, each with an edition Hardcover knows (edition 100 + n of book 500 + n).
let thirty = (1...30).map { n in (title: "Book Number \(n)", author: "Author \(n)", isbn: isbn13(n)) }
let thirtyEditions = (1...30).map { n in HardcoverEmulator.Edition(id: 100 + n, bookID: 500 + n, isbn13: isbn13(n)) }

/// A shelf Hardcover knows all thirty works of, with the first `count` of them photographed, one a photo.
func shelfOfThirty(photographed count: Int = 30) throws -> HardcoverShelf {
    let shelf = try HardcoverShelf(editions: thirtyEditions)
    for (index, book) in thirty.prefix(count).enumerated() {
        try shelf.commit(photo: "p\(index)", [verified(book.title, by: book.author, isbn: book.isbn)])
    }
    return shelf
}

@Suite struct HardcoverPushOnTheClockTests {
    @Test(
        "A push of 30 works adds each as owned with the export's status, keeps a book the person had, lists what Hardcover does not know, within 60 requests a minute"
    )
    func pushOfThirtyWorks() async throws {
        let shelf = try shelfOfThirty()
        try shelf.commit(
            photo: "q1",
            [
                verified("A Pamphlet", by: "Nobody", isbn: nil),
                verified("Unknown Edition", by: "Someone", isbn: isbn13(999)),
                Book(
                    title: "Blurry Spine", author: nil, isbn13: isbn13(31), isbn10: nil, confidence: 0.3,
                    box: nil, status: .needsReview, source: "gemini"),
            ])
        // The person has book 3 already, read.
        shelf.emulator.add(userBook: 503, editionID: 103, statusID: 3)

        let desk = try shelf.desk()
        let began = shelf.clock.now
        let report = try await shelf.onTheClock { try await desk.pushAll(dryRun: false) }
        let took = began.duration(to: shelf.clock.now)

        #expect(report.stopped == nil)
        #expect(report.user == "reader")
        #expect(report.added.count == 29)
        #expect(report.there.map(\.title) == ["Book Number 3"])
        #expect(report.unknown.map(\.title) == ["Unknown Edition"])
        #expect(report.withoutISBN.map(\.title) == ["A Pamphlet"])
        let books = shelf.emulator.userBooks
        #expect(Set(books.map(\.bookID)) == Set(501...530))
        #expect(books.count == 30)
        #expect(books.first { $0.bookID == 503 }?.statusID == 3, "a book the person had keeps its status")
        #expect(
            books.filter { $0.bookID != 503 }.allSatisfy { $0.statusID == 1 },
            "[export] exclusive_shelf to-read is want to read")
        #expect(Set(shelf.emulator.listBooks(named: "Owned").map(\.editionID)) == Set((101...130).map { Optional($0) }))
        #expect(shelf.emulator.duplicateInserts == 0 && shelf.emulator.ownershipRemovals == 0)
        // 63 requests (who, editions, books had, Owned, 29 added, 30 owned): the 61st cannot start before a minute has
        // passed, and Hardcover never had to refuse one.
        #expect(shelf.emulator.throttled == 0)
        #expect(shelf.emulator.requests.count == 63)
        #expect(took >= .seconds(60))

        // Again: nothing to add, and nothing written.
        let before = shelf.emulator.requests.count
        let again = try await shelf.onTheClock { try await desk.pushAll(dryRun: false) }
        #expect(again.added.isEmpty && again.there.isEmpty)
        #expect(
            again.unknown.map(\.title) == ["Unknown Edition"], "an unknown edition is asked about again by the command")
        #expect(
            shelf.emulator.requests.dropFirst(before).allSatisfy {
                !$0.field.hasPrefix("insert") && $0.field != "edition_owned"
            })
    }

    @Test(
        "A push cut in the middle, then a restart, adds nothing twice: not even a work Hardcover added whose record was lost"
    )
    func restartAddsNothingTwice() async throws {
        let shelf = try shelfOfThirty()
        let first = try shelf.desk()
        let push = Task { try await first.pushAll(dryRun: false) }
        try await shelf.clock.run(until: "ten works added", limit: .seconds(600), step: .seconds(1)) {
            shelf.emulator.userBooks.count >= 10
        }
        push.cancel()
        _ = try? await push.value
        let recorded = try shelf.store.hardcover.records()
        #expect(recorded.count >= 9 && recorded.count < 30)
        // The worst moment: Hardcover added these, the process died before it recorded them.
        try shelf.store.write { db in
            try db.execute(
                "DELETE FROM hardcover_push WHERE book_id IN (SELECT book_id FROM hardcover_push ORDER BY at DESC LIMIT 3)"
            )
        }

        let report = try await shelf.onTheClock { try await shelf.desk().pushAll(dryRun: false) }
        #expect(report.stopped == nil)
        #expect(shelf.emulator.userBooks.count == 30)
        #expect(Set(shelf.emulator.userBooks.map(\.bookID)).count == 30)
        #expect(shelf.emulator.listBooks(named: "Owned").count == 30)
        #expect(shelf.emulator.duplicateInserts == 0, "a book already there is never inserted again")
        #expect(shelf.emulator.ownershipRemovals == 0, "owned is a toggle: never sent for an owned book")
        #expect(try shelf.store.hardcover.records().count == 30)
    }

    @Test("--dry-run asks Hardcover what is there and changes nothing, there or here")
    func dryRunChangesNothing() async throws {
        let shelf = try shelfOfThirty(photographed: 5)
        let report = try await shelf.onTheClock { try await shelf.desk().pushAll(dryRun: true) }
        #expect(report.dryRun)
        #expect(report.added.map(\.title).sorted() == thirty.prefix(5).map(\.title).sorted())
        #expect(shelf.emulator.userBooks.isEmpty)
        #expect(shelf.emulator.listBooks(named: "Owned").isEmpty)
        #expect(shelf.emulator.requests.allSatisfy { !$0.field.hasPrefix("insert") && $0.field != "edition_owned" })
        #expect(try shelf.store.hardcover.records().isEmpty)
    }

    @Test(
        "A 429 is waited out on the clock; a refused token pauses pushing with a problem in status, until a push succeeds"
    )
    func throttledAndRefusedToken() async throws {
        let shelf = try HardcoverShelf(editions: thirtyEditions)
        try shelf.commit(photo: "p1", [verified(thirty[0].title, by: thirty[0].author, isbn: thirty[0].isbn)])
        shelf.emulator.set(replies: [.throttled(retryAfter: 20)])
        let began = shelf.clock.now
        let report = try await shelf.onTheClock { try await shelf.desk().pushAll(dryRun: false) }
        #expect(report.stopped == nil)
        #expect(report.added.count == 1)
        #expect(began.duration(to: shelf.clock.now) >= .seconds(20))

        // The person revokes the token on Hardcover.
        try shelf.commit(photo: "p2", [verified(thirty[1].title, by: thirty[1].author, isbn: thirty[1].isbn)])
        shelf.emulator.set(token: "a-new-one")
        let desk = try shelf.desk()
        let refused = try await shelf.onTheClock { try await desk.pushAll(dryRun: false) }
        #expect(refused.stopped?.code == "hardcover_token")
        #expect(refused.stopped?.message.contains("HARDCOVER_TOKEN") == true)
        #expect(!desk.pusher.mayAsk(now: shelf.time.now), "the background push waits for a new token")
        let status = try StatusReport.build(
            config: shelf.config, secrets: Secrets(), store: shelf.store, now: shelf.time.now)
        let problem = try #require(status.problems.first { $0.code == "hardcover_token" })
        #expect(problem.severity == "warning" && problem.message.contains("refused the token"))
        #expect(status.queue.pending == 0 && status.queue.dead == 0, "the photos' queue is not touched")

        // An expired token is refused the same way, by the GraphQL answer rather than the status code.
        shelf.emulator.set(token: "hc-token")
        shelf.emulator.set(expired: true)
        let expired = try await shelf.onTheClock { try await shelf.desk().pushAll(dryRun: false) }
        #expect(expired.stopped?.code == "hardcover_token")

        shelf.emulator.set(expired: false)
        let resumed = try await shelf.onTheClock { try await shelf.desk().pushAll(dryRun: false) }
        #expect(resumed.stopped == nil && resumed.added.map(\.title) == [thirty[1].title])
        let after = try StatusReport.build(
            config: shelf.config, secrets: Secrets(), store: shelf.store, now: shelf.time.now)
        #expect(!after.problems.contains { $0.code.hasPrefix("hardcover") })
    }

    @Test("Shelves as lists: each work goes on the list named after its shelf, made once, never twice")
    func shelvesAsLists() async throws {
        let shelf = try HardcoverShelf(editions: thirtyEditions, shelvesAsLists: true)
        try shelf.commit(
            photo: "d1", shelf: "den",
            [
                verified(thirty[0].title, by: thirty[0].author, isbn: thirty[0].isbn),
                verified(thirty[1].title, by: thirty[1].author, isbn: thirty[1].isbn),
            ])
        try shelf.commit(
            photo: "h1", shelf: "hall", [verified(thirty[2].title, by: thirty[2].author, isbn: thirty[2].isbn)])
        _ = try await shelf.onTheClock { try await shelf.desk().pushAll(dryRun: false) }
        #expect(shelf.emulator.listNames == ["Owned", "den", "hall"])
        #expect(Set(shelf.emulator.listBooks(named: "den").map(\.bookID)) == [501, 502])
        #expect(shelf.emulator.listBooks(named: "hall").map(\.bookID) == [503])

        try shelf.commit(
            photo: "d2", shelf: "den", [verified(thirty[3].title, by: thirty[3].author, isbn: thirty[3].isbn)])
        _ = try await shelf.onTheClock { try await shelf.desk().pushAll(dryRun: false) }
        #expect(shelf.emulator.listNames == ["Owned", "den", "hall"])
        #expect(Set(shelf.emulator.listBooks(named: "den").map(\.bookID)) == [501, 502, 504])
        #expect(shelf.emulator.duplicateListBooks == 0)
    }

    @Test(
        "The background push asks only about the works changed since its last look, and nothing at all when none changed"
    )
    func backgroundPushReadsWhatChanged() async throws {
        let shelf = try shelfOfThirty(photographed: 20)
        let desk = try shelf.desk()
        let (cursor, first) = try await shelf.onTheClock { try await desk.pushChanged(after: nil) }
        #expect(first.added.count == 20)
        #expect(cursor != nil)

        shelf.clock.advance(by: .seconds(120))
        try shelf.commit(
            photo: "new",
            [
                verified(thirty[25].title, by: thirty[25].author, isbn: thirty[25].isbn),
                verified("A Pamphlet", by: "Nobody", isbn: nil),
            ])
        let before = shelf.emulator.requests.count
        let (later, second) = try await shelf.onTheClock { try await desk.pushChanged(after: cursor) }
        #expect(second.added.map(\.title) == [thirty[25].title])
        let asked = shelf.emulator.requests.dropFirst(before).first { $0.field == "editions" }
        #expect(asked?.variables.object?["isbns"] == .array([.string(thirty[25].isbn)]))

        // Idle: the look costs the database a statement or two and Hardcover nothing, whatever is in the library.
        let idle = shelf.emulator.requests.count
        let (_, third) = try await shelf.onTheClock { try await desk.pushChanged(after: later) }
        #expect(third.added.isEmpty && third.withoutISBN.isEmpty)
        #expect(shelf.emulator.requests.count == idle)
    }
}
