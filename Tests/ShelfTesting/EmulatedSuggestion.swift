/// Advice an emulated model gives the photographer, as every provider is asked for it.
package struct EmulatedSuggestion: Sendable {
    package var type: String, severity: String, message: String
    package init(type: String, severity: String, message: String) {
        self.type = type; self.severity = severity; self.message = message
    }
}

/// A book an emulated model "reads", in the shape shelfd asks Gemini and Workers AI for.
package struct EmulatedBook: Sendable {
    package var title: String
    package var author: String?
    package var isbn: String?
    package var confidence: Double
    /// `[ymin, xmin, ymax, xmax]` on a 0–1000 grid.
    package var box2D: [Int]?

    package init(title: String, author: String? = nil, isbn: String? = nil, confidence: Double = 0.9,
                 box2D: [Int]? = nil) {
        self.title = title; self.author = author; self.isbn = isbn; self.confidence = confidence; self.box2D = box2D
    }
}
