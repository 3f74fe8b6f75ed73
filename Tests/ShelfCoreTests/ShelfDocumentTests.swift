import Foundation
import ShelfCore
import Testing

@Suite("A shelf's books and a found work as JSON")
struct ShelfDocumentTests {
    private let lent = SeenBook(
        work: "title:dune|herbert", title: "Dune", author: "Frank Herbert",
        lastSeen: Date(timeIntervalSince1970: 1_700_000_000), photo: "den/top/IMG_2.jpg", photoSHA256: "ab12",
        box: Box(x1: 0.1, y1: 0.1, x2: 0.2, y2: 0.9),
        mark: ShelfMark(kind: .lent, shelf: "den/top", since: 1_700_000_500, name: "Sam"))

    private func keys(_ value: some Encodable) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: JSONStyle.encoder().encode(value)) as? [String: Any]
        return Set(try #require(object).keys)
    }

    @Test(
        "`shelf show` and `library find` write a book's facts under the same keys, beside their own, and read them back"
    )
    func sameKeysForTheSameFacts() throws {
        let facts: Set = [
            "work", "title", "author", "last_seen", "photo", "photo_sha256", "box", "lent_to", "lent_since",
        ]
        #expect(try keys(lent) == facts)
        let entry = ShelfDocument.Entry(lent, position: 7)
        #expect(try keys(entry) == facts.union(["position"]))
        let found = BookWhereabouts(lent, shelf: "den/top", position: 7)
        #expect(try keys(found) == facts.union(["shelf", "position"]))
        #expect(try keys(BookWhereabouts(lent, shelf: "", position: nil)) == facts.union(["shelf"]))

        let decoder = JSONStyle.decoder()
        #expect(try decoder.decode(ShelfDocument.Entry.self, from: JSONStyle.encoder().encode(entry)) == entry)
        #expect(try decoder.decode(BookWhereabouts.self, from: JSONStyle.encoder().encode(found)) == found)
        #expect(
            found.lentTo == "Sam" && found.missingSince == nil && found.placeInWords == "7th from the left on den/top")
    }
}
