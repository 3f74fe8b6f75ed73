import Foundation
import Logging
import ShelfCore
import ShelfStore

/// Adds verified works to the person's Hardcover library as owned (docs/library.md, "Hardcover"): each work's edition is
/// found by its ISBN-13, added with the reading status of `[export] exclusive_shelf` unless the person has the book
/// already (whatever its status, which is theirs), marked owned unless it is, and put on the list named after its
/// shelf when `[hardcover] shelves_as_lists` says so. What each work's edition got is recorded as soon as it is done,
/// so a restart, a second process or a re-read adds nothing twice; and every write is preceded by a read of what is
/// there, so a push cut between Hardcover's answer and the record repeats nothing either. A work without an ISBN, or
/// whose ISBN Hardcover does not know, is listed, never guessed by title.
package struct HardcoverPusher: Sendable {
    package let client: HardcoverClient
    package let pushes: HardcoverPushes
    package let health: any ProviderHealthStore
    /// Hardcover's status id for a book it did not have (1 want to read, 2 currently reading, 3 read).
    package let status: Int
    package let shelvesAsLists: Bool
    package let time: TimeSource
    let logger: Logger

    /// The name under which Hardcover's health is kept with the providers' and book sources' (`status` shows it).
    package static let name = "hardcover"
    /// ISBNs or books asked about in one request.
    static let pageSize = 50

    package init(
        client: HardcoverClient, pushes: HardcoverPushes, health: any ProviderHealthStore, status: ReadingShelf,
        shelvesAsLists: Bool, time: TimeSource, logger: Logger
    ) {
        self.client = client; self.pushes = pushes; self.health = health; self.shelvesAsLists = shelvesAsLists
        self.time = time; self.logger = logger
        self.status =
            switch status {
            case .toRead: 1
            case .currentlyReading: 2
            case .read: 3
            }
    }

    /// Pushes `works` (those already recorded for their edition are not among them). `dryRun`: reads what is on
    /// Hardcover and says what would be added, and writes nothing, there or here. A refused token, a rate limit that
    /// outlasts its retries or an outage stops the push, records it as Hardcover's health and throws; what was done
    /// before is recorded.
    package func push(
        _ works: [HardcoverWork], dryRun: Bool,
        into report: inout HardcoverPushDocument
    ) async throws(HardcoverError) {
        do {
            try await pushPages(works, dryRun: dryRun, into: &report)
            if !dryRun { clearProblem() }
        } catch {
            if !dryRun { recordProblem(error) }
            throw error
        }
    }

    private func pushPages(
        _ works: [HardcoverWork], dryRun: Bool,
        into report: inout HardcoverPushDocument
    ) async throws(HardcoverError) {
        // Whom the token belongs to, first: a refused token is said even when there is nothing to add.
        let user = try await userID(&report)
        for work in works where work.isbn13 == nil {
            report.withoutISBN.append(.init(work))
        }
        let withISBN = works.filter { $0.isbn13 != nil }
        var lists: [String: Int] = [:]
        for start in stride(from: 0, to: withISBN.count, by: Self.pageSize) {
            let page = Array(withISBN[start..<min(start + Self.pageSize, withISBN.count)])
            let isbns = Array(Set(page.compactMap(\.isbn13))).sorted()
            let editions = Dictionary(
                try await client.editions(isbn13: isbns).compactMap { edition in
                    edition.isbn13.map { ($0, edition) }
                }, uniquingKeysWith: { first, _ in first })
            let books = Array(Set(editions.values.map(\.bookID))).sorted()
            var had: [Int: Int] = [:] // Hardcover book → the person's user book
            var owned: Set<Int> = []
            if !books.isEmpty {
                for userBook in try await client.userBooks(user: user, books: books) {
                    had[userBook.bookID] = userBook.id
                }
                owned = Set(
                    try await client.list(named: "Owned", user: user, books: books)?.entries.map(\.bookID) ?? [])
            }
            var onList: [String: Set<Int>] = [:]
            for work in page {
                guard let isbn = work.isbn13, let edition = editions[isbn] else {
                    report.unknown.append(.init(work))
                    if !dryRun { try save(.init(bookID: work.bookID, isbn13: work.isbn13 ?? "", outcome: .unknown)) }
                    continue
                }
                var line = HardcoverPushDocument.Line(work)
                line.hardcoverBook = edition.bookID
                line.edition = edition.id
                let shelf = shelvesAsLists ? work.shelf.flatMap { $0.isEmpty ? nil : $0 } : nil
                line.list = shelf
                let alreadyHad = had[edition.bookID]
                if dryRun {
                    if alreadyHad == nil { report.added.append(line) } else { report.there.append(line) }
                    continue
                }
                var userBook = alreadyHad
                if userBook == nil {
                    userBook = try await client.insertUserBook(
                        book: edition.bookID, edition: edition.id, status: status)
                    had[edition.bookID] = userBook
                }
                if !owned.contains(edition.bookID) {
                    // A toggle: an answer without the list entry means it was owned after all; once more puts it back.
                    if try await !client.markOwned(edition: edition.id) {
                        _ = try await client.markOwned(edition: edition.id)
                    }
                    owned.insert(edition.bookID)
                }
                if let shelf {
                    if onList[shelf] == nil {
                        let list = try await client.list(named: shelf, user: user, books: books)
                        if let list { lists[shelf] = list.id }
                        if lists[shelf] == nil { lists[shelf] = try await client.insertList(named: shelf) }
                        onList[shelf] = Set(list?.entries.map(\.bookID) ?? [])
                    }
                    if let list = lists[shelf], onList[shelf]?.contains(edition.bookID) == false {
                        try await client.insertListBook(list: list, book: edition.bookID, edition: edition.id)
                        onList[shelf]?.insert(edition.bookID)
                    }
                }
                line.userBook = userBook
                if alreadyHad == nil { report.added.append(line) } else { report.there.append(line) }
                try save(
                    .init(
                        bookID: work.bookID, isbn13: isbn, outcome: alreadyHad == nil ? .added : .there,
                        hardcoverBook: edition.bookID, edition: edition.id, userBook: userBook, list: shelf))
                logger.info(
                    "Added to Hardcover",
                    metadata: [
                        "work": "\(work.work)", "isbn13": "\(isbn)", "hardcover.book": "\(edition.bookID)",
                        "had": "\(alreadyHad != nil)",
                    ])
            }
        }
    }

    private func userID(_ report: inout HardcoverPushDocument) async throws(HardcoverError) -> Int {
        let user = try await client.me()
        report.user = user.username
        return user.id
    }

    private func save(_ record: HardcoverPushRecord) throws(HardcoverError) {
        do {
            try pushes.record(record, now: time.now)
        } catch {
            throw .refused("could not record a push in the database: \(error)")
        }
    }

    /// Hardcover's health as `status` and the web page read it: paused for a token it refused (until the
    /// configuration changes: a new token, or `shelfd hardcover push` succeeding), waiting out a rate limit or outage.
    private func recordProblem(_ error: HardcoverError) {
        let now = time.now
        let health: ProviderHealth
        switch error {
        case .tokenRefused:
            health = ProviderHealth(name: Self.name, state: .paused, code: error.code, message: error.description)
        case .throttled(let until):
            health = ProviderHealth(
                name: Self.name, state: .backoff, until: until, code: error.code, message: error.description)
        case .unavailable:
            health = ProviderHealth(
                name: Self.name, state: .unavailable, until: now.addingTimeInterval(Self.outagePause),
                code: error.code, message: error.description, since: now)
        case .refused, .cancelled:
            return
        }
        logger.warning("Pushing to Hardcover paused", metadata: ["code": "\(error.code)", "reason": "\(error)"])
        try? self.health.setProviderHealth(health, now: now)
    }

    private func clearProblem() {
        guard let current = try? health.providerHealth(Self.name), current.state != .ok else { return }
        try? health.setProviderHealth(ProviderHealth(name: Self.name, state: .ok), now: time.now)
        logger.notice("Pushing to Hardcover goes on")
    }

    /// How long an outage leaves Hardcover alone before the next background pass asks again.
    static let outagePause: TimeInterval = 60

    /// Whether a background pass may ask Hardcover at `now`: not while its token is refused, nor before a rate limit
    /// or an outage ends.
    package func mayAsk(now: Date) -> Bool {
        guard let current = try? health.providerHealth(Self.name) else { return true }
        return !current.isInForce(at: now)
    }
}

