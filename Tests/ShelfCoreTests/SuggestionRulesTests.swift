import ShelfCore
import Testing

@Suite struct SuggestionRulesTests {
    private func book(_ title: String, _ author: String?, _ confidence: Double) -> Detection {
        Detection(title: title, author: author, confidence: confidence)
    }

    @Test func twoBooksWithoutAuthorOrTitleAreUnreadable() {
        let answer = ModelAnswer(
            books: [book("Dune", nil, 0.9), book("Emma", "Jane Austen", 0.9)],
            notes: ["book_without_title_dropped: #3"])
        #expect(SuggestionRules.fallback(for: answer).map(\.type) == [.unreadableBooks])
        let one = ModelAnswer(books: [book("Dune", nil, 0.9), book("Emma", "Jane Austen", 0.9)])
        #expect(SuggestionRules.fallback(for: one).isEmpty)
    }

    @Test func spineTextsWithoutAnAuthorToldApartAreReadInFull() {
        let spines = ModelAnswer(
            books: ["DUNE FRANK HERBERT", "EMMA AUSTEN", "THE HOBBIT TOLKIEN"].map {
                Detection(title: $0, author: nil, confidence: 0.9, form: .spineText)
            })
        #expect(SuggestionRules.fallback(for: spines).isEmpty)
        let blank = ModelAnswer(books: [
            Detection(title: "", author: nil, confidence: 0.9, form: .spineText),
            Detection(title: "", author: nil, confidence: 0.9, form: .spineText),
        ])
        #expect(SuggestionRules.fallback(for: blank).map(\.type) == [.unreadableBooks])
    }

    @Test func threeUncertainReadableBooksAreLowConfidence() {
        let answer = ModelAnswer(books: [
            book("A", "X", 0.65), book("B", "Y", 0.5), book("C", "Z", 0.69), book("D", "W", 0.95),
        ])
        let suggestions = SuggestionRules.fallback(for: answer)
        #expect(suggestions.map(\.type) == [.lowConfidence])
        #expect(suggestions[0].message.hasPrefix("3 books"))
    }

    @Test func aDimMeanWithNothingElseToBlameIsTheLight() {
        let answer = ModelAnswer(books: [book("A", "X", 0.5), book("B", "Y", 0.55)])
        #expect(SuggestionRules.fallback(for: answer).map(\.type) == [.lightingIssues])
        // Unreadable books explain a low mean already: no lighting advice on top.
        let unreadable = ModelAnswer(books: [book("A", nil, 0.3), book("B", nil, 0.3)])
        #expect(SuggestionRules.fallback(for: unreadable).map(\.type) == [.unreadableBooks])
        #expect(SuggestionRules.fallback(for: ModelAnswer(books: [])).isEmpty)
    }

    @Test func theModelsAdviceComesFirstAndRulesOnlyWhenItGaveNone() {
        let dim = ModelAnswer(books: [book("A", "X", 0.5), book("B", "Y", 0.55)])
        let model = [Suggestion(type: .glareDetected, severity: .warning, message: "Glare on the left.")]
        let blur = Suggestion(type: .blurryImage, severity: .warning, message: "Blurred.")
        let glare = Suggestion(type: .glareDetected, severity: .warning, message: "Measured glare.")
        #expect(
            SuggestionRules.combine(model: model, measured: [glare, blur], answer: dim).map(\.message)
                == ["Glare on the left.", "Blurred."])
        #expect(
            SuggestionRules.combine(model: [], measured: [blur], answer: dim).map(\.type) == [
                .blurryImage, .lightingIssues,
            ])
    }
}
