import Foundation

/// Advice an emulated model gives the photographer, as every provider is asked for it.
package struct EmulatedSuggestion: Sendable {
    package var type: String, severity: String, message: String
    package init(type: String, severity: String, message: String) {
        self.type = type; self.severity = severity; self.message = message
    }
}

/// A book an emulated model "reads", in the shape shelfd asks the models for.
package struct EmulatedBook: Sendable {
    package var title: String
    package var author: String?
    package var isbn: String?
    package var confidence: Double
    /// `[ymin, xmin, ymax, xmax]` on a 0–1000 grid (Gemini, Workers AI).
    package var box2D: [Int]?
    /// `[x1, y1, x2, y2]`, fractions 0–1, x first (OpenAI-compatible servers).
    package var box: [Double]?

    package init(
        title: String, author: String? = nil, isbn: String? = nil, confidence: Double = 0.9,
        box2D: [Int]? = nil, box: [Double]? = nil
    ) {
        self.title = title; self.author = author; self.isbn = isbn; self.confidence = confidence
        self.box2D = box2D; self.box = box
    }
}

/// What an emulated model writes as its answer, the same words whichever wire format carries them; each
/// emulator's `Reply` has these as `.written(…)`, built with `.books`, `.fenced`, `.garbage`.
package enum EmulatedText: Sendable {
    /// The JSON answer shelfd asks for.
    case books([EmulatedBook], suggestions: [EmulatedSuggestion])
    /// The answer wrapped in a ```json fence.
    case fenced([EmulatedBook])
    /// Prose instead of JSON.
    case garbage

    /// The text the model writes.
    var text: String { text(corners: false) }

    /// The text the model writes; `corners`: each book's `box` (null when it has none) rather than its `box_2d`.
    func text(corners: Bool) -> String {
        switch self {
        case .books(let books, let suggestions): Self.answerJSON(books, suggestions, corners: corners)
        case .fenced(let books): "```json\n" + Self.answerJSON(books, [], corners: corners) + "\n```"
        case .garbage: "I'm sorry, but I can't make out the titles on these spines. They look like books!"
        }
    }

    /// The answer shelfd asks for, as a JSON object: `{books: [{title, confidence, author, isbn, box_2d}], suggestions}`,
    /// with `box` for `box_2d` when `corners`.
    static func answerObject(
        _ books: [EmulatedBook], _ suggestions: [EmulatedSuggestion], corners: Bool = false
    ) -> [String: Any] {
        let bookObjects: [[String: Any]] = books.map { book in
            var object: [String: Any] = [
                "title": book.title, "confidence": book.confidence,
                "author": book.author ?? NSNull(), "isbn": book.isbn ?? NSNull(),
            ]
            if corners {
                object["box"] = book.box ?? NSNull()
            } else if let box = book.box2D {
                object["box_2d"] = box
            }
            return object
        }
        let suggestionObjects = suggestions.map { ["type": $0.type, "severity": $0.severity, "message": $0.message] }
        return ["books": bookObjects, "suggestions": suggestionObjects]
    }

    /// The answer as the model writes it.
    static func answerJSON(
        _ books: [EmulatedBook], _ suggestions: [EmulatedSuggestion], corners: Bool = false
    ) -> String {
        emulatorJSON(answerObject(books, suggestions, corners: corners))
    }
}

/// A reply that can carry a model's written answer; `.books`, `.fenced` and `.garbage` build one.
package protocol WrittenReply: Sendable {
    static func written(_ text: EmulatedText) -> Self
}

extension WrittenReply {
    /// The JSON answer as the model's text.
    package static func books(_ books: [EmulatedBook], suggestions: [EmulatedSuggestion] = []) -> Self {
        .written(.books(books, suggestions: suggestions))
    }
    /// The answer wrapped in a ```json fence.
    package static func fenced(_ books: [EmulatedBook]) -> Self { .written(.fenced(books)) }
    /// Prose instead of JSON.
    package static var garbage: Self { .written(.garbage) }
}

/// A model emulator's shared names: the photos a rule keys on, and its rules.
package protocol ModelEmulator: ScriptedEmulator {
    associatedtype Reply: WrittenReply
}

extension ModelEmulator {
    package typealias PhotoMatch = EmulatedPhotoMatch
    package typealias Rule = EmulatorRule<Reply>
}

/// JSON text from plain dictionaries and arrays, as the emulators answer (keys sorted, slashes unescaped).
func emulatorJSON(_ object: Any) -> String {
    let data =
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    return String(decoding: data, as: UTF8.self)
}