extension HardcoverClient {
    /// Requests take their turns from the budget in the database that every shelfd process shares, as the vision
    /// providers' do (ShelfStore's RateBuckets.swift): Hardcover allows 60 a minute per token.
    package static func sharedTurns(
        _ budgets: any RequestBudgetStore, time: TimeSource,
        perMinute: Int = 60
    ) -> @Sendable () async throws(HardcoverError) -> Void {
        let budget = RequestBudget(requestsPerMinute: perMinute, dayEnds: { $0.addingTimeInterval(86_400) })
        return { () async throws(HardcoverError) -> Void in
            while true {
                let turn: RequestTurn
                do {
                    turn = try budgets.takeRequestTurn(provider: HardcoverPusher.name, budget: budget, now: time.now)
                } catch {
                    throw .refused("could not take a request's turn in the database: \(error)")
                }
                switch turn {
                case .granted: return
                case .notBefore(let date), .dayUsedUp(let date, _):
                    do {
                        try await time.sleep(
                            for: .milliseconds(max(1, Int64((date.timeIntervalSince(time.now) * 1000).rounded(.up)))))
                    } catch { throw .cancelled }
                }
            }
        }
    }
}

extension HardcoverPushDocument.Line {
    init(_ work: HardcoverWork) {
        self.init(work: work.work, title: work.title, author: work.author, isbn13: work.isbn13)
    }
}
