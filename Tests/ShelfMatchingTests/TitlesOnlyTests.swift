import ShelfCore
@testable import ShelfMatching
import Testing

/// A person's list as people keep it, titles without authors, among a catalogue that has authors.
private let list: [CatalogueRecord] = [
    book(1, "Prisoners of Geography: Ten Maps That Explain Everything About the World", nil),
    book(2, "Linear Algebra", nil),
    book(3, "Poems", nil),
    book(4, "Transformer: The Deep Chemistry of Life and Death", nil),
    book(5, "Sapiens: A Brief History of Humankind", "Yuval Noah Harari"),
    book(6, "Introduction to Linear Algebra", "Strang, Gilbert"),
    book(7, "Álgebra : definiciones, teoremas y resultados", "Aguado, Juan"),
    book(8, "Los Diez grandes inventos de la evolución", "Lane, Nick"),
    book(9, "Geografía de España", "Terán, Manuel de"),
]

/// How many of a library's 15,000 entries hold each word: "linear" and "algebra" fill its maths shelves, the
/// others are rare.
private let rarity = WordRarity(
    entries: 15_000,
    holding: [
        "linear": 300, "algebra": 450, "poems": 900, "prisoners": 1, "geography": 2, "transformer": 1, "sapiens": 2,
        "introduction": 700, "to": 3_000, "of": 6_000, "the": 8_000, "de": 9_000, "neuromancer": 2, "william": 40,
    ])

private func book(_ id: Int, _ title: String, _ author: String?, isbn: String? = nil) -> CatalogueRecord {
    CatalogueRecord(source: "catalogue", key: "catalogue:\(id)", title: title, author: author, isbn13: isbn)
}

private func decide(_ text: String, among records: [CatalogueRecord] = list) -> MatchResult {
    SpineMatcher().decide(SpineQuery(text: text), among: records, rarity: rarity)
}

@Suite struct TitlesOnlyTests {
    @Test(
        "A long title read with its author and publisher is accepted against a record that has no author",
        arguments: [
            "Prisoners of Geography Tim Marshall", "PRISONERS of GEOGRAPHY Tim Marshall SCRIBNER",
            "Prisoners of Geography",
        ])
    func longTitleWithName(_ text: String) {
        let result = decide(text)
        #expect(result.decision == .accepted, "\(result.evidence.map { "\($0)" } ?? "")")
        #expect(result.best?.record.key == "catalogue:1")
    }

    @Test("A model's reading, title and author apart, is accepted against a record that has no author")
    func modelsReading() {
        let reading = SpineQuery(title: "Prisoners of Geography", author: "Tim Marshall")
        let result = SpineMatcher().decide(reading, among: list, rarity: rarity)
        #expect(result.best?.record.key == "catalogue:1")
        #expect(result.decision == .accepted)
    }

    @Test("The author's name beside a title does not lower a record that has no author")
    func nameIsNoEvidenceAgainstAuthorless() {
        let alone = decide("Prisoners of Geography").best?.score ?? 0
        let withName = decide("PRISONERS of GEOGRAPHY Tim Marshall SCRIBNER").best?.score ?? 0
        #expect(withName >= alone)
    }

    @Test("A first name on the spine is the author's, though another book is called by it: it lowers nothing")
    func firstNameThatIsAlsoATitle() {
        let records = [
            book(10, "Neuromancer", nil), book(11, "William", "Crompton, Richmal"),
            book(12, "Pattern Recognition", "Gibson, William"),
        ]
        let named = decide("Neuromancer William Gibson", among: records).best
        let surname = decide("Neuromancer Gibson", among: records).best
        #expect(named?.record.key == "catalogue:10")
        #expect(named?.score == surname?.score)
    }

    @Test("A title of one rare word read whole, nothing near it, is accepted without its author")
    func rareWordAlone() {
        let result = decide("TRANSFORMER NICK LANE P")
        #expect(result.best?.record.key == "catalogue:4")
        #expect(result.decision == .accepted)
    }

    @Test(
        "A short title of common words, read alone, is a question: many books show it",
        arguments: ["LINEAR ALGEBRA Curtis", "POEMS"])
    func commonTitleAlone(_ text: String) {
        let result = decide(text)
        #expect(result.decision == .review)
    }

    @Test("A short common title is accepted when its author confirms it")
    func commonTitleWithAuthor() {
        let result = decide("Gilbert Strang Introduction to Linear Algebra")
        #expect(result.best?.record.key == "catalogue:6")
        #expect(result.decision == .accepted)
    }

    @Test("Another author's name beside a record's title is evidence against a record that has an author")
    func anotherAuthorsName() {
        let result = decide("SAPIENS RICHARD DAWKINS")
        #expect(result.best?.record.key == "catalogue:5")
        #expect(result.decision == .review)
        // The same title in a list of titles: the name is what any spine carries.
        let listed = [book(5, "Sapiens", nil)] + list.filter { $0.key != "catalogue:5" }
        #expect(decide("SAPIENS RICHARD DAWKINS", among: listed).decision == .accepted)
    }

    @Test("Two editions of one work are one answer: the edition whose words the spine shows, the other named")
    func editionsOfOneWork() {
        let editions = [
            book(31, "Homo deus : breve historia del mañana", "Harari, Yuval N.", isbn: "9788499926711"),
            book(32, "Homo Deus: A Brief History of Tomorrow", nil, isbn: "9781784703936"),
            book(33, "Breve historia del mundo", "Gombrich, Ernst H."),
        ]
        let result = decide("Yuval Noah Harari Homo Deus A Brief History of Tomorrow VINTAGE", among: editions)
        #expect(result.decision == .accepted)
        #expect(result.best?.record.key == "catalogue:32")
        #expect(result.otherEditions.map(\.record.key) == ["catalogue:31"])
        // A translation spells its one word nearly alike: still one work.
        let translated = [
            book(41, "Superinteligencia : caminos, peligros, estrategias", "Bostrom, Nick", isbn: "9788416511051"),
            book(42, "Superintelligence: Paths, Dangers, Strategies", nil),
        ]
        let read = decide("BOSTROM SUPERINTELLIGENCE OXFORD", among: translated)
        #expect(read.best?.record.key == "catalogue:42")
        #expect(read.decision == .accepted)
    }

    @Test("Volumes of one title are not editions of one another")
    func volumesAreNotEditions() {
        let volumes = [
            book(51, "Historia de España. Vol. II, La Edad Media", "Valdeón, Julio"),
            book(52, "Historia de España. Vol. I, La Prehistoria", "Valdeón, Julio"),
        ]
        let result = decide("Valdeón Historia de España", among: volumes)
        #expect(result.decision == .review)
        #expect(result.otherEditions.isEmpty)
    }

    @Test("Rarity: a rare word says more than a common one, and nothing known counts every word one in a thousand")
    func rarityFactors() {
        let word = { (text: String) in Word(text) }
        #expect(WordRarity.unknown.factor(of: word("transformer")) == 0.5)
        #expect(rarity.factor(of: word("transformer")) > 0.6)
        #expect(rarity.factor(of: word("algebra")) < rarity.factor(of: word("geography")))
        #expect(rarity.factor(of: word("the")) < 0.1)
        // A list of a few hundred titles says little of how rare its words are: about as much as nothing.
        let small = WordRarity(entries: 300, holding: ["dune": 1])
        #expect(abs(small.factor(of: word("dune")) - WordRarity.unknown.factor(of: word("dune"))) < 0.05)
    }
}
