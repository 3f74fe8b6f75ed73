import Foundation
import ShelfCore
import Testing

/// A verified book (or one left for review, naming `candidate`) whose spine stands at `x` (0…1) in its photo.
private func spine(_ id: Int64, at x: Double, candidate: String? = nil) -> ShelfRoundRule.Sighting {
    ShelfRoundRule.Sighting(
        bookID: id, box: Box(x1: x - 0.02, y1: 0.1, x2: x + 0.02, y2: 0.9), isVerified: candidate == nil,
        firstCandidate: candidate.map { CatalogueRecord(source: "catalogue", key: $0, title: $0, author: nil) })
}

/// One photo of these books, spread from `from` to 0.8: room at both ends unless `from` is at the edge.
private func photo(_ ids: [Int64], from: Double = 0.2) -> [ShelfRoundRule.Sighting] {
    ids.enumerated().map { index, id in
        spine(id, at: ids.count == 1 ? from : from + (0.8 - from) * Double(index) / Double(ids.count - 1))
    }
}

@Suite struct ShelfRoundRuleTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    @Test func aBookTakenFromBetweenTwoSeenNeighboursIsMissing() {
        let outcome = ShelfRoundRule(shelf: "den", before: [1, 2, 3, 4, 5], photos: [photo([1, 2, 4, 5])])
            .outcome(at: now)
        #expect(outcome.works(.missing) == [3])
        #expect(outcome.newlyMissing == [3])
        #expect(outcome.changedWorks == [3])
        #expect(outcome.order == [1, 2, 3, 4, 5])
        #expect(outcome.history.map(\.decision.action) == ["missing"])
        #expect(outcome.history.first?.decision.detail == "not seen where it stood on den")
    }

    @Test func aBookAtAnEndIsMissingOnlyWhenThePhotoShowsRoomBeyondIt() {
        let cut = ShelfRoundRule(shelf: "den", before: [1, 2, 3], photos: [photo([2, 3], from: 0.02)])
        #expect(ShelfRoundRule.endsShown(first: cut.photos.first, last: cut.photos.last) == (false, true))
        #expect(cut.outcome(at: now).works(.missing).isEmpty)
        let room = ShelfRoundRule(shelf: "den", before: [1, 2, 3], photos: [photo([2, 3])])
        #expect(room.outcome(at: now).works(.missing) == [1])
    }

    @Test func theEndsAreThoseOfTheFirstAndLastPhotos() {
        let rule = ShelfRoundRule(
            shelf: "den", before: [1, 2, 3, 4, 5], photos: [photo([2, 3], from: 0.02), photo([4], from: 0.5)])
        #expect(ShelfRoundRule.endsShown(first: rule.photos.first, last: rule.photos.last) == (false, true))
        #expect(rule.outcome(at: now).works(.missing) == [5])
        #expect(ShelfRoundRule.endsShown(first: [], last: nil) == (false, false))
    }

    @Test func aBookNewToTheShelfArrivesFromWhereItStoodBefore() {
        let outcome = ShelfRoundRule(
            shelf: "den", before: [1, 2], photos: [photo([1, 9, 2, 8])], cameFrom: [9: "office"]
        ).outcome(at: now)
        #expect(outcome.changes == [ShelfChange(.arrived, 9, otherShelf: "office"), ShelfChange(.arrived, 8)])
        #expect(outcome.seen == [1, 9, 2, 8])
        #expect(outcome.order == [1, 9, 2, 8])
        #expect(outcome.changedWorks.isEmpty)
    }

    @Test func aBookSeenOnAnotherShelfSinceMovedOutAndIsNotMissing() {
        let outcome = ShelfRoundRule(
            shelf: "den", before: [1, 2, 3], photos: [photo([1, 3])], seenElsewhere: [1: "office", 2: "office"]
        ).outcome(at: now)
        #expect(outcome.changes == [ShelfChange(.movedOut, 2, otherShelf: "office")])
        #expect(outcome.order == [1, 3])
        #expect(outcome.changedWorks == [2])
    }

    @Test func aLentBookIsNotMissingUntilAPhotoSeesItAgain() {
        let lent = ShelfMark(kind: .lent, shelf: "den", since: 100, name: "Ann")
        let standing = ShelfRoundRule(
            shelf: "den", before: [1, 2, 3], photos: [photo([1, 3])], marks: [2: lent], lastSeen: [2: 50])
        #expect(standing.outcome(at: now).works(.missing).isEmpty)
        var seenSince = standing
        seenSince.lastSeen = [2: 200]
        #expect(seenSince.outcome(at: now).works(.missing) == [2])
    }

    @Test func aLentBookSeenAgainIsReturned() {
        let lent = ShelfMark(kind: .lent, shelf: "den", since: 100, name: "Ann")
        let outcome = ShelfRoundRule(
            shelf: "den", before: [1, 2, 3], photos: [photo([1, 2, 3])], marks: [2: lent], lastSeen: [2: 50]
        ).outcome(at: now)
        #expect(outcome.clearedMarks == [2])
        #expect(outcome.changedWorks == [2])
        #expect(outcome.history.map(\.decision.action) == ["returned"])
        #expect(outcome.history.first?.decision.detail == "seen again on den")
        #expect(outcome.changes.isEmpty)
    }

    @Test func aBookMissingAlreadyIsMissingAgainWithoutANewMark() {
        let missing = ShelfMark(kind: .missing, shelf: "den", since: 100)
        let outcome = ShelfRoundRule(
            shelf: "den", before: [1, 2, 3], photos: [photo([1, 3])], marks: [2: missing], lastSeen: [2: 50]
        ).outcome(at: now)
        #expect(outcome.works(.missing) == [2])
        #expect(outcome.newlyMissing.isEmpty)
        #expect(outcome.history.isEmpty)
    }

    @Test func nothingIsMissingWhileAPhotoOfTheRoundIsUnread() {
        let outcome = ShelfRoundRule(shelf: "den", before: [1, 2, 3], photos: [photo([1, 3])], unreadPhotos: 1)
            .outcome(at: now)
        #expect(outcome.works(.missing).isEmpty)
        #expect(outcome.order == [1, 2, 3])
    }

    @Test func aReadingLeftForReviewCountsAsItsCandidateWhenThatIsAWorkOfTheShelf() {
        let keys = ShelfRoundRule.WorkKeys(byKey: ["catalogue:dune": 2])
        let review = ShelfRoundRule(
            shelf: "den", before: [1, 2, 3],
            photos: [[spine(1, at: 0.2), spine(77, at: 0.5, candidate: "catalogue:dune"), spine(3, at: 0.8)]],
            keys: keys)
        #expect(review.outcome(at: now).seen == [1, 2, 3])
        #expect(review.outcome(at: now).changes.isEmpty)
        let stranger = ShelfRoundRule(
            shelf: "den", before: [1, 2, 3],
            photos: [[spine(1, at: 0.2), spine(77, at: 0.5, candidate: "catalogue:emma"), spine(3, at: 0.8)]],
            keys: keys)
        #expect(stranger.outcome(at: now).works(.missing) == [2])
    }

    @Test func theOrderKeepsABookNotSeenAfterTheNeighbourItStoodBeside() {
        #expect(ShelfRoundRule.merge([1, 2, 3, 4], with: [2, 9, 4]) == [1, 2, 3, 9, 4])
        #expect(ShelfRoundRule.merge([], with: [5, 6]) == [5, 6])
        #expect(ShelfRoundRule.merge([1, 2], with: []) == [1, 2])
    }

    @Test func booksAreSeenLeftToRightWhateverOrderThePhotoListsThem() {
        let outcome = ShelfRoundRule(
            shelf: "den", before: [], photos: [[spine(3, at: 0.7), spine(1, at: 0.2), spine(2, at: 0.4)]]
        ).outcome(at: now)
        #expect(outcome.seen == [1, 2, 3])
    }
}
