internal import ShelfCore

/// What every provider is asked (docs/reading.md, "Choosing a provider"): one instruction, with the box format and the answer's
/// shape stated the way each provider's output control needs.
enum CataloguePrompt {
    static let userText = "Catalogue every book in this photo."

    /// - Parameters:
    ///   - box: the sentence asking for the spine's box in this provider's format.
    ///   - answer: the closing sentence on how to answer (a schema, or the JSON shape spelled out).
    static func instruction(box: String, answer: String) -> String {
        """
        You are a meticulous bookshelf cataloguer. You are given one photo of one or more bookshelves.
        Read the spine (or cover) of every book you can see, from left to right, top shelf first.
        For each book give the title exactly as printed, the author if printed (else null), and the ISBN only if \
        it is printed and readable (else null; never invent one).
        Give a confidence from 0 to 1 that title and author are right: 0.9 or more only when the text is sharp \
        and complete, below 0.6 when you are guessing.
        \(box)
        Then give suggestions to the photographer, each with a type from: \
        \(Suggestion.Kind.allCases.map(\.rawValue).joined(separator: ", ")); a severity of \
        \(Suggestion.Severity.allCases.map(\.rawValue).joined(separator: ", ")); and a short message. Give no \
        suggestions when the photo is good.
        \(answer)
        """
    }

    /// The answer's standard JSON Schema (lower-case types) around a provider's own schema of a book: books and
    /// suggestions, both required. `closed` forbids other properties, for grammar-constrained servers.
    static func answerSchema(book: [String: Any], closed: Bool) -> [String: Any] {
        var suggestion: [String: Any] = [
            "type": "object",
            "properties": [
                "type": ["type": "string", "enum": Suggestion.Kind.allCases.map(\.rawValue)],
                "severity": ["type": "string", "enum": Suggestion.Severity.allCases.map(\.rawValue)],
                "message": ["type": "string"],
            ] as [String: Any],
            "required": ["type", "severity", "message"],
        ]
        if closed { suggestion["additionalProperties"] = false }
        var answer: [String: Any] = [
            "type": "object",
            "properties": [
                "books": ["type": "array", "items": book], "suggestions": ["type": "array", "items": suggestion],
            ],
            "required": ["books", "suggestions"],
        ]
        if closed { answer["additionalProperties"] = false }
        return answer
    }

    /// Gemini's native detection format, also asked of Cloudflare's models.
    static let box2DSentence =
        "Give box_2d for the spine as [ymin, xmin, ymax, xmax]: integers from 0 to 1000, y measured "
        + "down the photo's height and x across its width, y first."
}
