import ShelfCore
@testable import ShelfMatching
import Testing

/// A small catalogue of hand-made hard cases: near-identical titles, series, one-word and generic titles.
private let shelf: [CatalogueRecord] = [
    book(1, "Dune", "Herbert, Frank", isbn: "9780441172719", year: 1965),
    book(2, "Dune Messiah", "Herbert, Frank", year: 1969),
    book(3, "Children of Dune", "Frank Herbert", year: 1976),
    book(4, "The Hobbit, or There and Back Again", "J. R. R. Tolkien", year: 1937),
    book(5, "The Fellowship of the Ring (The Lord of the Rings, #1)", "J. R. R. Tolkien"),
    book(6, "The Two Towers (The Lord of the Rings, #2)", "J. R. R. Tolkien"),
    book(7, "Harry Potter and the Philosopher's Stone (Harry Potter, #1)", "J. K. Rowling"),
    book(8, "Harry Potter and the Chamber of Secrets (Harry Potter, #2)", "J. K. Rowling"),
    book(9, "Harry Potter and the Prisoner of Azkaban (Harry Potter, #3)", "J. K. Rowling"),
    book(10, "Sapiens: A Brief History of Humankind", "Yuval Noah Harari"),
    book(11, "A Modern Utopia", "H. G. Wells"),
    book(12, "Emma", "Jane Austen"),
    book(13, "Emma", "Alexander McCall Smith"),
    book(14, "Poems", "Emily Dickinson"),
    book(15, "Collected Stories", "Gabriel García Márquez"),
    book(16, "Pattern Recognition", "William Gibson"),
    book(17, "Historia de España. Vol. II, La Edad Media", "Valdeón, Julio", tag: "946 His"),
    book(18, "Historia de España. Vol. I, La Prehistoria", "Valdeón, Julio", tag: "946 His"),
    book(19, "Caníbales y reyes : los orígenes de la cultura", "Harris, Marvin, 1927-2001", tag: "39 Har"),
    book(20, "Vacas, cerdos, guerras y brujas : los enigmas de la cultura", "Harris, Marvin, 1927-2001", tag: "39 Har"),
]

private func book(
    _ id: Int, _ title: String, _ author: String?, isbn: String? = nil, year: Int? = nil,
    tag: String? = nil
) -> CatalogueRecord {
    CatalogueRecord(
        source: "catalogue", key: "catalogue:\(id)", title: title, author: author, isbn13: isbn, year: year, tag: tag)
}

private func decide(_ text: String) -> MatchResult { SpineMatcher().decide(SpineQuery(text: text), among: shelf) }

/// The title the matcher accepted, or nil when it did not accept one.
private func accepted(_ text: String) -> String? {
    let result = decide(text)
    return result.decision == .accepted ? result.best?.record.title : nil
}

@Suite struct SpineMatcherTests {
    @Test(
        "Hard readings are the right book: words out of order, OCR confusions (0/O, 1/l, rn/m, l/I), no subtitle, series markers",
        arguments: [
            ("HERBERT FRANK DUNE", "Dune"),
            ("hobbit the tolkien", "The Hobbit, or There and Back Again"),
            ("THE H0BBIT TOLKIEN", "The Hobbit, or There and Back Again"),
            (
                "Harry Potter and the Phi1osopher's Stone ROWLING",
                "Harry Potter and the Philosopher's Stone (Harry Potter, #1)"
            ),
            ("A RNODERN UTOPIA H.G. WELLS", "A Modern Utopia"),
            ("SAPlENS HARARl", "Sapiens: A Brief History of Humankind"),
            ("SAPIENS Yuval Noah Harari", "Sapiens: A Brief History of Humankind"),
            ("Tolkien The Hobbit", "The Hobbit, or There and Back Again"),
            (
                "ROWLING HARRY POTTER AND THE CHAMBER OF SECRETS 2",
                "Harry Potter and the Chamber of Secrets (Harry Potter, #2)"
            ),
            (
                "Harry Potter and the Prisoner of Azkaban Book 3 Rowling",
                "Harry Potter and the Prisoner of Azkaban (Harry Potter, #3)"
            ),
            ("THE TWO TOWERS TOLKIEN #2", "The Two Towers (The Lord of the Rings, #2)"),
            ("Valdeón Historia de España Vol. II La Edad Media 946 His", "Historia de España. Vol. II, La Edad Media"),
        ])
    func hardReadings(_ text: String, _ title: String) {
        #expect(accepted(text) == title)
    }

    @Test("A surname alone is a question, with that author's books as candidates")
    func surnameOnly() {
        let result = decide("TOLKIEN")
        #expect(result.decision != .accepted)
        #expect(result.candidates.count == 3)
        #expect(result.candidates.allSatisfy { $0.record.author == "J. R. R. Tolkien" })
    }

    @Test("Two books with the same title: the author decides, and without one it is a question")
    func sameTitleTwoAuthors() {
        #expect(decide("EMMA JANE AUSTEN").best?.record.author == "Jane Austen")
        #expect(accepted("EMMA JANE AUSTEN") == "Emma")
        #expect(decide("EMMA McCALL SMITH").best?.record.author == "Alexander McCall Smith")
        let bare = decide("EMMA")
        #expect(bare.decision == .review)
        #expect(bare.candidates.prefix(2).map(\.record.key).sorted() == ["catalogue:12", "catalogue:13"])
    }

