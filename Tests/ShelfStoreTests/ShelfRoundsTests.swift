import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

/// A shelf's books as one photo shows them, left to right: each a title at a horizontal place (0…1), read as a
/// verified book matched to a record of its own, or left for review when `review` names its first candidate.
private struct Spine {
    var title: String
    var x: Double
    var review: String? = nil

    func book() -> Book {
        let record = CatalogueRecord(
            source: "catalogue", key: "catalogue:\(title.lowercased())", title: title, author: "Author \(title)")
        var book = Book(
            title: title, author: "Author \(title)", isbn13: nil, isbn10: nil, confidence: review == nil ? 0.95 : 0.4,
            box: Box(x1: x - 0.02, y1: 0.1, x2: x + 0.02, y2: 0.9), status: review == nil ? .verified : .needsReview,
            source: "gemini",
            match: review == nil ? BookMatch(source: "catalogue", key: record.key, score: 0.95, year: nil) : nil)
        if let review {
            let candidate = CatalogueRecord(
                source: "catalogue", key: "catalogue:\(review.lowercased())", title: review,
                author: "Author \(review)")
            book.candidates = [MatchCandidate(record: candidate, score: 0.5)]
            book.reviewReasons = ["low_confidence"]
        }
        return book
    }
}

/// Spines evenly spread from 0.2 to 0.8: the photo shows room at both ends of the shelf.
private func spread(_ titles: [String], from: Double = 0.2, to: Double = 0.8) -> [Spine] {
    titles.enumerated().map { index, title in
        Spine(title: title, x: titles.count == 1 ? from : from + (to - from) * Double(index) / Double(titles.count - 1))
    }
}

private let minute: TimeInterval = 60

/// Drops the photo `name` (under its shelf's folder) at `at` and commits its reading.
private func photo(_ store: Store, _ name: String, _ spines: [Spine], at: Date) throws {
    let sha = name.replacingOccurrences(of: "/", with: "-")
    try store.queue.queuePhoto(sha, at: name, mtime: at.timeIntervalSince1970, now: at)
    try store.queue.finishReading(
        try store.queue.claimOne(now: at), spines.map { $0.book() }, shelf: ReviewDocument.Photo.shelf(of: name),
        now: at)
}

/// A round of one photo: `name` dropped at `at`, and the round closed once it has been quiet for 31 minutes.
private func round(_ store: Store, _ name: String, _ spines: [Spine], at: Date) throws {
    try photo(store, name, spines, at: at)
    _ = try store.shelves.closeDue(now: at.addingTimeInterval(31 * minute))
}

private func titles(_ changes: [ShelfDocument.Change]) -> [String] { changes.map(\.title).sorted() }

@Suite("Shelves as places: rounds, inventories and what changed", .postgresServer, .serialized)
struct ShelfRoundsTests {
    let day1 = Date(timeIntervalSince1970: 1_790_000_000)
    var day2: Date { day1.addingTimeInterval(86_400) }

