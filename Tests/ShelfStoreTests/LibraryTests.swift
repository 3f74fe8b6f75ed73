import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

/// Commits `books` as the reading of photo `sha` (its first reading, or a rescan when it was read before).
private func commit(_ store: Store, photo sha: String, shelf: String? = nil, _ books: [Book], at now: Date = Date())
    throws
{
    let known = try store.queue.finishedJob(sha256: sha) != nil
    if known {
        _ = try store.queue.rescan(sha256: sha, providerChoice: nil, now: now)
    } else {
        try store.queue.queuePhoto(
            sha, at: "\(shelf.map { "\($0)/" } ?? "")\(sha).jpg", mtime: now.timeIntervalSince1970, now: now)
    }
    try store.queue.finishReading(try store.queue.claimOne(now: now), books, shelf: shelf, now: now)
}

private func reading(
    _ title: String, _ author: String?, confidence: Double = 0.9, isbn: String? = nil,
    match: BookMatch? = nil, candidates: [MatchCandidate]? = nil, status: Book.Status? = nil
) -> Book {
    let checked = isbn.flatMap(ISBN.init)
    var book = Book(
        title: title, author: author, isbn13: checked?.isbn13, isbn10: checked?.isbn10, confidence: confidence,
        box: Box(x1: 0.4, y1: 0.1, x2: 0.45, y2: 0.9), status: status ?? (confidence >= 0.6 ? .verified : .needsReview),
        source: "gemini", match: match)
    book.candidates = candidates
    return book
}

private let duneWork = BookMatch(source: "openlibrary", key: "/works/OL893415W", score: 0.97, year: 1965)
private let hobbitRecord = CatalogueRecord(
    source: "openlibrary", key: "/works/OL27482W", title: "The Hobbit",
    author: "J. R. R. Tolkien", isbn13: "9780261102217", isbn10: "0261102214", year: 1937)
private let hobbitCandidates = [
    MatchCandidate(record: hobbitRecord, score: 0.71),
    MatchCandidate(
        record: CatalogueRecord(source: "openlibrary", key: "/works/OL1W", title: "The Hobbit Companion"),
        score: 0.40),
]

