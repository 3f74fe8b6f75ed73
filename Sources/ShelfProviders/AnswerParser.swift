import Foundation
package import ShelfCore

/// Reads the answer every provider is asked for, `{"books": [...], "suggestions": [...]}`, out of a
/// model's text: tolerates ```json fences, prose around the object and loose values, and records
/// what it dropped or changed in `ModelAnswer.notes`.
package enum AnswerParser {
    /// How a provider was asked to give each book's box.
    package enum BoxFormat: Sendable {
        /// `box_2d`: `[ymin, xmin, ymax, xmax]` on a 0–1000 grid, y first (Gemini).
        case gemini
        /// `box`: `[x1, y1, x2, y2]`, fractions 0–1 of the width and height, x first. A `box_2d`
        /// given instead is read as Gemini's.
        case corners
    }

    /// nil when the text holds no JSON object with a `books` array.
    package static func answer(from text: String, boxes: BoxFormat = .gemini) -> ModelAnswer? {
        guard let object = firstAnswerObject(in: text), let books = object["books"] as? [Any] else { return nil }
        var notes: [String] = []
        var detections: [Detection] = []
        for (index, item) in books.enumerated() {
            guard let book = item as? [String: Any] else { notes.append("book_not_an_object: #\(index + 1)"); continue }
            if let detection = detection(from: book, index: index, boxes: boxes, notes: &notes) {
                detections.append(detection)
            }
        }
        var suggestions: [Suggestion] = []
        for item in object["suggestions"] as? [Any] ?? [] {
            guard let suggestion = item as? [String: Any], let type = string(suggestion["type"]) else { continue }
            guard let kind = Suggestion.Kind(rawValue: type.lowercased()) else {
                notes.append("unknown_suggestion_type_ignored: \(type)"); continue
            }
            let severity =
                string(suggestion["severity"]).flatMap { Suggestion.Severity(rawValue: $0.lowercased()) } ?? .info
            suggestions.append(Suggestion(type: kind, severity: severity, message: string(suggestion["message"]) ?? ""))
        }
        return ModelAnswer(books: detections, suggestions: suggestions, notes: notes)
    }

    private static func detection(
        from book: [String: Any], index: Int, boxes: BoxFormat,
        notes: inout [String]
    ) -> Detection? {
        guard let title = string(book["title"]) else {
            notes.append("book_without_title_dropped: #\(index + 1)"); return nil
        }
        var confidence = 0.0
        if let value = number(book["confidence"]) {
            confidence = value
            if !(0...1).contains(value) { notes.append("confidence_clamped: \(title) (\(value))") }
        } else {
            notes.append("confidence_missing: \(title)")
        }
        var box: Box?
        if boxes == .corners, let raw = book["box"], !(raw is NSNull) {
            let values = (raw as? [Any])?.compactMap(number) ?? []
            box = values.count == 4 ? Box(x1: values[0], y1: values[1], x2: values[2], y2: values[3]) : nil
            if box == nil {
                notes.append("box_invalid: \(title)")
            } else if values.contains(where: { !(0...1).contains($0) }) {
                notes.append("box_clamped: \(title)")
            }
        } else if let raw = book["box_2d"] ?? book["box2d"], !(raw is NSNull) {
            let values = (raw as? [Any])?.compactMap(number) ?? []
            box = values.count == 4 ? Box(gemini: values) : nil
            if box == nil {
                notes.append("box_invalid: \(title)")
            } else if values.contains(where: { !(0...1000).contains($0) }) {
                notes.append("box_clamped: \(title)")
            }
        }
        return Detection(
            title: title, author: string(book["author"]), isbn: string(book["isbn"]),
            confidence: confidence, box: box)
    }

    /// A non-empty trimmed string; numbers (an ISBN given as a number) become text.
    private static func string(_ value: Any?) -> String? {
        let text: String
        switch value {
        case let s as String: text = s
        case let n as NSNumber where !(value is Bool): text = n.stringValue
        default: return nil
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty || trimmed.lowercased() == "null" ? nil : trimmed
    }

    private static func number(_ value: Any?) -> Double? {
        switch value {
        case let s as String: return Double(s.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil }
        case let n as NSNumber: return n.doubleValue.isFinite ? n.doubleValue : nil
        default: return nil
        }
    }

    /// The first balanced `{…}` in `text` that parses as a JSON object with a `books` key.
    static func firstAnswerObject(in text: String) -> [String: Any]? {
        let bytes = Array(text.utf8)
        var start = bytes.firstIndex(of: UInt8(ascii: "{"))
        while let begin = start {
            if let end = balancedEnd(bytes, from: begin),
                let object = (try? JSONSerialization.jsonObject(with: Data(bytes[begin...end]))) as? [String: Any],
                object["books"] != nil
            {
                return object
            }
            start = bytes[(begin + 1)...].firstIndex(of: UInt8(ascii: "{"))
        }
        return nil
    }

    /// True when `text` opens a JSON object holding `"books"` that never closes: a model's output cut off
    /// mid-answer (a token limit), to be reported as truncated rather than as nonsense.
    package static func isCutOff(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var start = bytes.firstIndex(of: UInt8(ascii: "{"))
        while let begin = start {
            guard let end = balancedEnd(bytes, from: begin) else {
                return String(decoding: bytes[begin...], as: UTF8.self).contains("\"books\"")
            }
            start = bytes[(end + 1)...].firstIndex(of: UInt8(ascii: "{"))
        }
        return false
    }

    /// Index of the `}` closing the `{` at `start`, skipping braces inside strings; nil if it never closes.
    private static func balancedEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var depth = 0, inString = false, escaped = false
        for index in start..<bytes.count {
            let byte = bytes[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
        }
        return nil
    }
}