    @Test("A short generic title needs its author", arguments: ["POEMS", "Collected Stories"])
    func genericTitleNeedsAuthor(_ text: String) {
        #expect(decide(text).decision != .accepted)
        #expect(SpineMatcher().decide(SpineQuery(title: text, author: nil), among: shelf).decision != .accepted)
    }

    @Test("A short generic title with its author is accepted")
    func genericTitleWithAuthor() {
        #expect(accepted("POEMS EMILY DICKINSON") == "Poems")
        #expect(accepted("García Márquez Collected Stories") == "Collected Stories")
    }

    @Test(
        "A book that is not in the catalogue is not accepted, even by a known author",
        arguments: [
            "NEUROMANCER WILLIAM GIBSON", "Dune: House Atreides Brian Herbert Kevin J. Anderson",
            "THE SILMARILLION TOLKIEN", "El Origen de la cultura 39 Har Harris",
        ])
    func notInCatalogue(_ text: String) {
        #expect(decide(text).decision != .accepted)
    }

    @Test("A call number read on the spine counts, but does not decide alone")
    func callNumber() {
        #expect(accepted("39 Har HARRIS Caníbales y reyes") == "Caníbales y reyes : los orígenes de la cultura")
        let tagOnly = decide("Harris 39 Har")
        #expect(tagOnly.decision == .review)
        #expect(Set(tagOnly.candidates.prefix(2).map(\.record.key)) == ["catalogue:19", "catalogue:20"])
    }

    @Test("A model's structured reading matches like free text; an ISBN hint adds to a match, never makes one")
    func structuredReading() {
        let matcher = SpineMatcher()
        let reading = SpineQuery(title: "Dune", author: "Frank Herbert")
        #expect(matcher.decide(reading, among: shelf).best?.record.key == "catalogue:1")
        #expect(matcher.decide(reading, among: shelf).decision == .accepted)
        let hinted = SpineQuery(title: "Dune", author: "Frank Herbert", isbn: ISBN("0441172717"))
        #expect(matcher.score(hinted, shelf[0]) > matcher.score(reading, shelf[0]))
        let wrongBook = SpineQuery(title: "Emma", author: "Jane Austen", isbn: ISBN("0441172717"))
        #expect(matcher.decide(wrongBook, among: shelf).best?.record.title == "Emma")
    }

    @Test("Scores stay between 0 and 1, and nothing plausible is no match")
    func scoreRange() {
        let matcher = SpineMatcher()
        for record in shelf {
            for text in ["DUNE HERBERT", "", "x", "Harry Potter Harry Potter Rowling Rowling 2 3 #1"] {
                let score = matcher.score(SpineQuery(text: text), record)
                #expect((0...1).contains(score))
            }
        }
        let nothing = decide("QWXZ KLMN")
        #expect(nothing.decision == .none && nothing.best == nil)
        #expect(SpineMatcher().decide(SpineQuery(text: "DUNE"), among: []).decision == .none)
    }

    @Test("Within one photo, two spines never get the same record")
    func assignmentIsOneToOne() {
        let matcher = SpineMatcher()
        let spines = [SpineQuery(text: "DUNE FRANK HERBERT"), SpineQuery(text: "DUNE HERBERT")]
        // Each alone would take the same record.
        #expect(spines.allSatisfy { matcher.decide($0, among: shelf).best?.record.key == "catalogue:1" })
        let results = matcher.assign(spines, candidates: [shelf, shelf])
        #expect(results[0].best?.record.key == "catalogue:1")
        #expect(results[0].decision == .accepted)
        #expect(results[1].best?.record.key != "catalogue:1")
        #expect(results[1].decision != .accepted)
        #expect(!results[1].candidates.contains { $0.record.key == "catalogue:1" })
    }

    @Test("The assignment gives a contested record to the spine it fits best, whatever the order")
    func assignmentPrefersTheBetterFit() {
        let matcher = SpineMatcher()
        let weak = SpineQuery(text: "EMMA"), strong = SpineQuery(text: "EMMA JANE AUSTEN")
        let results = matcher.assign([weak, strong], candidates: [shelf, shelf])
        #expect(results[1].best?.record.author == "Jane Austen")
        #expect(results[1].decision == .accepted)
        #expect(results[0].best?.record.author == "Alexander McCall Smith")
        #expect(results[0].decision != .accepted)
        #expect(matcher.assign([], candidates: []).isEmpty)
    }

    @Test("The optimal assignment, not a greedy one")
    func assignmentIsOptimal() {
        // Greedy would give row 0 column 0 (0.9) and leave row 1 with 0.1; the best total is 0.8 + 0.85.
        let chosen = Assignment.maximising([[0.9, 0.8], [0.85, 0.1]])
        #expect(chosen == [1, 0])
        #expect(Assignment.maximising([[0, 0], [0.5, 0]]) == [nil, 0])
        #expect(Assignment.maximising([[], []]) == [nil, nil])
    }
}
