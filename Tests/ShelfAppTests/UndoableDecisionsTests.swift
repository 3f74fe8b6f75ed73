import Foundation
import ShelfApp
import ShelfCore
import Testing

@Suite("Decisions kept for undo")
struct UndoableDecisionsTests {
    func decision(_ id: String) -> ReviewUndo {
        let book = Book(
            title: "Qzv \(id)", author: nil, isbn13: nil, isbn10: nil, confidence: 0.2, box: nil,
            status: .needsReview, source: "gemini")
        return ReviewUndo(
            item: ReviewItem(id: id, photo: .init(path: "den/IMG_1.jpg", sha256: "ab"), book: book, createdAt: Date()),
            shelf: "den", work: nil, detail: "rejected")
    }

    @Test("A token gives its decisions back once, within its minute; the oldest go first past the limit")
    func oncePerMinute() {
        let undoable = UndoableDecisions()
        let start = Date()
        let first = undoable.keep([decision("a1"), decision("a2")], now: start)
        let second = undoable.keep([decision("b1")], now: start)
        #expect(undoable.take(first, now: start.addingTimeInterval(30))?.map(\.item.id) == ["a1", "a2"])
        #expect(undoable.take(first, now: start.addingTimeInterval(31)) == nil, "taken once")
        #expect(
            undoable.take(second, now: start.addingTimeInterval(UndoableDecisions.window + 1)) == nil, "past its minute"
        )
        #expect(undoable.take("not-a-token", now: start) == nil)

        let tokens = (0...UndoableDecisions.limit).map {
            undoable.keep([decision("c\($0)")], now: start.addingTimeInterval(Double($0) / 1000))
        }
        #expect(undoable.take(tokens[0], now: start.addingTimeInterval(2)) == nil, "the oldest made room")
        #expect(undoable.take(tokens[1], now: start.addingTimeInterval(2))?.map(\.item.id) == ["c1"])
        #expect(undoable.take(tokens.last!, now: start.addingTimeInterval(2)) != nil)
    }
}
