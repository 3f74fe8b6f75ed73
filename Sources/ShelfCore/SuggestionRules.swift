/// The phone app's advice when a model gives none, and how every kind of advice is combined.
package enum SuggestionRules {
    /// Below it a readable book counts as uncertain for `low_confidence`.
    static let uncertainBelow = 0.7
    /// A mean confidence below it, with nothing else to blame, points at the light.
    static let dimBelow = 0.6

    /// The app's rules, applied to the model's answer: ≥ 2 books without title or author → `unreadable_books`;
    /// ≥ 3 readable books below 0.7 → `low_confidence`; a mean below 0.6 and nothing else → `lighting_issues`.
    package static func fallback(for answer: ModelAnswer) -> [Suggestion] {
        // The parser drops a book without a title and says so in a note: it still counts as unreadable.
        let untitled = answer.notes.filter { $0.hasPrefix("book_without_title_dropped") }.count
        // A spine text (the offline OCR) is the spine's words as a whole, title and author together: read in
        // full when it has any, though no author was told apart.
        let readable = answer.books.filter {
            !$0.title.isEmpty && ($0.form == .spineText || !($0.author ?? "").isEmpty)
        }
        let unreadable = untitled + answer.books.count - readable.count
        let uncertain = readable.filter { $0.confidence < uncertainBelow }.count

        var suggestions: [Suggestion] = []
        if unreadable >= 2 {
            suggestions.append(
                Suggestion(type: .unreadableBooks, severity: .warning, message: unreadableAdvice(unreadable)))
        }
        if uncertain >= 3 {
            suggestions.append(Suggestion(type: .lowConfidence, severity: .info, message: uncertainAdvice(uncertain)))
        }
        if suggestions.isEmpty, !answer.books.isEmpty,
            answer.books.map(\.confidence).reduce(0, +) / Double(answer.books.count) < dimBelow
        {
            suggestions.append(Suggestion(type: .lightingIssues, severity: .warning, message: lightingAdvice))
        }
        return suggestions
    }

    static func unreadableAdvice(_ books: Int) -> String {
        "\(books) books could not be read in full: move closer so the spines fill the photo, or take the shelf in two halves."
    }

    static func uncertainAdvice(_ books: Int) -> String {
        "\(books) books were read with low confidence: hold the phone straight on to the shelf and let it focus before taking the photo."
    }

    static let lightingAdvice =
        "Most spines were hard to read: light the shelf evenly (a room light on, no shadows across the spines)."

    /// The model's advice first; then what the photo's measures show that the model did not already say;
    /// the app's rules only when the model gave no advice at all.
    package static func combine(model: [Suggestion], measured: [Suggestion], answer: ModelAnswer) -> [Suggestion] {
        var combined = model
        let fromAnswer = model.isEmpty ? fallback(for: answer) : []
        for suggestion in measured + fromAnswer where !combined.contains(where: { $0.type == suggestion.type }) {
            combined.append(suggestion)
        }
        return combined
    }
}
