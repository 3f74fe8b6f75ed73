/// A checked ISBN. Built only from text whose checksum passes; stored as ISBN-13,
/// with the ISBN-10 form when the prefix is 978 (979 books have no ISBN-10).
package struct ISBN: Hashable, Sendable, Codable, CustomStringConvertible {
    package let isbn13: String

    /// Accepts any notation ("978-0-441-17271-9", "0441172717", "ISBN 0 441 17271 X"):
    /// keeps digits and X, then validates the checksum. Returns nil when it fails.
    package init?(_ raw: String) {
        let kept = raw.uppercased().filter { $0.isASCII && ($0.isNumber || $0 == "X") }
        switch kept.count {
        case 10:
            guard Self.isValidISBN10(kept) else { return nil }
            let body = "978" + kept.prefix(9)
            isbn13 = body + String(Self.checkDigit13(body))
        case 13:
            guard kept.hasPrefix("978") || kept.hasPrefix("979"), Self.isValidISBN13(kept) else { return nil }
            isbn13 = kept
        default:
            return nil
        }
    }

    /// An ISBN a text holds and nothing else, as printed under a barcode or on a copyright page ("9 782296 033313",
    /// "ISBN 978-0-441-17271-9"): the word ISBN, digits, an X and separators only. Nil for any other text, even one
    /// with an ISBN among its words.
    package static func printed(_ text: String) -> ISBN? {
        let upper = text.uppercased()
        // The label may come first ("ISBN 978…", "ISBN: 0-441…"); nothing else but the number may.
        let rest = upper.hasPrefix("ISBN") ? upper.dropFirst(4) : upper[...]
        guard rest.contains(where: \.isNumber),
            rest.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "X" || " -:.".contains($0)) })
        else { return nil }
        return ISBN(String(rest))
    }

    package var isbn10: String? {
        guard isbn13.hasPrefix("978") else { return nil }
        let body = String(isbn13.dropFirst(3).prefix(9))
        return body + Self.checkDigit10(body)
    }

    package var description: String { isbn13 }

    static func isValidISBN10(_ s: String) -> Bool {
        let chars = Array(s)
        var sum = 0
        for (i, c) in chars.enumerated() {
            let value: Int
            if let digit = c.wholeNumberValue {
                value = digit
            } else if c == "X" && i == 9 {
                value = 10
            } else {
                return false
            }
            sum += value * (10 - i)
        }
        return sum % 11 == 0
    }

    static func isValidISBN13(_ s: String) -> Bool {
        let digits = s.compactMap(\.wholeNumberValue)
        guard digits.count == 13 else { return false }
        let sum = digits.enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 1 : 3) }
        return sum % 10 == 0
    }

    static func checkDigit13(_ first12: String) -> Int {
        let sum = first12.compactMap(\.wholeNumberValue).enumerated().reduce(0) {
            $0 + $1.element * ($1.offset % 2 == 0 ? 1 : 3)
        }
        return (10 - sum % 10) % 10
    }

    static func checkDigit10(_ first9: String) -> String {
        let sum = first9.compactMap(\.wholeNumberValue).enumerated().reduce(0) { $0 + $1.element * (10 - $1.offset) }
        let check = (11 - sum % 11) % 11
        return check == 10 ? "X" : String(check)
    }
}
