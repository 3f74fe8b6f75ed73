import ShelfCore
import Testing
@testable import ShelfEnrichment

/// A library's shelf as its catalogue lists it: "Last, First" authors and the call number printed on each spine.
private let library: [CatalogueRecord] = [
    book(1, "Poesía completa", "García Lorca, Federico", tag: "P 834 Gar"),
    book(2, "Despilfarro : el escándalo global de la comida", "Stuart, Tristram", tag: "664 Stu"),
    book(3, "Así se manipula al consumidor : cómo las empresas siguen nuestras emociones", "Lindström, Martin",
         tag: "658.8 Lin"),
    book(4, "Portugués", "Caetano Gallego, Ana", tag: "435 Cae"),
    book(5, "Historia de la Edad Media", nil, tag: "9(100) His"),
    book(6, "Caníbales y reyes : los orígenes de la cultura", "Harris, Marvin, 1927-2001", tag: "39 Har"),
    book(7, "Vacas, cerdos, guerras y brujas : los enigmas de la cultura", "Harris, Marvin, 1927-2001", tag: "39 Har"),
    book(8, "Gramática ativa. 2", "Coimbra, Isabel", tag: "435.6 Coi"),
    book(9, "Rimas y Leyendas", "Bécquer, Gustavo Adolfo", tag: "P 834 Bec"),
    book(10, "Poemas", "Poe, Edgar Allan", tag: "P 841B Poe"),
]

private func book(_ id: Int, _ title: String, _ author: String?, tag: String) -> CatalogueRecord {
    CatalogueRecord(source: "catalogue", key: "catalogue:\(id)", title: title, author: author, tag: tag)
}

private func decide(_ text: String, among records: [CatalogueRecord] = library) -> MatchResult {
    SpineMatcher().decide(SpineQuery(text: text), among: records)
}

/// The title the matcher accepted, or nil when it asks.
private func accepted(_ text: String, among records: [CatalogueRecord] = library) -> String? {
    let result = decide(text, among: records)
    return result.decision == .accepted ? result.best?.record.title : nil
}

@Suite struct AcceptanceRuleTests {
    @Test("A spine whose author's surname and call number agree is accepted")
    func surnameAgrees() {
        #expect(accepted("Federico García Lorca Poesía completa P 834 Gar") == "Poesía completa")
        #expect(accepted("GARCÍA LORCA POESÍA COMPLETA") == "Poesía completa")
        #expect(accepted("Harris Caníbales y reyes 39 Har") == "Caníbales y reyes : los orígenes de la cultura")
    }

    @Test("The same title by another author, with that author's call number, is not accepted")
    func sameTitleAnotherAuthor() {
        let result = decide("Antonio Machado Poesía completa P 834 Mac")
        #expect(result.best?.record.title == "Poesía completa")
        #expect(result.decision == .review)
    }

    @Test("A one-word title read alone, nothing confirming it, is a question: many books show it",
          arguments: ["PORTUGUÉS LIBRO DEL ALUMNO 435 Sab", "PORTUGUÉS MÉTODO EXPRESS LAROUSSE"])
    func shortTitleAlone(_ text: String) {
        let result = decide(text)
        #expect(result.best?.record.title == "Portugués")
        #expect(result.decision == .review)
    }

    @Test("A title of several words read whole and clearly ahead is accepted without author or call number")
    func longTitleAlone() {
        #expect(accepted("HISTORIA DE LA EDAD MEDIA") == "Historia de la Edad Media")
    }

    @Test("Surname and call number together accept a damaged title, when the record explains the rest of the text")
    func confirmedTwice() {
        #expect(accepted("Tristram Stuart 664 Stu") == "Despilfarro : el escándalo global de la comida")
        // Another book by an author the catalogue holds: its title is unexplained text, so it is a question.
        let other = decide("buyology MARTIN LINDSTROM 658.8 Lin")
        #expect(other.best?.record.author == "Lindström, Martin")
        #expect(other.decision == .review)
    }

    @Test("A spine labelled with another book's call number is not the record, whatever else agrees")
    func callNumberOfAnotherBook() {
        #expect(accepted("Isabel Coimbra Gramática Ativa 2 435.6 Coi") == "Gramática ativa. 2")
        let other = decide("Isabel Coimbra Olga Mata Gramática Ativa 2 435.6 Lei")
        #expect(other.best?.record.title == "Gramática ativa. 2")
        #expect(other.decision == .review)
        // One letter off is the OCR's misreading of the same label.
        #expect(accepted("BÉCQUER Rimas y Leyendas P 834 Bed") == "Rimas y Leyendas")
        // The author's letters after another class: another poet's "Poemas" shelved under 834.
        #expect(accepted("Edgar Allan Poe Poemas P 841B Poe") == "Poemas")
        #expect(accepted("Edgar Allan Poe Poemas P 841 Poe") == "Poemas")
        #expect(decide("Poemas P 834 Poe").decision == .review)
    }

    @Test("The rule itself: each way of accepting needs what it says")
    func ruleByEvidence() {
        let rule = AcceptanceRule.standard
        let confirmed = MatchEvidence(score: 0.7, lead: 0.3, title: 0.6, titleMass: 1.2, author: 1, tag: 0,
                                      explained: 0.8)
        #expect(rule.accepts(confirmed))
        var unconfirmed = confirmed
        unconfirmed.author = 0.5
        #expect(!rule.accepts(unconfirmed))
        var close = confirmed
        close.lead = 0.05
        #expect(!rule.accepts(close))
        var noTitle = confirmed
        noTitle.title = 0; noTitle.titleMass = 0
        #expect(!rule.accepts(noTitle))
        noTitle.tag = 1; noTitle.explained = 0.95
        #expect(rule.accepts(noTitle))
        let titleAlone = MatchEvidence(score: 0.6, lead: 0.35, title: 1, titleMass: 3, author: 0, tag: 0,
                                       explained: 0.9)
        #expect(rule.accepts(titleAlone))
        var shortTitle = titleAlone
        shortTitle.titleMass = 1
        #expect(!rule.accepts(shortTitle))
        var narrowLead = titleAlone
        narrowLead.lead = 0.15
        #expect(!rule.accepts(narrowLead))
        var anotherLabel = confirmed
        anotherLabel.callNumberDisagrees = true
        #expect(!rule.accepts(anotherLabel))
    }
}
