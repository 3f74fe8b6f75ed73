import ShelfCore
import ShelfMatching
import Testing

@testable import ShelfEnrichment

/// A list of titles names no authors; another source knows them. A book matched to such an entry takes the author
/// of that source's record of the same work, when the spine shows it, and keeps the entry as its match.
@Suite struct ListAuthorTests {
    let entry = CatalogueRecord(
        source: "catalogue", key: "catalogue:7", title: "The Left Hand of Darkness", author: nil)
    let leGuin = CatalogueRecord(
        source: "openlibrary", key: "/works/OL59800W", title: "The Left Hand of Darkness",
        author: "Ursula K. Le Guin", isbn13: "9780441478125", year: 1969)
    /// Another book of the same title.
    let namesake = CatalogueRecord(
        source: "openlibrary", key: "/works/OL1W", title: "The Left Hand of Darkness", author: "Ann Other")

    @Test("An entry without an author takes the author another source knows and the spine shows")
    func authorFromAnotherSource() async throws {
        let openLibrary = ListSource("openlibrary", [namesake, leGuin])
        let enricher = Enricher(sources: [ListSource("catalogue", [entry]), openLibrary], reviewThreshold: 0.6)
        let outcome = await enricher.enrich([spine("The Left Hand of Darkness Ursula K. Le Guin", confidence: 0.9)])
        let book = try #require(outcome.books.first)
        #expect(book.status == .verified && book.match?.key == "catalogue:7", "the list's entry stays the match")
        #expect(book.author == "Ursula K. Le Guin")
        #expect(book.notes?.contains("author_from: openlibrary") == true)
        #expect(book.isbn13 == nil, "which edition it is, the spine does not say")
        #expect(openLibrary.askedCount == 1)
    }

    @Test("A spine that shows no author, or another one, leaves the entry's author unknown")
    func noAuthorWithoutTheSpinesWord() async throws {
        let enricher = Enricher(
            sources: [ListSource("catalogue", [entry]), ListSource("openlibrary", [leGuin])], reviewThreshold: 0.6)
        for text in ["The Left Hand of Darkness Ace", "The Left Hand of Darkness Ann Other"] {
            let book = try #require(await enricher.enrich([spine(text, confidence: 0.9)]).books.first)
            #expect(book.match?.key == "catalogue:7" && book.author == nil, "\(text)")
            #expect(book.notes?.contains { $0.hasPrefix("author_from") } != true)
        }
    }

    @Test("An entry with its author, or a reading that names one, is not asked about again")
    func noLookupWhenTheAuthorIsKnown() async throws {
        let openLibrary = ListSource("openlibrary", [leGuin])
        let withAuthor = CatalogueRecord(
            source: "catalogue", key: "catalogue:8", title: "The Left Hand of Darkness", author: "Le Guin, Ursula K.")
        let listed = Enricher(sources: [ListSource("catalogue", [withAuthor]), openLibrary], reviewThreshold: 0.6)
        let book = try #require(await listed.enrich([spine("The Left Hand of Darkness Le Guin")]).books.first)
        #expect(book.author == "Le Guin, Ursula K." && book.match?.key == "catalogue:8")

        let titles = Enricher(sources: [ListSource("catalogue", [entry]), openLibrary], reviewThreshold: 0.6)
        let read = Book(
            title: "The Left Hand of Darkness", author: "Ursula Le Guin", isbn13: nil, isbn10: nil, confidence: 0.9,
            box: nil, status: .verified, source: "gemini")
        let model = try #require(await titles.enrich([read]).books.first)
        #expect(model.author == "Ursula Le Guin" && model.match?.key == "catalogue:7", "the model's reading stays")
        #expect(openLibrary.askedCount == 0)
    }

    @Test("A source that is down leaves the author unknown and says so; the entry still matches")
    func sourceDown() async throws {
        let enricher = Enricher(
            sources: [
                ListSource("catalogue", [entry]),
                ListSource("openlibrary", [leGuin], failing: .unavailable("connection refused")),
            ], reviewThreshold: 0.6)
        let outcome = await enricher.enrich([spine("The Left Hand of Darkness Ursula K. Le Guin", confidence: 0.9)])
        let book = try #require(outcome.books.first)
        #expect(book.status == .verified && book.match?.key == "catalogue:7" && book.author == nil)
        #expect(outcome.notes.contains { $0.hasPrefix("enrichment_unavailable: openlibrary") })
    }
}