@Suite(.postgresServer, .serialized) struct LibraryTests {
    @Test(
        "Readings matched to the same record are one work, whatever title each photo showed",
        arguments: StoreKind.allCases)
    func matchedReadingsAreOneWork(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert", match: duneWork)])
            try commit(store, photo: "p2", [reading("DUNE Frank Herbert", "Herbert", match: duneWork)])
            let library = try store.library.entries()
            #expect(library.count == 1)
            #expect(library.first?.work == "openlibrary:/works/OL893415W")
            #expect(library.first?.match == duneWork)
            #expect(library.first?.sightings.map(\.photoSHA256) == ["p1", "p2"])
        }
    }

    @Test(
        "Without a match, normalised title and surname make the work; a book matched later is the same work",
        arguments: StoreKind.allCases)
    func titleKeyThenMatch(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert")])
            #expect(try store.library.entries().first?.work == "title:dune|herbert")
            try commit(store, photo: "p2", [reading("Dune", "F. Herbert", match: duneWork)])
            try commit(store, photo: "p3", [reading("The Dune", "Herbert")]) // unmatched again: joins the match
            let library = try store.library.entries()
            #expect(library.count == 1)
            #expect(library.first?.work == "openlibrary:/works/OL893415W")
            #expect(library.first?.sightings.count == 3)
        }
    }

    @Test(
        "A commit settles its photos on the library as the commits before it left it, inside its own transaction",
        arguments: StoreKind.allCases)
    func commitReadsTheLibraryItSettlesOn(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", shelf: "den", [reading("Dune", "Frank Herbert", match: duneWork)])
            let now = Date()
            try store.queue.queuePhoto("p2", at: "den/p2.jpg", mtime: now.timeIntervalSince1970, now: now)
            let job = try store.queue.claimOne(now: now)
            var seen: [String: [LibraryWork]] = [:]
            try store.queue.finish(
                settling: { lookup in
                    seen = try lookup.works(["dune", "emma"], "p2")
                    // What the settled outcome files is what the commit keeps: the title read alone, as the work seen.
                    var book = reading("Dune", nil, confidence: 0.9, match: seen["dune"]?.first?.match)
                    book.author = seen["dune"]?.first?.author
                    return [
                        JobOutcome(job: job, result: .finished(books: [book], resultPath: "/r/p2.json", review: false))
                    ]
                }, shelfOf: { _ in "den" }, now: now)
            #expect(seen.keys.sorted() == ["dune"] && seen["dune"]?.first?.shelves == ["den"])
            let library = try store.library.entries()
            #expect(
                library.count == 1 && library.first?.sightings.map(\.photoSHA256) == ["p1", "p2"],
                "\(library.map(\.work))")
        }
    }

    @Test(
        "A title's verified works, whatever their surname, with the shelves other photos saw them on",
        arguments: StoreKind.allCases)
    func worksByTitle(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", shelf: "living", [reading("Dune", "Frank Herbert", match: duneWork)])
            try commit(store, photo: "p2", [reading("The Dune", "Herbert", match: duneWork)]) // the top of incoming/
            try commit(store, photo: "p3", shelf: "study", [reading("Dune", "Poul Anderson", isbn: "9780441172719")])
            // to review: no evidence
            try commit(store, photo: "p4", shelf: "study", [reading("Dune", nil, confidence: 0.3)])
            try commit(store, photo: "p5", shelf: "study", [reading("Dunes", "Someone")])

            let works = try store.library.works(under: ["dune", "emma"], besides: "p4")
            #expect(works.keys.sorted() == ["dune"])
            let dune = try #require(works["dune"])
            #expect(dune.map(\.author) == ["Frank Herbert", "Poul Anderson"])
            #expect(dune[0].match == duneWork && dune[0].shelves == ["living", ""] && dune[0].lastShelf == "")
            #expect(dune[1].match == nil && dune[1].isbn13 == "9780441172719" && dune[1].shelves == ["study"])
            #expect(
                try store.library.works(under: ["dune"], besides: "p3")["dune"]?.count == 1,
                "this photo's own reading is not evidence")
        }
    }

    @Test(
        "A verified work is looked up by an edition's ISBN too; a reading to review lends nothing",
        arguments: StoreKind.allCases)
    func worksByISBN(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", shelf: "den", [reading("Dune", "Frank Herbert", isbn: "9780441172719")])
            try commit(store, photo: "p2", [reading("Emma", nil, confidence: 0.3, isbn: "9780141439587")]) // to review
            let dune = LibraryWork.isbnKey("9780441172719"), emma = LibraryWork.isbnKey("9780141439587")
            let works = try store.library.works(under: [dune, emma, "dune"], besides: "p9")
            #expect(works.keys.sorted() == ["dune", dune])
            #expect(works[dune]?.map(\.title) == ["Dune"] && works[dune]?.first?.shelves == ["den"])
            #expect(works[dune]?.first?.isbn13 == "9780441172719")
            #expect(
                try store.library.works(under: [dune], besides: "p1").isEmpty,
                "this photo's own reading is not evidence")
        }
    }

    @Test("The editions the library holds: ISBNs its verified works were seen as", arguments: StoreKind.allCases)
    func heldEditions(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert", isbn: "9780441172719")])
            try commit(store, photo: "p2", [reading("Emma", nil, confidence: 0.3, isbn: "9780141439587")]) // to review
            let held = try store.library.heldISBNs(among: ["9780441172719", "9780141439587", "9780593099322"])
            #expect(held == ["9780441172719"])
            #expect(try store.library.heldISBNs(among: []).isEmpty)
        }
    }

    @Test(
        "An unmatched work is folded into the matched one once a reading shows they are the same",
        arguments: StoreKind.allCases)
    func unmatchedWorkFoldsIntoMatchedOne(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Dune Frank Herbert", "Herbert", match: duneWork)])
            try commit(store, photo: "p2", [reading("Dune", "Herbert", confidence: 0.95)])
            #expect(
                try store.library.entries().count == 2, "different titles, one unmatched: not yet known to be the same")
            try commit(store, photo: "p3", [reading("Dune", "Herbert", match: duneWork)])
            let library = try store.library.entries()
            #expect(library.count == 1)
            #expect(Set(library.first?.sightings.map(\.photoSHA256) ?? []) == ["p1", "p2", "p3"])
            #expect(library.first?.title == "Dune", "the most confident reading names it")
            #expect(library.first?.history.filter { $0.action == "detected" }.count == 3, "the history came along")
        }
    }

    @Test(
        "Each ISBN seen is an edition of the work; a rescan that no longer shows one drops it",
        arguments: StoreKind.allCases)
    func editionsMergeAndFollowSightings(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", shelf: "den", [reading("Dune", "Frank Herbert", isbn: "9780441172719")])
            try commit(store, photo: "p2", shelf: "attic", [reading("Dune", "Frank Herbert", isbn: "9780441013593")])
            // the first, as ISBN-10
            try commit(store, photo: "p3", [reading("Dune", "Frank Herbert", isbn: "0441172717")])
            var entry = try #require(try store.library.entries().first)
            #expect(
                entry.editions == [
                    LibraryDocument.Edition(isbn13: "9780441172719", isbn10: "0441172717", source: "gemini"),
                    LibraryDocument.Edition(isbn13: "9780441013593", isbn10: "0441013597", source: "gemini"),
                ])
            #expect(entry.isbn13 == "9780441172719")
            #expect(entry.shelves == ["attic", "den"])
            try commit(store, photo: "p2", shelf: "attic", [reading("Dune", "Frank Herbert")])
            entry = try #require(try store.library.entries().first)
            #expect(entry.editions.map(\.isbn13) == ["9780441172719"])
        }
    }

    @Test(
        "The history says who detected, matched and sent a book to review, once per fact", arguments: StoreKind.allCases
    )
    func historyIsRecordedOnce(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert", match: duneWork)])
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert", match: duneWork)]) // read again
            try commit(store, photo: "p2", [reading("Smudged", nil, confidence: 0.3)])
            let library = try store.library.entries()
            let dune = try #require(library.first { $0.title == "Dune" })
            #expect(dune.history.map(\.action) == ["detected", "matched"])
            #expect(dune.history.map(\.by) == ["gemini", "openlibrary"])
            #expect(dune.history.first?.detail == "p1.jpg")
            let smudged = try #require(library.first { $0.title == "Smudged" })
            #expect(smudged.history.map(\.action) == ["detected", "needs_review"])
            #expect(smudged.history.last?.detail == "p2.jpg: low_confidence")
        }
    }

    @Test(
        "A book below the threshold opens a review item in the same commit, and its photo's job waits in review",
        arguments: StoreKind.allCases)
    func reviewItemIsCreatedInTheCommit(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let smudged = reading("Smudged Spine", nil, confidence: 0.31, candidates: hobbitCandidates)
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert"), smudged])
            let items = try store.library.openReviewItems()
            #expect(items.map(\.id) == [ReviewDocument.id(photoSHA256: "p1", reading: smudged)])
            #expect(items.first?.candidates == hobbitCandidates)
            #expect(items.first?.reasons == ["low_confidence"])
            #expect(items.first?.book.box == smudged.box)
            #expect(try store.status.queueCounts(now: Date()).review == 1)
            let entry = try #require(try store.library.entries().first { $0.title == "Smudged Spine" })
            #expect(entry.status == .needsReview && entry.reviewID == items.first?.id)
        }
    }

    @Test(
        "An open item's place in the review queue, its neighbours and the next one after a decision, oldest first",
        arguments: StoreKind.allCases)
    func reviewPlaceFollowsTheQueue(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            for photo in ["p1", "p2", "p3"] {
                try commit(store, photo: photo, [reading("Smudged \(photo)", nil, confidence: 0.3)])
            }
            let items = try store.library.openReviewItems()
            #expect(items.count == 3)
            #expect(try store.library.firstOpenReviewID() == items[0].id)
            #expect(
                try store.library.reviewPlace(of: items[1])
                    == ReviewPlace(position: 2, total: 3, previous: items[0].id, next: items[2].id))
            #expect(
                try store.library.reviewPlace(of: items[0])
                    == ReviewPlace(position: 1, total: 3, previous: nil, next: items[1].id))
            #expect(try store.library.openReviewID(after: items[0]) == items[1].id)
            #expect(try store.library.openReviewID(after: items[2]) == items[0].id, "past the last, round to the first")
            _ = try store.library.decide(items[1].id, .reject, now: Date())
            #expect(
                try store.library.openReviewID(after: items[1]) == items[2].id,
                "a decided item's next is the one after it")
            #expect(
                try store.library.reviewPlace(of: items[2])
                    == ReviewPlace(position: 2, total: 2, previous: items[0].id, next: nil))
            // The total is counted as items open and close: read again with the same reading, p3 keeps its one item;
            // read without it, the item closes with the work it was all of.
            try commit(store, photo: "p3", [reading("Smudged p3", nil, confidence: 0.3)])
            #expect(try store.library.reviewPlace(of: items[2]).total == 2)
            try commit(store, photo: "p3", [reading("Dune", "Frank Herbert")])
            #expect(
                try store.library.reviewPlace(of: items[0])
                    == ReviewPlace(position: 1, total: 1, previous: nil, next: nil))
            _ = try store.library.decide(items[0].id, .reject, now: Date())
            #expect(try store.library.openReviewID(after: items[2]) == nil, "no other item open")
        }
    }

    @Test(
        "Accepting a candidate puts that book in the library, verified, and closes the photo's review",
        arguments: StoreKind.allCases)
    func acceptingACandidate(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(
                store, photo: "p1", [reading("Smudged Spine", nil, confidence: 0.31, candidates: hobbitCandidates)])
            let id = try #require(try store.library.openReviewItems().first?.id)
            let resolution = try store.library.decide(String(id.prefix(6)), .pick(1), now: Date())
            #expect(resolution.detail == "accepted candidate 1")
            let entry = try #require(try store.library.entries().first)
            #expect(try store.library.entries().count == 1)
            #expect(entry.title == "The Hobbit" && entry.author == "J. R. R. Tolkien" && entry.status == .verified)
            #expect(entry.work == "openlibrary:/works/OL27482W")
            #expect(
                entry.editions == [
                    LibraryDocument.Edition(isbn13: "9780261102217", isbn10: "0261102214", source: "openlibrary")
                ])
            #expect(entry.history.map(\.action) == ["detected", "needs_review", "reviewed_by_user"])
            #expect(entry.history.last?.by == "user" && entry.reviewID == nil)
            #expect(try store.library.openReviewItems().isEmpty)
            #expect(
                try store.status.queueCounts(now: Date()).review == 0 && store.status.queueCounts(now: Date()).done == 1
            )
            #expect(throws: ReviewError.self) { try store.library.decide(id, .accept, now: Date()) }
        }
    }

    @Test("A candidate that does not exist is refused and changes nothing", arguments: StoreKind.allCases)
    func missingCandidateIsRefused(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Smudged Spine", nil, confidence: 0.31)])
            let id = try #require(try store.library.openReviewItems().first?.id)
            let error = try #require(throws: ReviewError.self) { try store.library.decide(id, .pick(1), now: Date()) }
            #expect(error.code == .noSuchCandidate)
            #expect(try store.library.openReviewItems().count == 1)
        }
    }

    @Test(
        "Decisions are applied again when the photo is read again; a rejected reading stays out",
        arguments: StoreKind.allCases)
    func decisionsSurviveARescan(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let smudged = reading("Smudged Spine", nil, confidence: 0.31, candidates: hobbitCandidates)
            let ghost = reading("Shadow", nil, confidence: 0.2)
            let typo = reading("Dnue", "Herbrt", confidence: 0.4)
            try commit(store, photo: "p1", [smudged, ghost, typo, reading("Emma", "Jane Austen")])
            let ids = Dictionary(
                uniqueKeysWithValues: try store.library.openReviewItems().map { ($0.book.title, $0.id) })
            _ = try store.library.decide(try #require(ids["Smudged Spine"]), .pick(1), now: Date())
            _ = try store.library.decide(try #require(ids["Shadow"]), .reject, now: Date())
            #expect(try store.status.queueCounts(now: Date()).review == 1, "one book of the photo is still open")
            _ = try store.library.decide(
                try #require(ids["Dnue"]),
                .edit(title: "Dune", author: "Frank Herbert", isbn: ISBN("9780441172719")), now: Date())
            let before = try store.library.entries()
            #expect(before.map(\.title).sorted() == ["Dune", "Emma", "The Hobbit"])
            #expect(try store.status.queueCounts(now: Date()).review == 0)

            try commit(store, photo: "p1", [smudged, ghost, typo, reading("Emma", "Jane Austen")]) // `shelfd rescan`
            #expect(try store.library.openReviewItems().isEmpty)
            #expect(try store.status.queueCounts(now: Date()).review == 0)
            let after = try store.library.entries()
            #expect(after.map(\.title).sorted() == ["Dune", "Emma", "The Hobbit"])
            let dune = try #require(after.first { $0.title == "Dune" })
            #expect(dune.status == .verified && dune.isbn13 == "9780441172719")
            #expect(dune.editions.first?.source == "user")
            #expect(
                dune.history.filter { $0.action == "reviewed_by_user" }.map(\.detail) == [
                    "edited title, author, ISBN in p1.jpg"
                ])
        }
    }

    @Test(
        "Decisions taken back open their items again as they were, in their place; the photo is in review again",
        arguments: StoreKind.allCases)
    func decisionsTakenBack(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let smudged = reading("Smudged Spine", nil, confidence: 0.31, candidates: hobbitCandidates)
            try commit(
                store, photo: "p1", shelf: "den",
                [smudged, reading("Shadow", nil, confidence: 0.2), reading("Emma", "Jane Austen")])
            let before = try store.library.openReviewItems()
            let entriesBefore = try store.library.entries().map(\.title).sorted()
            let resolutions = try store.library.decide(
                before.map { ($0.id, $0.book.title == "Shadow" ? .reject : .pick(1)) }, now: Date())
            #expect(try store.library.entries().map(\.title).sorted() == ["Emma", "The Hobbit"])
            #expect(try store.status.queueCounts(now: Date()).review == 0)

            let change = try store.library.reopen(resolutions.compactMap(\.undo), now: Date())
            #expect(change.openedItems == Set(before.map(\.id)) && change.photos == ["p1"])
            #expect(try store.library.openReviewItems() == before, "the same items, readings and order")
            #expect(try store.library.entries().map(\.title).sorted() == entriesBefore)
            #expect(try store.status.queueCounts(now: Date()).review == 1)
            #expect(try store.library.decidedReadings(sha256: "p1").isEmpty, "nothing is applied again on a rescan")
            #expect(try store.library.openReviewPhotos(shelf: "den").map(\.open) == [2])
            #expect(try store.library.openReviewPhotos(shelf: nil).isEmpty)
            // Taken back twice: the items are open already, nothing changes.
            #expect(try store.library.reopen(resolutions.compactMap(\.undo), now: Date()).openedItems.isEmpty)
            #expect(try store.library.openReviewItems().count == 2)
        }
    }

    @Test(
        "A decision whose work was since edited or removed in the library is not taken back, with an error that says why",
        arguments: StoreKind.allCases)
    func decisionsOvertakenByAnEdit(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(
                store, photo: "p1", shelf: "den",
                [reading("Qzv Ploth", nil, confidence: 0.2), reading("Wixen Darr", nil, confidence: 0.2)])
            let items = try store.library.openReviewItems().sorted { $0.book.title < $1.book.title }
            let resolutions = try store.library.decide(items.map { ($0.id, .accept) }, now: Date())
            let works = try store.library.entries().sorted { $0.title < $1.title }
            _ = try store.library.editWork(works[0].work, title: nil, author: "Ann Author", isbn: nil, now: Date())
            _ = try store.library.removeWork(works[1].work, now: Date())
            for resolution in resolutions {
                let undo = try #require(resolution.undo)
                #expect(throws: ReviewError.self) { try store.library.reopen([undo], now: Date()) }
            }
            #expect(try store.library.openReviewItems().isEmpty, "nothing taken back")
            #expect(try store.library.entries().map(\.author) == ["Ann Author"], "the edit stands, the removal too")
        }
    }

    @Test(
        "A shelf's photos with open items, by path; a shelf's sub-folder and the top of incoming/ are other shelves",
        arguments: StoreKind.allCases)
    func openPhotosOfAShelf(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let unsure = [reading("Shadow", nil, confidence: 0.2), reading("Smudged Spine", nil, confidence: 0.3)]
            try commit(store, photo: "p2", shelf: "den_1", unsure)
            try commit(store, photo: "p1", shelf: "den_1", [unsure[0]])
            try commit(store, photo: "p3", shelf: "den_1/top", unsure)
            try commit(store, photo: "p4", shelf: "denx1", unsure) // "_" matched literally, not as any letter
            try commit(store, photo: "p5", unsure)
            #expect(
                try store.library.openReviewPhotos(shelf: "den_1").map { [$0.photo.sha256, "\($0.open)"] } == [
                    ["p1", "1"], ["p2", "2"],
                ])
            #expect(try store.library.openReviewPhotos(shelf: "den_1/top").map(\.photo.sha256) == ["p3"])
            #expect(try store.library.openReviewPhotos(shelf: nil).map(\.photo.sha256) == ["p5"])
        }
    }

    @Test("Rejecting one photo's reading keeps the book another photo shows", arguments: StoreKind.allCases)
    func rejectKeepsOtherSightings(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Emma", "Jane Austen")])
            try commit(store, photo: "p2", [reading("Emma", "Jane Austen", confidence: 0.3)])
            let id = try #require(try store.library.openReviewItems().first?.id)
            _ = try store.library.decide(id, .reject, now: Date())
            let entry = try #require(try store.library.entries().first)
            #expect(entry.sightings.map(\.photoSHA256) == ["p1"])
            #expect(entry.history.last?.detail == "rejected in p2.jpg")
        }
    }

    @Test("A rescan that reads a book differently closes the old reading's item", arguments: StoreKind.allCases)
    func rescanClosesStaleItems(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Smudged Spine", nil, confidence: 0.31)])
            #expect(try store.library.openReviewItems().count == 1)
            try commit(store, photo: "p1", [reading("The Hobbit", "J. R. R. Tolkien")])
            #expect(try store.library.openReviewItems().isEmpty)
            #expect(try store.library.entries().map(\.title) == ["The Hobbit"])
            #expect(try store.status.queueCounts(now: Date()).review == 0)
        }
    }

    // MARK: One work per book, whatever matched it (ARCHITECTURE.md, "One entry per work")

    @Test(
        "An ISBN-10 and the ISBN-13 of one book are one work; an ISBN whose checksum fails counts for nothing",
        arguments: StoreKind.allCases)
    func isbn10AndIsbn13AreOneWork(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            var spine = reading("DUNE HERBERT ACE", nil)
            spine.isbn13 = nil; spine.isbn10 = "0-441-17271-7" // as a source may give it: ISBN-10 only
            try commit(store, photo: "p1", [spine])
            try commit(store, photo: "p2", [reading("Dune", "Frank Herbert", isbn: "9780441172719")])
            var typo = reading("Dune Messiah", "Frank Herbert")
            typo.isbn13 = "9780441172718" // one digit off: not an ISBN
            try commit(store, photo: "p3", [typo])
            let library = try store.library.entries()
            #expect(library.count == 2)
            let dune = try #require(library.first)
            #expect(dune.sightings.map(\.photoSHA256) == ["p1", "p2"])
            #expect(dune.editions.map(\.isbn13) == ["9780441172719"])
            #expect(dune.isbn10 == "0441172717")
            #expect(library.last?.editions == [])
        }
    }

    @Test(
        "Matched to the catalogue in one photo and to OpenLibrary in another, one ISBN: one work, keeping its first key",
        arguments: StoreKind.allCases)
    func catalogueAndOpenLibrarySharingAnISBN(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let catalogued = BookMatch(source: "catalogue", key: "catalogue:12", score: 0.9, year: 1965)
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert", isbn: "9780441172719", match: duneWork)])
            try commit(
                store, photo: "p2", [reading("Dune (Ace)", "Herbert, Frank", isbn: "0441172717", match: catalogued)])
            var library = try store.library.entries()
            #expect(library.count == 1)
            #expect(library.first?.work == "openlibrary:/works/OL893415W", "a merge never renames the entry")
            #expect(library.first?.sightings.count == 2)
            // The catalogue's record is the same work now: a reading matched to it alone (no ISBN) joins it.
            try commit(store, photo: "p3", [reading("Dune", "Frank Herbert", match: catalogued)])
            library = try store.library.entries()
            #expect(library.count == 1 && library.first?.sightings.count == 3)
        }
    }

    @Test(
        "A matched and an unmatched reading with the same title and surname are one work, in either order",
        arguments: StoreKind.allCases)
    func matchedAndUnmatchedSameTitle(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let catalogued = BookMatch(source: "catalogue", key: "catalogue:3", score: 0.9, year: 1815)
            try commit(store, photo: "p1", [reading("Emma", "Jane Austen", match: catalogued)])
            try commit(store, photo: "p2", [reading("EMMA", "J. Austen")])
            try commit(store, photo: "p3", [reading("Persuasion", "Jane Austen")])
            try commit(
                store, photo: "p4",
                [
                    reading(
                        "Persuasion", "Austen",
                        match: BookMatch(
                            source: "catalogue", key: "catalogue:4",
                            score: 0.9, year: 1817))
                ])
            let library = try store.library.entries()
            #expect(
                library.map(\.work) == ["catalogue:3", "catalogue:4"], "an unmatched work takes the record when matched"
            )
            #expect(library.map(\.sightings.count) == [2, 2])
        }
    }

    @Test(
        "A reading that links two entries merges them: sightings, history with `merged` naming both, open review items",
        arguments: StoreKind.allCases)
    func linkingReadingMergesTwoWorks(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert", isbn: "9780441172719", match: duneWork)])
            try commit(store, photo: "p2", [reading("DUNE", nil, confidence: 0.3)]) // no author, no ISBN
            #expect(try store.library.entries().count == 2)
            let item = try #require(try store.library.openReviewItems().first)
            try commit(store, photo: "p3", [reading("Dune", nil, isbn: "0441172717")]) // its title and p1's ISBN
            let library = try store.library.entries()
            #expect(library.count == 1)
            let dune = try #require(library.first)
            #expect(
                dune.work == "openlibrary:/works/OL893415W" && dune.title == "Dune" && dune.author == "Frank Herbert")
            #expect(dune.sightings.map(\.photoSHA256) == ["p1", "p2", "p3"])
            let merged = try #require(dune.history.first { $0.action == "merged" })
            #expect(
                merged.detail == "«DUNE» (title:dune|) into «Dune» (openlibrary:/works/OL893415W): p3.jpg has "
                    + "the title and author of the first and the ISBN 9780441172719 of the second")
            #expect(dune.history.filter { $0.action == "detected" }.count == 3, "both histories are kept")
            #expect(dune.reviewID == item.id, "the open review item follows its book")
            #expect(try store.library.openReviewItems().map(\.id) == [item.id])
            _ = try store.library.decide(item.id, .accept, now: Date())
            #expect(try store.library.entries().count == 1)
        }
    }

    @Test(
        "A reading a person decided keeps its title, author and status when its work is merged into another",
        arguments: StoreKind.allCases)
    func decisionSurvivesAMerge(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(
                store, photo: "p1",
                [
                    reading(
                        "Dune Deluxe Edition", "Frank Herbert", confidence: 0.99,
                        isbn: "9780441172719", match: duneWork)
                ])
            let typo = reading("Dnue", "Herbrt", confidence: 0.4)
            try commit(store, photo: "p2", [typo])
            let id = try #require(try store.library.openReviewItems().first?.id)
            _ = try store.library.decide(id, .edit(title: "Dune", author: "Frank Herbert", isbn: nil), now: Date())
            #expect(try store.library.entries().count == 2, "nothing links the person's Dune to the matched one yet")

            try commit(store, photo: "p3", [reading("Dune", "Herbert", confidence: 0.7, isbn: "9780441172719")])
            var library = try store.library.entries()
            #expect(library.count == 1)
            var dune = try #require(library.first)
            #expect(
                dune.title == "Dune" && dune.author == "Frank Herbert" && dune.status == .verified,
                "the decided reading wins over a more confident one")
            #expect(dune.work == "openlibrary:/works/OL893415W")
            #expect(
                dune.history.contains {
                    $0.action == "reviewed_by_user" && $0.detail == "edited title, author in p2.jpg"
                })
            #expect(dune.history.contains { $0.action == "merged" })

            try commit(store, photo: "p2", [typo]) // read again: the decision applies again
            library = try store.library.entries()
            dune = try #require(library.first)
            #expect(library.count == 1 && dune.title == "Dune" && dune.sightings.count == 3)
            #expect(try store.library.openReviewItems().isEmpty)
        }
    }

    @Test(
        "A person's decision that gives a book another entry's ISBN merges the two, keeping what the person said",
        arguments: StoreKind.allCases)
    func decisionThatLinksMerges(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert", isbn: "9780441172719", match: duneWork)])
            try commit(store, photo: "p2", [reading("Dune Deluxe", "F. Herbert", confidence: 0.4)])
            #expect(try store.library.entries().count == 2)
            let id = try #require(try store.library.openReviewItems().first?.id)
            _ = try store.library.decide(
                id, .edit(title: nil, author: "Frank Herbert", isbn: ISBN("0441172717")), now: Date())
            let library = try store.library.entries()
            #expect(library.count == 1)
            let dune = try #require(library.first)
            #expect(
                dune.work == "openlibrary:/works/OL893415W" && dune.title == "Dune Deluxe" && dune.status == .verified)
            #expect(dune.sightings.map(\.photoSHA256) == ["p1", "p2"])
            #expect(dune.history.contains { $0.action == "merged" && $0.by == "user" })
            #expect(
                dune.history.contains {
                    $0.action == "reviewed_by_user" && $0.detail == "edited author, ISBN in p2.jpg"
                })
            #expect(dune.reviewID == nil)
            #expect(try store.library.openReviewItems().isEmpty)
        }
    }

    @Test(
        "An edit that names another work than the matched record leaves the record's ISBN behind; one that names it keeps it",
        arguments: StoreKind.allCases)
    func editLeavesTheRecordsISBN(kind: StoreKind) throws {
        let crocodile = CatalogueRecord(
            source: "catalogue", key: "catalogue:9773", title: "The Selfish crocodile", author: "Charles, Faustin",
            isbn13: "9789992142219")
        func weakMatch() -> Book { // a spine's text that took a plausible record's identity, for review
            var book = reading(
                crocodile.title, crocodile.author, confidence: 0.55, isbn: crocodile.isbn13,
                match: BookMatch(source: "catalogue", key: crocodile.key, score: 0.31, year: nil),
                candidates: [MatchCandidate(record: crocodile, score: 0.31)], status: .needsReview)
            book.spineText = "RICHARD DAWKINS THE SELFISH GENE OXFORD"
            return book
        }
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [weakMatch()])
            try commit(store, photo: "p2", [weakMatch()])
            let items = try store.library.openReviewItems().sorted { $0.photo.sha256 < $1.photo.sha256 }
            #expect(items.count == 2)
            // The web form sends the ISBN it was filled with: the same as not giving it.
            _ = try store.library.decide(
                items[0].id, .edit(title: "The Selfish Gene", author: "Richard Dawkins", isbn: ISBN("9789992142219")),
                now: Date())
            _ = try store.library.decide(
                items[1].id, .edit(title: nil, author: "Faustin Charles", isbn: nil), now: Date())
            let library = try store.library.entries()
            let gene = try #require(library.first { $0.title == "The Selfish Gene" })
            #expect(gene.isbn13 == nil && gene.editions.isEmpty, "the crocodile's ISBN is not the gene's")
            #expect(
                gene.history.last?.detail
                    == "edited title, author; ISBN 9789992142219 left with «The Selfish crocodile» in p1.jpg")
            let crocodileEntry = try #require(library.first { $0.title == "The Selfish crocodile" })
            #expect(crocodileEntry.author == "Faustin Charles" && crocodileEntry.isbn13 == "9789992142219")
            #expect(crocodileEntry.editions.map(\.source) == ["catalogue"], "the ISBN is the catalogue's, not read")
        }
    }

    @Test(
        "Two works that share a title and surname but not a record or an ISBN stay two entries",
        arguments: StoreKind.allCases)
    func sameTitleDifferentWorks(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let emily = BookMatch(source: "catalogue", key: "catalogue:1", score: 0.9, year: 1846)
            let anne = BookMatch(source: "openlibrary", key: "/works/OL2W", score: 0.9, year: 1846)
            try commit(store, photo: "p1", [reading("Poems", "Emily Brontë", isbn: "9780141439587", match: emily)])
            try commit(store, photo: "p2", [reading("Poems", "Anne Brontë", isbn: "9780441172719", match: anne)])
            #expect(try store.library.entries().map(\.work) == ["catalogue:1", "openlibrary:/works/OL2W"])
            // A spine that could be either joins one of them, and merges neither into the other.
            try commit(store, photo: "p3", [reading("POEMS", "Brontë")])
            let library = try store.library.entries()
            #expect(library.map(\.work) == ["catalogue:1", "openlibrary:/works/OL2W"])
            #expect(library.map(\.sightings.count) == [2, 1])
            #expect(!library.flatMap(\.history).contains { $0.action == "merged" })
        }
    }

    @Test(
        "Two editions of one work are one entry with both; the edition shown is the one seen most, ties the newest",
        arguments: StoreKind.allCases)
    func editionsShownBySightings(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            try commit(
                store, photo: "p1", [reading("Dune", "Frank Herbert", isbn: "9780441172719", match: duneWork)],
                at: start)
            try commit(
                store, photo: "p2", [reading("Dune", "Frank Herbert", isbn: "9780340960196", match: duneWork)],
                at: start + 60)
            var entry = try #require(try store.library.entries().first)
            #expect(try store.library.entries().count == 1)
            #expect(entry.editions.map(\.isbn13) == ["9780441172719", "9780340960196"])
            #expect(entry.isbn13 == "9780340960196" && entry.isbn10 == "0340960191", "one sighting each: the newest")
            try commit(
                store, photo: "p3", [reading("Dune", "Frank Herbert", isbn: "0441172717", match: duneWork)],
                at: start + 120)
            try commit(
                store, photo: "p4", [reading("Dune", "Frank Herbert", isbn: "9780340960196", match: duneWork)],
                at: start + 180)
            try commit(
                store, photo: "p5", [reading("Dune", "Frank Herbert", isbn: "9780441172719", match: duneWork)],
                at: start + 240)
            entry = try #require(try store.library.entries().first)
            #expect(entry.isbn13 == "9780441172719", "three sightings against two")
            #expect(entry.editions.map(\.isbn13) == ["9780441172719", "9780340960196"], "listed first seen first")
        }
    }

    @Test(
        "The library page finds a work by a word of its title or author in any case or by part of an ISBN, and sorts caselessly",
        arguments: StoreKind.allCases)
    func libraryPageSearchAndSort(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            try commit(
                store, photo: "p1", shelf: "den", [reading("dune", "Frank Herbert", isbn: "9780441172719")], at: start)
            try commit(store, photo: "p2", shelf: "Attic", [reading("Emma", "jane austen")], at: start + 60)
            try commit(
                store, photo: "p3", [reading("The Difference Engine", "Bruce Sterling", isbn: "080442957X")],
                at: start + 120)
            func titles(_ search: String, _ sort: LibrarySort = .title) throws -> [String] {
                try store.library.libraryPage(search: search, sort: sort, offset: 0, limit: 10).rows.map(\.title)
            }
            #expect(try titles("") == ["dune", "Emma", "The Difference Engine"])
            #expect(try titles("", .author) == ["The Difference Engine", "dune", "Emma"])
            #expect(try titles("", .shelf) == ["Emma", "dune", "The Difference Engine"], "no shelf last")
            #expect(try titles("", .added) == ["The Difference Engine", "Emma", "dune"])
            #expect(try titles("EMMA") == ["Emma"])
            #expect(try titles("Austen") == ["Emma"])
            #expect(try titles("herb") == ["dune"])
            #expect(try titles("441-17271") == ["dune"], "digits of the ISBN-13")
            #expect(try titles("0441172717") == ["dune"], "a whole ISBN-10, looked up as its ISBN-13")
            #expect(try titles("42957x") == ["The Difference Engine"], "an ISBN-10's X typed small")
            #expect(try titles("100%") == [])
            let page = try store.library.libraryPage(search: "e", sort: .title, offset: 1, limit: 1)
            #expect(page.total == 3 && page.rows.map(\.title) == ["Emma"])
            #expect(page.rows.first?.shelves == ["Attic"] && page.rows.first?.photos == ["p2"])
        }
    }

    // SQLite only: the merge runs when an old SQLite file is opened; a PostgreSQL database starts at the current schema.
    @Test(
        "Entries stored twice before ISBNs counted are merged once, on opening; an ISBN failing its checksum is dropped"
    )
    func upgradeMergesEntriesSharingAnISBN() throws {
        try withStore(.sqlite) { store, site in
            let path = try #require(site.sqlitePath)
            let catalogued = BookMatch(source: "catalogue", key: "catalogue:1", score: 0.9, year: 1965)
            try commit(store, photo: "p1", [reading("Dune", "Frank Herbert", isbn: "9780441172719", match: duneWork)])
            try commit(store, photo: "p2", [reading("Dune", "Frank Herbert", match: catalogued)])
            try commit(store, photo: "p3", [reading("Emma", "Jane Austen")])
            // What the previous version left: the catalogue's Dune apart with the same ISBN, an unchecked ISBN on Emma.
            let db = try SQLiteConnection(path: path)
            try db.execute(
                "UPDATE book_sighting SET isbn13 = '9780441172719', isbn10 = '0441172717', isbn_source = 'catalogue' WHERE sha256 = 'p2'"
            )
            try db.execute(
                "UPDATE book_sighting SET isbn13 = '9780141439588', isbn_source = 'gemini' WHERE sha256 = 'p3'")
            try db.execute("INSERT INTO setting (key, value) VALUES ('merge_by_isbn', 'pending')")
            #expect(try store.library.entries().count == 3)

            let library = try site.open().library.entries()
            #expect(library.map(\.work) == ["openlibrary:/works/OL893415W", "title:emma|austen"])
            #expect(library.first?.sightings.map(\.photoSHA256) == ["p1", "p2"])
            #expect(library.first?.history.contains { $0.action == "merged" && $0.by == "shelfd" } == true)
            #expect(library.last?.editions == [])
            #expect(try site.open().library.entries() == library, "done once")
        }
    }

    // SQLite only: an old version's file, migrated on opening.
    @Test("A database of the previous version keeps its books, their ISBNs and shelves")
    func migratesTheLibrary() throws {
        try withOlderDatabase(
            steps: 2,
            rows: """
                INSERT INTO photo VALUES ('p1', 1, 'den/a.jpg', 0);
                INSERT INTO book (title_key, title, author, isbn13, isbn10, confidence, status, source, first_seen, updated_at)
                VALUES ('title:dune|herbert', 'Dune', 'Frank Herbert', '9780441172719', '0441172717', 0.9, 'verified', 'gemini', 0, 0);
                INSERT INTO book_sighting VALUES (1, 'p1', NULL, 0.9, 'den', 0);
                """
        ) { store in
            let entry = try #require(try store.library.entries().first)
            #expect(entry.work == "title:dune|herbert" && entry.title == "Dune" && entry.status == .verified)
            #expect(entry.editions.map(\.isbn13) == ["9780441172719"])
            #expect(entry.shelves == ["den"])
            #expect(entry.history.map(\.action) == ["detected"])
            try commit(store, photo: "p2", [reading("Dune", "Frank Herbert", isbn: "9780441172719")])
            #expect(try store.library.entries().first?.sightings.count == 2)
        }
    }
}

