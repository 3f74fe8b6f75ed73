import Foundation

/// Title and author forms used for matching; display text always stays as read.
package enum TextNormalization {
    /// Folds case, accents and punctuation to single-spaced lowercase ASCII-ish words.
    package static func fold(_ text: String) -> String {
        // Latin text (nearly every title) goes through a table of what each scalar folds to; anything
        // else through Foundation. Both give the same words; the table is ~50 times faster, which the
        // matcher needs (it folds every candidate's title, author and call number per spine).
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var lastWasSpace = true
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                let byte = UInt8(value)
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    out.append(byte); lastWasSpace = false
                case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    out.append(byte + 32); lastWasSpace = false
                case UInt8(ascii: "'"):
                    continue
                default:
                    if !lastWasSpace { out.append(32); lastWasSpace = true }
                }
                continue
            }
            guard let index = foldedIndex(value) else { return foundationFold(text) }
            for byte in foldTable.bytes[foldTable.starts[index]..<foldTable.starts[index + 1]] {
                if byte == 32 {
                    if !lastWasSpace { out.append(32); lastWasSpace = true }
                } else {
                    out.append(byte); lastWasSpace = false
                }
            }
        }
        if out.last == 32 { out.removeLast() }
        return String(decoding: out, as: UTF8.self)
    }

    /// What `foundationFold` makes of each scalar of Latin-1, Latin Extended A and B (U+0080–U+024F) and
    /// General Punctuation (U+2000–U+205F: typographic quotes and dashes) on its own: its folded letters
    /// and digits as UTF-8, a space for a separator, nothing for an apostrophe. One buffer, indexed by
    /// `starts`, so a lookup allocates nothing.
    private static let foldTable: (bytes: [UInt8], starts: [Int]) = {
        var bytes: [UInt8] = [], starts: [Int] = []
        for value in Array(0x80..<0x250) + Array(0x2000..<0x2060) {
            starts.append(bytes.count)
            if let scalar = Unicode.Scalar(UInt32(value)) {
                bytes += Array(foundationFold(String(Character(scalar)), trim: false).utf8)
            } else {
                bytes.append(32)
            }
        }
        starts.append(bytes.count)
        return (bytes, starts)
    }()

    private static func foldedIndex(_ value: UInt32) -> Int? {
        if value >= 0x80 && value < 0x250 { return Int(value) - 0x80 }
        // Zero-width and invisible formatting characters fold differently inside a word: Foundation's.
        if value >= 0x2000 && value < 0x2060 && !(0x200B...0x200F).contains(value) {
            return 0x250 - 0x80 + Int(value - 0x2000)
        }
        return nil
    }

    static func foundationFold(_ text: String, trim: Bool = true) -> String {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .lowercased()
        var out = ""
        var lastWasSpace = trim // trimming: no leading space
        for scalar in folded.unicodeScalars {
            if CharacterSet.alphanumerics.contains(scalar) {
                out.unicodeScalars.append(scalar); lastWasSpace = false
            } else if scalar == "'" || scalar == "’" {
                continue // "Dragon's" → "dragons"
            } else if !lastWasSpace {
                out.append(" "); lastWasSpace = true
            }
        }
        return trim ? out.trimmingCharacters(in: .whitespaces) : out
    }

    static let leadingArticles: Set<String> = [
        "the", "a", "an", "el", "la", "los", "las", "le", "les", "l", "der",
        "die", "das", "il", "lo", "els", "un", "una",
    ]

    /// The matching form of a title: drops `(…)` and `[…]`, cuts a subtitle after `:` or ` - `
    /// when what precedes it is a real title (two letters or more), folds, drops a leading article.
    package static func title(_ title: String) -> String {
        // Bytes, not Characters: every bracket and separator is ASCII or a whole UTF-8 sequence, and the
        // matcher computes this for every candidate of every spine.
        let text = removeBracketed(Array(title.utf8))
        var folded: String?
        for separator in subtitleSeparators {
            if let cut = firstIndex(of: separator, in: text) {
                let head = fold(String(decoding: text[..<cut], as: UTF8.self))
                if head.filter(\.isLetter).count >= 2 { folded = head; break }
            }
        }
        var words = (folded ?? fold(String(decoding: text, as: UTF8.self))).split(separator: " ").map(String.init)
        if words.count > 1, leadingArticles.contains(words[0]) { words.removeFirst() }
        return words.joined(separator: " ")
    }

    private static let subtitleSeparators = [":", " - ", " — ", " – "].map { Array($0.utf8) }

    /// The author's surname, folded: "Herbert, Frank" and "Frank Herbert" both give "herbert".
    package static func surname(_ author: String?) -> String {
        guard let author, !author.allSatisfy(\.isWhitespace) else { return "" }
        // Several authors: the first one decides.
        let first =
            author.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ";" || $0 == "&" }).first ?? ""
        if let comma = first.firstIndex(of: ",") {
            return fold(String(first[..<comma])).split(separator: " ").last.map(String.init) ?? ""
        }
        let words = fold(String(first)).split(separator: " ").map(String.init)
        let suffixes: Set<String> = ["jr", "sr", "ii", "iii", "iv"]
        return words.last(where: { !suffixes.contains($0) }) ?? ""
    }

    private static func removeBracketed(_ text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], depth = 0
        out.reserveCapacity(text.count)
        for byte in text {
            if byte == UInt8(ascii: "(") || byte == UInt8(ascii: "[") { depth += 1; continue }
            if (byte == UInt8(ascii: ")") || byte == UInt8(ascii: "]")) && depth > 0 { depth -= 1; continue }
            if depth == 0 { out.append(byte) }
        }
        return out
    }

    private static func firstIndex(of needle: [UInt8], in text: [UInt8]) -> Int? {
        guard text.count >= needle.count else { return nil }
        return (0...(text.count - needle.count)).first { start in
            text[start] == needle[0] && text[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}