    @Test(
        "A shelf photographed on two days: the book taken away is missing, the new one arrived, the one moved to the office moved out, on both shelves",
        arguments: StoreKind.allCases)
    func twoDays(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try photo(store, "den/1.jpg", spread(["A", "B", "C", "D", "E"]), at: day1)
            try photo(store, "office/1.jpg", spread(["X", "Y"]), at: day1)
            _ = try store.shelves.closeDue(now: day1.addingTimeInterval(31 * minute))
            let first = try #require(try store.shelves.shelf("den"))
            #expect(first.books.map(\.title) == ["A", "B", "C", "D", "E"])
            #expect(titles(first.changes.arrived) == ["A", "B", "C", "D", "E"])
            #expect(first.changes.arrived.allSatisfy { $0.isArrival && $0.from == nil })

            try photo(store, "den/2.jpg", spread(["A", "B", "D", "F"]), at: day2)
            try photo(store, "office/2.jpg", spread(["X", "Y", "E"]), at: day2)
            let change = try store.shelves.closeDue(now: day2.addingTimeInterval(31 * minute))
            let den = try #require(try store.shelves.shelf("den"))
            #expect(titles(den.changes.arrived) == ["F"])
            #expect(den.changes.arrived.first?.from == nil)
            #expect(titles(den.changes.missing) == ["C"])
            #expect(den.changes.movedOut.map { "\($0.title)→\($0.to ?? "")" } == ["E→office"])
            #expect(den.books.map(\.title) == ["A", "B", "C", "D", "F"], "C keeps its place, missing")
            #expect(den.books.first { $0.title == "C" }?.missingSince == day2)
            let office = try #require(try store.shelves.shelf("office"))
            #expect(office.changes.arrived.map { "\($0.title)←\($0.from ?? "new")" } == ["E←den"])
            #expect(office.changes.missing.isEmpty && office.changes.movedOut.isEmpty)
            #expect(office.books.map(\.title) == ["X", "Y", "E"])
            #expect(!change.works.isEmpty, "the files follow: C is missing")

            let list = try store.shelves.shelves()
            #expect(list.map(\.shelf) == ["den", "office"])
            #expect(list.first?.books == 5 && list.first?.missing == 1)
            let history = try store.library.work("catalogue:c").history.map(\.action)
            #expect(history.contains("missing"))
        }
    }

    @Test(
        "Half the shelf photographed reports nothing missing; the same half with room beyond its last book does",
        arguments: StoreKind.allCases)
    func halfAShelf(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try round(store, "den/1.jpg", spread(["A", "B", "C", "D", "E"]), at: day1)
            // The left half, books up to the photo's right edge: what stands beyond was not photographed.
            try round(store, "den/2.jpg", [Spine(title: "A", x: 0.5), Spine(title: "B", x: 0.97)], at: day2)
            let half = try #require(try store.shelves.shelf("den"))
            #expect(half.changes.isEmpty)
            #expect(half.books.map(\.title) == ["A", "B", "C", "D", "E"])
            #expect(half.books.allSatisfy { $0.missingSince == nil })

            // Next day the photo shows the shelf's end right of B: C, D and E are gone from their places.
            let day3 = day2.addingTimeInterval(86_400)
            try round(store, "den/3.jpg", spread(["A", "B"], from: 0.2, to: 0.4), at: day3)
            #expect(titles(try #require(try store.shelves.shelf("den")).changes.missing) == ["C", "D", "E"])
        }
    }

    @Test(
        "Three shots of one bookcase minutes apart are one round, read left to right in name order; it closes after the quiet time, not before",
        arguments: StoreKind.allCases)
    func threeShotsOneRound(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            // They arrive in any order (a phone syncs as it likes); the names say the order they were taken in.
            try photo(store, "den/IMG_3.jpg", [Spine(title: "G", x: 0.3), Spine(title: "H", x: 0.7)], at: day1)
            try photo(
                store, "den/IMG_1.jpg", [Spine(title: "B", x: 0.6), Spine(title: "A", x: 0.2)],
                at: day1.addingTimeInterval(5 * minute))
            try photo(
                store, "den/IMG_2.jpg", [Spine(title: "C", x: 0.1), Spine(title: "D", x: 0.9)],
                at: day1.addingTimeInterval(10 * minute))
            #expect(try store.shelves.closeDue(now: day1.addingTimeInterval(39 * minute)).works.isEmpty)
            #expect(try store.shelves.shelf("den")?.lastRound == nil, "quiet for 29 minutes: still open")
            _ = try store.shelves.closeDue(now: day1.addingTimeInterval(40 * minute))
            let den = try #require(try store.shelves.shelf("den"))
            #expect(den.lastRound?.photos == 3)
            #expect(den.openRound == nil)
            #expect(den.books.map(\.title) == ["A", "B", "C", "D", "G", "H"])
            #expect(den.books.map(\.position) == [1, 2, 3, 4, 5, 6])

            // A photo an hour later starts a round of its own.
            try photo(
                store, "den/IMG_4.jpg", spread(["A", "B", "C", "D", "G", "H"]),
                at: day1.addingTimeInterval(100 * minute))
            #expect(try store.shelves.shelf("den")?.openRound?.photos == 1)
        }
    }

    @Test(
        "Lent to a friend: listed as lent, not missing; seen again on any shelf, the loan ends by itself and the history says so",
        arguments: StoreKind.allCases)
    func lentThenSeenAgain(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try round(store, "den/1.jpg", spread(["A", "B", "C"]), at: day1)
            try round(store, "den/2.jpg", spread(["A", "C"]), at: day2)
            #expect(titles(try #require(try store.shelves.shelf("den")).changes.missing) == ["B"])

            let answered = day2.addingTimeInterval(40 * minute)
            #expect(try store.shelves.answer(work: "catalogue:b", .lent(to: "Sam"), now: answered).shelf == "den")
            let den = try #require(try store.shelves.shelf("den"))
            #expect(den.changes.missing.isEmpty, "answered: no longer an open change")
            let b = try #require(den.books.first { $0.title == "B" })
            #expect(b.lentTo == "Sam" && b.lentSince == answered && b.missingSince == nil)
            #expect(try store.shelves.whereabouts(of: ["catalogue:b"]).first?.book == b.book, "find says the same")
            #expect(
                try store.shelves.lent().map { "\($0.shelf) \($0.title) \($0.to)" } == [
                    "den B Sam"
                ])

            // A week later B is back, on the office shelf.
            let later = day2.addingTimeInterval(7 * 86_400)
            try photo(store, "office/1.jpg", spread(["B"]), at: later)
            #expect(try store.shelves.lent().isEmpty, "seen again: the loan ended at once")
            _ = try store.shelves.closeDue(now: later.addingTimeInterval(31 * minute))
            let history = try store.library.work("catalogue:b").history.map(\.action)
            #expect(history.contains("lent") && history.contains("returned"))
            #expect(try store.shelves.shelf("office")?.changes.arrived.map(\.from) == ["den"])
        }
    }

    @Test(
        "Where a page of books is: each as it is alone, in the order asked, in the statements of two books on its shelves",
        arguments: StoreKind.allCases)
    func whereaboutsOfAPage(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try round(store, "den/1.jpg", spread(["A", "B", "C", "D", "E", "F"]), at: day1)
            try round(store, "den/2.jpg", spread(["A", "C", "D", "E", "F"]), at: day2)
            try round(store, "office/1.jpg", spread(["G", "H"]), at: day2.addingTimeInterval(3600))
            let asked = ["catalogue:h", "catalogue:b", "catalogue:none", "catalogue:e", "catalogue:a", "catalogue:g"]
            let alone = try asked.compactMap { try store.shelves.whereabouts(of: [$0]).first }

            let before = store.activity
            _ = try store.shelves.whereabouts(of: ["catalogue:b", "catalogue:h"])
            let afterTwo = store.activity
            let page = try store.shelves.whereabouts(of: asked)
            let afterPage = store.activity

            #expect(page == alone)
            #expect(
                page.map { "\($0.title) \($0.shelf) \($0.position.map(String.init) ?? "-")" } == [
                    "H office 2", "B den 2", "E den 5", "A den 1", "G office 1",
                ])
            #expect(
                afterPage.statements - afterTwo.statements == afterTwo.statements - before.statements,
                "six works cost what two on the same shelves cost")
            #expect(page[1].missingSince != nil, "B, not seen by the second round, keeps its place, missing")
        }
    }

    @Test(
        "Answers: gone takes the book out of the shelf's inventory but not the library; still there keeps it, not missing",
        arguments: StoreKind.allCases)
    func goneAndHere(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try round(store, "den/1.jpg", spread(["A", "B", "C", "D"]), at: day1)
            try round(store, "den/2.jpg", spread(["A", "D"]), at: day2)
            #expect(titles(try #require(try store.shelves.shelf("den")).changes.missing) == ["B", "C"])
            let now = day2.addingTimeInterval(50 * minute)
            _ = try store.shelves.answer(work: "catalogue:b", .gone, now: now)
            _ = try store.shelves.answer(work: "catalogue:c", .here, now: now)
            let den = try #require(try store.shelves.shelf("den"))
            #expect(den.books.map(\.title) == ["A", "C", "D"])
            #expect(den.books.allSatisfy { $0.missingSince == nil })
            #expect(den.changes.missing.isEmpty)
            #expect(try store.library.work("catalogue:b").history.last?.action == "gone")
            #expect(try store.library.work("catalogue:c").history.last?.action == "still_there")
            #expect(throws: LibraryError.self) { try store.shelves.answer(work: "catalogue:nothing", .gone, now: now) }
        }
    }

    @Test(
        "A spine left for review counts as seen for its first candidate on the shelf; a photo read again that finds a missing book leaves no stale missing",
        arguments: StoreKind.allCases)
    func reviewAndRescan(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try round(store, "den/1.jpg", spread(["A", "B", "C"]), at: day1)
            // B's spine is hard to read today: its reading waits for a person, first candidate B.
            try photo(
                store, "den/2.jpg",
                [Spine(title: "A", x: 0.2), Spine(title: "8?", x: 0.5, review: "B"), Spine(title: "C", x: 0.8)],
                at: day2)
            _ = try store.shelves.closeDue(now: day2.addingTimeInterval(40 * minute))
            #expect(try #require(try store.shelves.shelf("den")).changes.isEmpty)

            let day3 = day2.addingTimeInterval(86_400)
            // C's spine is missed by the first reading of today's photo; read again, the photo shows it.
            try round(store, "den/4.jpg", spread(["A", "B"], from: 0.2, to: 0.4), at: day3)
            #expect(titles(try #require(try store.shelves.shelf("den")).changes.missing) == ["C"])
            let later = day3.addingTimeInterval(2 * 3600)
            _ = try #require(try store.queue.rescan(sha256: "den-4.jpg", providerChoice: nil, now: later))
            try store.queue.finishReading(
                try store.queue.claimOne(now: later), spread(["A", "B", "C"], from: 0.2, to: 0.5).map { $0.book() },
                shelf: "den", now: later)
            let den = try #require(try store.shelves.shelf("den"))
            #expect(den.changes.missing.isEmpty)
            #expect(den.books.allSatisfy { $0.missingSince == nil })
        }
    }

    @Test(
        "shelf close ends the round at once, and waits for its photos still in the queue", arguments: StoreKind.allCases
    )
    func closeNow(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            #expect(try store.shelves.close(shelf: "den", now: day1).0 == .nothingOpen)
            try photo(store, "den/1.jpg", spread(["A", "B"]), at: day1)
            try store.queue.queuePhoto(
                "den-2", at: "den/2.jpg", mtime: day1.timeIntervalSince1970, now: day1.addingTimeInterval(minute))
            #expect(
                try store.shelves.close(shelf: "den", now: day1.addingTimeInterval(2 * minute)).0 == .waiting(photos: 1)
            )
            try store.queue.finishReading(
                try store.queue.claimOne(now: day1), spread(["C"]).map { $0.book() }, shelf: "den",
                now: day1.addingTimeInterval(3 * minute))
            _ = try store.shelves.closeDue(now: day1.addingTimeInterval(3 * minute))
            let den = try #require(try store.shelves.shelf("den"))
            #expect(den.lastRound?.photos == 2)
            #expect(den.books.map(\.title) == ["A", "B", "C"])
            // A photo after the close opens a new round, however soon.
            try photo(store, "den/3.jpg", spread(["A"]), at: day1.addingTimeInterval(4 * minute))
            #expect(try store.shelves.shelf("den")?.openRound?.photos == 1)
        }
    }
}