@Suite(.postgresServer, .serialized) struct LibraryPagesTests {
    @Test(
        "Read a page at a time, the library is every work once, in the order first seen, as read whole",
        arguments: StoreKind.allCases)
    func pagesAreTheWholeLibrary(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            // Two works first seen at the same moment: the keyset goes on by id, losing neither.
            for (index, title) in ["Dune", "Emma", "Ulysses", "Beloved", "Middlemarch"].enumerated() {
                try commit(
                    store, photo: "p\(index)", [reading(title, "Author \(index)")],
                    at: start.addingTimeInterval(Double(index / 2)))
            }
            try commit(store, photo: "p9", [reading("Dune", "Author 0")], at: start.addingTimeInterval(60))
            var pages: [[LibraryDocument.Entry]] = []
            try store.library.libraryPages(size: 2) { pages.append($0) }
            #expect(pages.map(\.count) == [2, 2, 1])
            #expect(pages.flatMap { $0 } == (try store.library.entries()).map { $0.bounded() })
            #expect(pages.first?.first?.sightingsCount == 2)
        }
    }

    @Test(
        "The pages, read on a connection of their own, follow every commit, one made between two pages too",
        arguments: StoreKind.allCases)
    func pagesFollowCommits(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            func titles() throws -> [String] {
                var titles: [String] = []
                try store.library.libraryPages(size: 2) { page in titles += page.map(\.title) }
                return titles
            }
            try commit(store, photo: "p0", [reading("Dune", "Frank Herbert")])
            #expect(try titles() == ["Dune"])
            try commit(store, photo: "p1", [reading("Emma", "Jane Austen")])
            store.releaseMemory()
            #expect(try titles() == ["Dune", "Emma"])
            // A commit made while the pages are read (between two of them) is in the next read, whole.
            var first = true
            var during: [String] = []
            try commit(store, photo: "p2", [reading("Ulysses", "James Joyce")])
            try store.library.libraryPages(size: 2) { page in
                during += page.map(\.title)
                if first { first = false; try commit(store, photo: "p3", [reading("Beloved", "Toni Morrison")]) }
            }
            #expect(during.prefix(2) == ["Dune", "Emma"] && during.contains("Ulysses"))
            #expect(try titles() == ["Dune", "Emma", "Ulysses", "Beloved"])
        }
    }

    @Test(
        "A work seen thirty times on three shelves, with two editions and a long history, is read a page at a time as library.json bounds it",
        arguments: StoreKind.allCases)
    func pagesAreBounded(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            let shelves = ["den", "hall", "attic"]
            for i in 0..<30 {
                // Two editions seen ten times each: the one seen last is shown.
                let isbn = [nil, "9780441172719", "9780340960196"][i % 3]
                try commit(
                    store, photo: "p\(i)", shelf: shelves[i % 3], [reading("Dune", "Frank Herbert", isbn: isbn)],
                    at: start.addingTimeInterval(Double(i) * 60))
            }
            try commit(store, photo: "q", shelf: "den", [reading("Emma", "Jane Austen")], at: start)
            let dune = try #require(
                try store.read { db in try db.queryOne("SELECT book_id FROM book_sighting WHERE sha256 = 'p0'") }?.int(
                    "book_id"))
            try store.write { db in
                for step in 0..<25 {
                    try LibraryRecords.recordHistory(
                        db, dune,
                        LibraryDocument.Decision(
                            action: "reviewed_by_user", by: "user", at: start.addingTimeInterval(Double(step)),
                            detail: "step \(step)"))
                }
            }
            var pages: [[LibraryDocument.Entry]] = []
            try store.library.libraryPages(size: 1) { pages.append($0) }
            let whole = try store.library.entries()
            #expect(pages.flatMap { $0 } == whole.map { $0.bounded() })
            let bounded = try #require(pages.flatMap { $0 }.first { $0.title == "Dune" })
            #expect(bounded.sightings.map(\.shelf) == ["den", "hall", "attic"])
            #expect(bounded.sightings.map(\.photoSHA256) == ["p27", "p28", "p29"])
            #expect(bounded.sightingsCount == 30 && bounded.lastSeen == start.addingTimeInterval(29 * 60))
            #expect(
                bounded.isbn13 == "9780340960196"
                    && bounded.editions.map(\.isbn13) == ["9780441172719", "9780340960196"])
            #expect(bounded.history.count == LibraryDocument.Entry.boundedHistory)
            #expect(bounded.historyCount == whole.first { $0.title == "Dune" }?.history.count)
        }
    }

    @Test(
        "A photo's readings written together make the library one reading at a time makes: a shared sighting, a link through the photo's own sighting, a merge",
        arguments: StoreKind.allCases)
    func readingsTogetherAsOneAtATime(kind: StoreKind) throws {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let earlier = [
            ("p0", reading("Persuasion", "Jane Austen", isbn: "9780141439686")),
            ("p1", reading("Northanger Abbey", "Jane Austen", isbn: "9780199535552")),
        ]
        let photo = [
            reading("Dune", "Frank Herbert", isbn: "9780441172719"),
            reading("Dune", "Frank Herbert", confidence: 0.95), // the same work: one sighting
            reading("The Desert Planet", "Frank Herbert", isbn: "9780441172719"), // joins it by the photo's own ISBN
            reading("Persuasion", "Jane Austen", isbn: "9780199535552"),
        ] // links two works: they merge
        let at = start.addingTimeInterval(60)
        var libraries: [[LibraryDocument.Entry]] = []
        for together in [true, false] {
            try withStore(kind) { store, _ in
                for (index, (sha, book)) in earlier.enumerated() {
                    try commit(store, photo: sha, [book], at: start.addingTimeInterval(Double(index)))
                }
                if together {
                    try commit(store, photo: "p2", photo, at: at)
                } else {
                    try store.queue.queuePhoto("p2", mtime: at.timeIntervalSince1970, now: at)
                    try store.write { db in
                        var books = Set<Int64>()
                        for book in photo {
                            books.insert(
                                try LibraryRecords.addReading(
                                    db, book, photo: .init(path: "p2.jpg", sha256: "p2"), shelf: nil,
                                    refresh: false, now: at))
                        }
                        try LibraryRecords.refresh(db, books, now: at)
                    }
                }
                libraries.append(try store.library.entries())
            }
        }
        #expect(libraries[0] == libraries[1])
        #expect(libraries[0].map(\.title).sorted() == ["Dune", "Persuasion"])
        #expect(libraries[0].first { $0.title == "Dune" }?.sightingsCount == 1)
        #expect(libraries[0].first { $0.title == "Persuasion" }?.history.contains { $0.action == "merged" } == true)
    }

    @Test(
        "A review item and a photo are found by the start of their id, as a person types it, in either case",
        arguments: StoreKind.allCases)
    func foundByPrefix(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let sha = "ab12" + String(repeating: "0", count: 60)
            try store.queue.queuePhoto(sha, at: "p.jpg")
            try store.queue.finishReading(try store.queue.claimOne(), [reading("Smudged", nil, confidence: 0.3)])
            let item = try #require(try store.library.openReviewItems().first)
            #expect(try store.library.reviewItem(String(item.id.prefix(6)).uppercased()).id == item.id)
            #expect(try store.library.reviewItem(item.id).id == item.id)
            let other = item.id.first == "f" ? "0000" : "ffff"
            #expect(throws: ReviewError.self) { try store.library.reviewItem(other) }
            #expect(try store.queue.rescan(sha256: "AB12", providerChoice: nil, now: Date())?.sha256 == sha)
            #expect(try store.queue.rescan(sha256: "ab13", providerChoice: nil, now: Date()) == nil)
        }
    }

    @Test(
        "A batch commit, a decision and a library edit each say what they changed: works, items opened and closed, photos",
        arguments: StoreKind.allCases)
    func commitsReportTheirChange(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let now = Date()
            try store.queue.queuePhoto("p1", now: now)
            let job = try store.queue.claimOne(now: now)
            let books = [
                reading("Dune", "Frank Herbert"), reading("Smudged", nil, confidence: 0.3),
                reading("Faded", nil, confidence: 0.2),
            ]
            let batch = try store.queue.finishReading(job, books, now: now)
            let open = try store.library.openReviewItems()
            #expect(batch.works.count == 3 && batch.photos == ["p1"] && batch.closedItems.isEmpty)
            #expect(batch.openedItems == Set(open.map(\.id)) && open.count == 2)
            #expect(batch.changesReview && batch.changesLibrary && !batch.reconcile)

            let smudged = try #require(open.first { $0.book.title == "Smudged" })
            let decision = try store.library.decide(smudged.id, .reject, now: Date()).files
            #expect(decision.closedItems == [smudged.id] && decision.photos == ["p1"] && !decision.works.isEmpty)

            // Read again without "Faded": its item closes.
            _ = try store.queue.rescan(sha256: "p1", providerChoice: nil, now: now)
            let rescan = try store.queue.finishReading(
                try store.queue.claimOne(now: now), Array(books.prefix(2)), now: now)
            let faded = try #require(open.first { $0.book.title == "Faded" })
            #expect(rescan.closedItems == [faded.id] && rescan.openedItems.isEmpty)
            // A shared store's files version moves once per commit, so the node that writes files knows a change was
            // only its own: here the decision came between the two commits.
            if kind == .postgres {
                let first = try #require(batch.filesVersionAfter), second = try #require(rescan.filesVersionBefore)
                #expect(batch.filesVersionBefore == first - 1 && rescan.filesVersionAfter == second + 1)
                #expect(second > first, "the decision moved the version between the commits")
                #expect(try store.results.filesVersion() == rescan.filesVersionAfter)
            } else {
                #expect(batch.filesVersionAfter == nil && rescan.filesVersionBefore == nil)
            }

            let edit = try store.library.editWork(
                "title:dune|herbert", title: "Dune Messiah", author: nil, isbn: nil, now: Date()
            )
            .files
            #expect(edit.photos == ["p1"] && !edit.works.isEmpty && edit.closedItems.isEmpty)
        }
    }

    @Test("The open items a page at a time, and the open items of some photos", arguments: StoreKind.allCases)
    func openItemsByPhoto(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            try commit(store, photo: "p1", [reading("Smudged", nil, confidence: 0.3)])
            try commit(
                store, photo: "p2", [reading("Blurred", nil, confidence: 0.3), reading("Faded", nil, confidence: 0.2)])
            let all = try store.library.openReviewItems()
            // Read a page at a time, the queue is every item once, oldest first; two opened together go on by id.
            var pages: [[ReviewItem]] = []
            try store.library.openReviewPages(size: 2) { pages.append($0) }
            #expect(pages.map(\.count) == [2, 1])
            #expect(pages.flatMap { $0 }.map(\.id) == all.map(\.id))
            #expect(
                try store.library.openReviewItems(photos: ["p2"]).map(\.book.title).sorted() == ["Blurred", "Faded"])
            #expect(try store.library.openReviewItems(photos: []).isEmpty)
        }
    }
}
