import Foundation
import ShelfCore
@testable import ShelfMatching
import ShelfStore
import ShelfTesting
import Testing
@testable import ShelfEnrichment

@Suite struct CatalogueSourceTests {
    /// 121 entries holding "historia", one of them "roma".
    static let histories =
        (1...120).map { CatalogueRow(title: "Historia \($0)", author: "Autor\($0)") }
        + [CatalogueRow(title: "Historia de Roma", author: "Beard, Mary")]

    /// A store holding `rows`, and the catalogue source on it.
    private func withCatalogue(_ rows: [CatalogueRow], _ body: (CatalogueSource) async throws -> Void) async throws {
        try await withTemporaryDirectory { folder in
            let store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
            _ = try store.catalogue.addRows(rows, importID: nil)
            try await body(try CatalogueSource(catalogue: store.catalogue))
        }
    }

    @Test("Candidates come from any word of the spine: title, author or call number, accents and case ignored")
    func candidatesFromAnyWord() async throws {
        let rows = [
            CatalogueRow(title: "Las Pseudociencias : ¡vaya timo!", author: "Bunge, Mario", tag: "001 Bun"),
            CatalogueRow(title: "Dune", author: "Frank Herbert", isbn: ISBN("0441172717")),
            CatalogueRow(title: "Emma", author: "Jane Austen"),
        ]
        try await withCatalogue(rows) { source in
            #expect(source.name == "catalogue")
            #expect(
                try await source.candidates(for: SpineQuery(text: "PSEUDOCIENCIAS"), limit: 5).first?.author
                    == "Bunge, Mario")
            #expect(try await source.candidates(for: SpineQuery(text: "bünge"), limit: 5).first?.tag == "001 Bun")
            let byAuthor = try await source.candidates(
                for: SpineQuery(title: "Something else", author: "Austen"), limit: 5)
            #expect(byAuthor.map(\.title) == ["Emma"])
            #expect(try await source.candidates(for: SpineQuery(text: "zzz \"OR\" NEAR( *"), limit: 5).isEmpty)
            let dune = try #require(try await source.candidates(for: SpineQuery(text: "dune"), limit: 5).first)
            #expect(dune.source == "catalogue" && dune.key.hasPrefix("catalogue:") && dune.isbn13 == "9780441172719")
        }
    }

    @Test("An ISBN names its record, which comes first among the candidates of a spine carrying it")
    func isbnLookup() async throws {
        let rows = [
            CatalogueRow(title: "Dune", author: "Frank Herbert", isbn: ISBN("0441172717")),
            CatalogueRow(title: "Dune Messiah", author: "Frank Herbert"),
        ]
        try await withCatalogue(rows) { source in
            #expect(try await source.record(isbn: ISBN("9780441172719")!)?.title == "Dune")
            #expect(try await source.record(isbn: ISBN("9780060853983")!) == nil)
            let query = SpineQuery(title: "Messiah", author: nil, isbn: ISBN("0441172717"))
            let found = try await source.candidates(for: query, limit: 5)
            #expect(found.map(\.title) == ["Dune", "Dune Messiah"])
        }
    }

    @Test("A word in most entries is not searched for, unless the spine shows nothing else")
    func commonWordsLeftOut() async throws {
        try await withCatalogue(Self.histories) { source in
            #expect(source.ftsQuery("HISTORIA ROMA") == "\"roma\"")
            #expect(source.ftsQuery("HISTORIA") == "\"historia\"")
            let found = try await source.candidates(for: SpineQuery(text: "HISTORIA"), limit: 3)
            #expect(found.count == 3)
        }
    }

    @Test("A run read without spaces, with a spine's bars read as letters around it, finds the book inside it")
    func gluedWordsAreSearchedForInside() async throws {
        let rows = [
            CatalogueRow(title: "Rockonomics", author: "Krueger, Alan B."),
            CatalogueRow(title: "Economics", author: "Samuelson, Paul"),
            CatalogueRow(title: "Superintelligence", author: "Bostrom, Nick"),
        ]
        try await withCatalogue(rows) { source in
            #expect(
                try source.gluedPieces(of: ["irockonomicsialan", "b", "kruegerisi"]) == ["rockonomics", "krueger"])
            // A long word the index holds is searched for as it is.
            #expect(try source.gluedPieces(of: ["superintelligence"]).isEmpty)
            let found = try await source.candidates(
                for: SpineQuery(text: "IROCKONOMICSIALAN B.KRUEGERISI"), limit: 5)
            #expect(found.first?.title == "Rockonomics")

            let enricher = Enricher(sources: [source], reviewThreshold: 0.6)
            let book = try #require(
                await enricher.enrich([spine("IROCKONOMICSIALAN B.KRUEGERISI", confidence: 0.99)]).books.first)
            #expect(book.title == "Rockonomics" && book.match != nil, "\(book)")
        }
    }

    @Test("Rarity: a word in many entries weighs less than one in one entry, and a word in none is counted as such")
    func wordRarity() async throws {
        try await withCatalogue(Self.histories) { source in
            let records = try await source.candidates(for: SpineQuery(text: "HISTORIA ROMA"), limit: 5)
            let rarity = try #require(await source.rarity(of: WordRarity.words(of: records).union(["zzyzx"])))
            #expect(rarity.entries == 121)
            #expect(rarity.factor(of: Word("historia")) < rarity.factor(of: Word("roma")))
            #expect(rarity.factor(of: Word("zzyzx")) >= rarity.factor(of: Word("roma")))
            // Asked again, the counts come from memory and are the same.
            let again = try source.countWords(["historia", "roma"])
            #expect(again.factor(of: Word("historia")) == rarity.factor(of: Word("historia")))
        }
    }
}
