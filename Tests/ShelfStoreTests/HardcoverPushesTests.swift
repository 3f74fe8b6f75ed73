import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

/// Commits one verified reading of `title` with `isbn` from the photo `sha`, at `now`.
private func verify(
    _ store: Store, _ title: String, isbn: String?, photo sha: String, status: Book.Status = .verified,
    at now: Date
) throws {
    let book = Book(
        title: title, author: "Someone", isbn13: isbn, isbn10: nil, confidence: status == .verified ? 0.95 : 0.3,
        box: nil, status: status, source: "gemini")
    try store.queue.commitReading(photo: sha, shelf: "den", [book], at: now)
}

@Suite(.postgresServer, .serialized) struct HardcoverPushesTests {
    @Test(
        "The works to add to Hardcover: verified, along their changes a page at a time, none recorded for its edition",
        arguments: StoreKind.allCases)
    func worksAlongTheirChanges(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date(timeIntervalSince1970: 1_790_000_000)
            try verify(store, "Dune", isbn: "9780441172719", photo: "a", at: start)
            try verify(store, "Emma", isbn: "9780141439587", photo: "b", at: start.addingTimeInterval(1))
            try verify(store, "Blurred", isbn: nil, photo: "c", status: .needsReview, at: start.addingTimeInterval(2))
            try verify(store, "Walden", isbn: nil, photo: "d", at: start.addingTimeInterval(3))

            let (first, last, more) = try store.hardcover.changedWorks(after: nil, limit: 2)
            #expect(first.map(\.title) == ["Dune", "Emma"])
            #expect(first.map(\.shelf) == ["den", "den"])
            #expect(more)
            let (rest, end, _) = try store.hardcover.changedWorks(after: last, limit: 2)
            #expect(rest.map(\.title) == ["Walden"], "a work left for review is not pushed")
            #expect(rest.first?.isbn13 == nil)

            let dune = try #require(first.first)
            try store.hardcover.record(
                .init(
                    bookID: dune.bookID, isbn13: "9780441172719", outcome: .added, hardcoverBook: 5,
                    edition: 6, userBook: 7), now: start)
            let emma = try #require(first.last)
            try store.hardcover.record(
                .init(bookID: emma.bookID, isbn13: "9780141439587", outcome: .unknown), now: start)
            #expect(try store.hardcover.changedWorks(after: nil).works.map(\.title) == ["Walden"])
            #expect(
                try store.hardcover.changedWorks(after: nil, retryUnknown: true).works.map(\.title) == [
                    "Emma", "Walden",
                ])
            #expect(try store.hardcover.records().map(\.outcome) == [.added, .unknown])

            // A later photo changes Dune: it comes after the cursor again, and stays skipped for its recorded edition.
            try verify(store, "Dune", isbn: "9780441172719", photo: "e", at: start.addingTimeInterval(10))
            let (later, _, _) = try store.hardcover.changedWorks(after: end)
            #expect(later.isEmpty)
        }
    }
}
