import Foundation

/// Title and author forms used for matching; display text always stays as read.
package enum TextNormalization {
    /// Folds case, accents and punctuation to single-spaced lowercase ASCII-ish words.
    package static func fold(_ text: String) -> String {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .lowercased()
        var out = ""
        var lastWasSpace = true
        for scalar in folded.unicodeScalars {
            if CharacterSet.alphanumerics.contains(scalar) {
                out.unicodeScalars.append(scalar); lastWasSpace = false
            } else if scalar == "'" || scalar == "’" {
                continue                                   // "Dragon's" → "dragons"
            } else if !lastWasSpace {
                out.append(" "); lastWasSpace = true
            }
        }
        return out.trimmingCharacters(in: .whitespaces)
    }

    static let leadingArticles: Set<String> = ["the", "a", "an", "el", "la", "los", "las", "le", "les", "l", "der",
                                               "die", "das", "il", "lo", "els", "un", "una"]

    /// The matching form of a title: drops `(…)` and `[…]`, cuts a subtitle after `:` or ` - `
    /// when what precedes it is a real title (two letters or more), folds, drops a leading article.
    package static func title(_ title: String) -> String {
        var text = removeBracketed(title)
        for separator in [":", " - ", " — ", " – "] {
            if let range = text.range(of: separator) {
                let head = String(text[..<range.lowerBound])
                if fold(head).filter(\.isLetter).count >= 2 { text = head; break }
            }
        }
        var words = fold(text).split(separator: " ").map(String.init)
        if words.count > 1, leadingArticles.contains(words[0]) { words.removeFirst() }
        return words.joined(separator: " ")
    }

    /// The author's surname, folded: "Herbert, Frank" and "Frank Herbert" both give "herbert".
    package static func surname(_ author: String?) -> String {
        guard let author, !author.trimmingCharacters(in: .whitespaces).isEmpty else { return "" }
        // Several authors: the first one decides.
        let first = author.components(separatedBy: CharacterSet(charactersIn: ";&")).first ?? author
        if let comma = first.firstIndex(of: ",") {
            return fold(String(first[..<comma])).split(separator: " ").last.map(String.init) ?? ""
        }
        let words = fold(first).split(separator: " ").map(String.init)
        let suffixes: Set<String> = ["jr", "sr", "ii", "iii", "iv"]
        return words.last(where: { !suffixes.contains($0) }) ?? ""
    }

    private static func removeBracketed(_ text: String) -> String {
        var out = "", depth = 0
        for c in text {
            if c == "(" || c == "[" { depth += 1; continue }
            if (c == ")" || c == "]") && depth > 0 { depth -= 1; continue }
            if depth == 0 { out.append(c) }
        }
        return out
    }
}
