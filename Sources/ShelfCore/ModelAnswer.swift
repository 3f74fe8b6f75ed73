/// What every vision provider is asked for, converted at the provider's edge (docs/reading.md, "Choosing a provider").
package struct ModelAnswer: Sendable, Equatable {
    package var books: [Detection]
    package var suggestions: [Suggestion]
    /// Problems found while reading the answer (a book without a title dropped, a confidence clamped).
    package var notes: [String]

    package init(books: [Detection], suggestions: [Suggestion] = [], notes: [String] = []) {
        self.books = books; self.suggestions = suggestions; self.notes = notes
    }
}

/// How a book's title was read: a model's structured reading (title, author), or the text of a spine in
/// whatever order it was read, which the enrichment matches against the book sources (the offline OCR).
package enum ReadingForm: String, Sendable, Codable {
    case structured
    case spineText = "spine_text"
    /// An ISBN read from its EAN-13 barcode: exact, so the book is the record of that ISBN and nothing else.
    case barcode
}

/// `[pipeline] barcodes`: whether the ISBN barcodes on a photo are read, and whether they spare the provider.
package enum BarcodeMode: String, Sendable, CaseIterable {
    /// Barcodes are read and the provider is asked too; a book both read is one book (the default).
    case also
    /// A photo on which barcodes are found is not sent to the provider: its books are its barcodes (a pile of
    /// backs costs no request). A photo with none is sent as usual.
    case only
    case off
}

/// Which way a spine's text runs on the upright photo, when the reader knows it (the offline reader does; a model
/// does not say). The review page turns a spine's crop by it so that its text reads across.
package enum TextRun: String, Sendable, Codable, CaseIterable {
    case upward // bottom to top: read with the photo turned a quarter clockwise
    case downward // top to bottom (most English spines): turned anticlockwise
    case across // left to right: a book lying flat
}

/// One book as a model read it: a guess, not yet checked.
package struct Detection: Sendable, Equatable, Codable {
    /// For `.spineText`, everything read on the spine.
    package var title: String
    package var author: String?
    /// The ISBN text as the model gave it; checked later.
    package var isbn: String?
    /// 0…1, clamped.
    package var confidence: Double
    package var box: Box?
    package var form: ReadingForm
    /// Which way the text runs, when the reader knows it.
    package var textRun: TextRun?

    package init(
        title: String, author: String? = nil, isbn: String? = nil, confidence: Double, box: Box? = nil,
        form: ReadingForm = .structured, textRun: TextRun? = nil
    ) {
        self.title = title; self.author = author; self.isbn = isbn
        self.confidence = confidence.isFinite ? min(1, max(0, confidence)) : 0
        self.box = box; self.form = form; self.textRun = textRun
    }

    enum CodingKeys: String, CodingKey { case title, author, isbn, confidence, box, form, textRun = "text_run" }

    /// `form` is absent from detections saved before it existed: they are structured readings.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            title: try c.decode(String.self, forKey: .title),
            author: try c.decodeIfPresent(String.self, forKey: .author),
            isbn: try c.decodeIfPresent(String.self, forKey: .isbn),
            confidence: try c.decode(Double.self, forKey: .confidence),
            box: try c.decodeIfPresent(Box.self, forKey: .box),
            form: try c.decodeIfPresent(ReadingForm.self, forKey: .form) ?? .structured,
            textRun: try c.decodeIfPresent(TextRun.self, forKey: .textRun))
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
