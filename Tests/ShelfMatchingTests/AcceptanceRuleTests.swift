import ShelfCore
@testable import ShelfMatching
import Testing

/// A library's shelf as its catalogue lists it: "Last, First" authors and the call number printed on each spine.
private let library: [CatalogueRecord] = [
    book(1, "Poesía completa", "García Lorca, Federico", tag: "P 834 Gar"),
    book(2, "Despilfarro : el escándalo global de la comida", "Stuart, Tristram", tag: "664 Stu"),
    book(
        3, "Así se manipula al consumidor : cómo las empresas siguen nuestras emociones", "Lindström, Martin",
        tag: "658.8 Lin"),
    book(4, "Portugués", "Caetano Gallego, Ana", tag: "435 Cae"),
    book(5, "Historia de la Edad Media", nil, tag: "9(100) His"),
    book(6, "Caníbales y reyes : los orígenes de la cultura", "Harris, Marvin, 1927-2001", tag: "39 Har"),
    book(7, "Vacas, cerdos, guerras y brujas : los enigmas de la cultura", "Harris, Marvin, 1927-2001", tag: "39 Har"),
    book(8, "Gramática ativa. 2", "Coimbra, Isabel", tag: "435.6 Coi"),
    book(9, "Rimas y Leyendas", "Bécquer, Gustavo Adolfo", tag: "P 834 Bec"),
    book(10, "Poemas", "Poe, Edgar Allan", tag: "P 841B Poe"),
    book(11, "La Caixa negra", "Oz, Amós, 1939-2018", tag: "N Oz"),
]

