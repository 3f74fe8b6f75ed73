/// What every vision provider is asked for, converted at the provider's edge (DESIGN §6).
package struct ModelAnswer: Sendable, Equatable {
    package var books: [Detection]
    package var suggestions: [Suggestion]
    /// Problems found while reading the answer (a book without a title dropped, a confidence clamped).
    package var notes: [String]

    package init(books: [Detection], suggestions: [Suggestion] = [], notes: [String] = []) {
        self.books = books; self.suggestions = suggestions; self.notes = notes
    }
}

/// One book as a model read it: a guess, not yet checked.
package struct Detection: Sendable, Equatable, Codable {
    package var title: String
    package var author: String?
    /// The ISBN text as the model gave it; checked later.
    package var isbn: String?
    /// 0…1, clamped.
    package var confidence: Double
    package var box: Box?

    package init(title: String, author: String? = nil, isbn: String? = nil, confidence: Double, box: Box? = nil) {
        self.title = title; self.author = author; self.isbn = isbn
        self.confidence = confidence.isFinite ? min(1, max(0, confidence)) : 0
        self.box = box
    }
}

/// Advice to the photographer, with the phone app's nine types.
package struct Suggestion: Sendable, Equatable, Codable, Hashable {
    package enum Kind: String, Sendable, Codable, CaseIterable {
        case unreadableBooks = "unreadable_books", lowConfidence = "low_confidence", edgeCutoff = "edge_cutoff"
        case blurryImage = "blurry_image", glareDetected = "glare_detected", distanceTooFar = "distance_too_far"
        case multipleShelves = "multiple_shelves", lightingIssues = "lighting_issues", angleIssues = "angle_issues"
    }
    package enum Severity: String, Sendable, Codable, CaseIterable { case info, warning, error }

    package var type: Kind
    package var severity: Severity
    package var message: String

    package init(type: Kind, severity: Severity, message: String) {
        self.type = type; self.severity = severity; self.message = message
    }
}
