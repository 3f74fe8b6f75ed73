import ShelfCore
@testable import ShelfMatching
import Testing

@Suite struct SpineQueryTests {
    @Test func aStructuredReadingIsAlsoText() {
        let query = SpineQuery(title: "Dune", author: "Frank Herbert")
        #expect(query.text == "Dune Frank Herbert")
        #expect(SpineQuery(title: "Dune", author: nil).text == "Dune")
    }
}