/// Books that come in several volumes, levels or editions under one author and call number.
private let siblings: [CatalogueRecord] = [
    book(21, "Gramática ativa. 1", "Coimbra, Isabel", tag: "435.6 Coi"),
    book(22, "Gramática ativa. 2", "Coimbra, Isabel", tag: "435.6 Coi"),
    book(
        23, "Business vocabulary in use : self-study and classroom use. Intermediate", "Mascull, Bill", tag: "441.6 Mas"
    ),
    book(24, "Business vocabulary in use : self-study and classroom use. Advanced", "Mascull, Bill", tag: "441.6 Mas"),
    book(25, "India", nil, tag: "91(026)(54) Ind"),
    book(26, "India norte", nil, tag: "91(026)(54) Ind"),
    book(27, "Wok : [cocina asiática para cada día]", nil, tag: "641 Wok"),
    book(28, "Wok vegetariano", nil, tag: "641 Wok"),
    book(29, "Grecia", nil, tag: "91(026)(495) Gre"),
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

    @Test(
        "A one-word title read alone, nothing confirming it, is a question: many books show it",
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
        // The label's class followed by the author's first name, "N Amos", is not another label "N Amo".
        #expect(accepted("N Amos Oz La caixa negra") == "La Caixa negra")
        #expect(decide("N Ama Oz La caixa negra").decision == .review)
    }

    @Test("A sibling volume or level is accepted when the spine shows what tells it apart from the others")
    func siblingsToldApart() {
        #expect(accepted("Gramática Ativa 1 435.6 Coi", among: siblings) == "Gramática ativa. 1")
        #expect(accepted("Isabel Coimbra Gramática Ativa 2 435.6 Coi", among: siblings) == "Gramática ativa. 2")
        #expect(
            accepted("Bill Mascull BUSINESS VOCABULARY IN USE Intermediate 441.6 Mas", among: siblings)
                == "Business vocabulary in use : self-study and classroom use. Intermediate")
        #expect(
            accepted("Bill Mascull BUSINESS VOCABULARY IN USE with ebook Advanced 441.6 Mas", among: siblings)
                == "Business vocabulary in use : self-study and classroom use. Advanced")
        #expect(accepted("lonely planet India Norte 91(026) (54) Ind", among: siblings) == "India norte")
    }

    @Test("A spine that does not say which of two siblings it is, is a question")
    func siblingsNotToldApart() {
        let level = decide("Bill Mascull BUSINESS VOCABULARY IN USE 441.6 Mas", among: siblings)
        #expect(level.best?.record.author == "Mascull, Bill")
        #expect(level.decision == .review)
        // Author and call number, no title: either of Harris's two books.
        let author = decide("Marvin Harris 39 Har")
        #expect(author.best?.record.author == "Harris, Marvin, 1927-2001")
        #expect(author.decision == .review)
    }

    @Test("A sibling volume whose number contradicts the spine is not accepted")
    func volumeNumberContradicts() {
        let otherVolume = siblings.filter { $0.title != "Gramática ativa. 1" }
        let result = decide("Gramática Ativa 1 435.6 Coi", among: otherVolume)
        #expect(result.best?.record.title == "Gramática ativa. 2")
        #expect(result.evidence?.numberDisagrees == true)
        #expect(result.decision == .review)
    }

    @Test("A call number with a scrap of title is one piece of evidence: a whole ordinary word is needed")
    func callNumberAndScrapOfTitle() {
        // "Wok" is the title's only word and the label's letters: either Wok book could show it.
        let scrap = decide("641 Wok Wok", among: siblings)
        #expect(scrap.best?.record.tag == "641 Wok")
        #expect(scrap.decision == .review)
        #expect(accepted("lonely planet Grecia 91(026) (495) Gre", among: siblings) == "Grecia")
    }

    @Test("The rule itself: each way of accepting needs what it says")
    func ruleByEvidence() {
        let rule = AcceptanceRule.standard
        let confirmed = MatchEvidence(
            score: 0.7, lead: 0.3, title: 0.6, titleMass: 1.2, author: 1, tag: 0,
            explained: 0.8)
        #expect(rule.accepts(confirmed))
        #expect(!rule.accepts(confirmed.with { $0.author = 0.5 }))
        #expect(
            !rule.accepts(
                confirmed.with {
                    $0.lead = 0.03; $0.distinctLead = 0.03
                }))
        var noTitle = confirmed.with {
            $0.title = 0; $0.titleMass = 0
        }
        #expect(!rule.accepts(noTitle))
        noTitle.tag = 1; noTitle.explained = 0.95
        #expect(rule.accepts(noTitle))
        // With no title read, surname and label need a clear lead over the author's other books.
        #expect(
            !rule.accepts(
                noTitle.with {
                    $0.lead = 0.07; $0.distinctLead = 0.07
                }))
        let titleAlone = MatchEvidence(
            score: 0.6, lead: 0.35, title: 1, titleMass: 3, author: 0, tag: 0,
            explained: 0.9)
        #expect(rule.accepts(titleAlone))
        // A title alone weighs at least one ordinary word: a rare word does, a short or common one does not.
        var shortTitle = titleAlone.with {
            $0.titleMass = 1; $0.titleInformation = 0.65
        }
        #expect(rule.accepts(shortTitle))
        shortTitle.titleInformation = 0.45
        #expect(!rule.accepts(shortTitle))
        #expect(
            !rule.accepts(
                titleAlone.with {
                    $0.lead = 0.15; $0.distinctLead = 0.15
                }))
        #expect(!rule.accepts(confirmed.with { $0.callNumberDisagrees = true }))
        #expect(!rule.accepts(confirmed.with { $0.numberDisagrees = true }))
        // A sibling close behind that the text tells apart is no rival; one it does not tell apart is.
        var sibling = confirmed.with {
            $0.lead = 0.02; $0.distinctLead = 0.4
        }
        #expect(rule.accepts(sibling))
        sibling.distinctLead = 0.02
        #expect(!rule.accepts(sibling))
        // The call number alone confirms a title read of one ordinary word, not a scrap of one.
        let labelled = MatchEvidence(score: 0.7, lead: 0.3, title: 1, titleMass: 1, author: 0, tag: 1, explained: 1)
        #expect(rule.accepts(labelled))
        var scrap = labelled.with {
            $0.titleMass = 0.6; $0.titleInformation = 0.3
        }
        #expect(!rule.accepts(scrap))
        scrap.author = 1
        #expect(rule.accepts(scrap))
    }
}

extension MatchEvidence {
    /// This evidence with one thing changed.
    fileprivate func with(_ change: (inout MatchEvidence) -> Void) -> MatchEvidence {
        var changed = self
        change(&changed)
        return changed
    }
}
