import Foundation
/// Author strings as a model or a catalogue gives them ("Neil Gaiman & Terry Pratchett", "Le Guin, Ursula K."),
/// turned into the person-by-person forms the apps ask for.
package enum AuthorNames {
    /// Each author in "First Last" form, in the order given. A single "Last, First" is one person, not two.
    package static func split(_ text: String?) -> [String] {
        guard let text = text?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return [] }
        var names: [String] = []
        for group in text.split(whereSeparator: { $0 == ";" || $0 == "|" || $0 == "&" }) {
            for part in splitOnAnd(String(group)) { names += splitOnCommas(part) }
        }
        return names.map(collapseSpaces).filter { !$0.isEmpty }
    }

    /// "Le Guin, Ursula K.", "Herbert, Frank", "King, Martin Luther, Jr.": the surname with its particles first.
    /// A single name ("Brom") stays as it is.
    package static func lastFirst(_ name: String) -> String {
        let (given, family, suffix) = parts(name)
        guard !given.isEmpty else { return name }
        return "\(family), \(given)" + (suffix.map { ", \($0)" } ?? "")
    }

    /// Given names and surname (with its particles and any suffix), for apps that keep them apart.
    package static func givenAndFamily(_ name: String) -> (given: String, family: String) {
        let (given, family, suffix) = parts(name)
        return (given, family + (suffix.map { " \($0)" } ?? ""))
    }

    // MARK: -

    /// Words that belong to the surname when they stand before it: "Le Guin", "van der Berg", "de la Foret".
    private static let particles: Set<String> = [
        "da", "das", "de", "degli", "dei", "del", "della", "den", "der", "des", "di",
        "do", "dos", "du", "la", "le", "st.", "ten", "ter", "van", "von", "zu", "al", "bin", "ibn",
    ]
    private static let suffixes: Set<String> = ["jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "phd", "ph.d."]

    private static func parts(_ name: String) -> (given: String, family: String, suffix: String?) {
        var words = name.split(whereSeparator: \.isWhitespace).map(String.init)
        var suffix: String?
        if words.count > 2, let last = words.last, suffixes.contains(last.lowercased()) {
            suffix = last; words.removeLast()
            if words[words.count - 1].hasSuffix(",") { words[words.count - 1].removeLast() }
        }
        guard words.count > 1 else { return ("", words.first ?? name, suffix) }
        var start = words.count - 1
        while start > 1, particles.contains(words[start - 1].lowercased()) { start -= 1 }
        return (words[..<start].joined(separator: " "), words[start...].joined(separator: " "), suffix)
    }

    private static func splitOnAnd(_ text: String) -> [String] {
        text.components(separatedBy: " and ").flatMap { $0.components(separatedBy: " And ") }
    }

    /// "Neil Gaiman, Terry Pratchett" is two people; "Herbert, Frank" and "Le Guin, Ursula K." are one, written
    /// surname first; "Martin Luther King, Jr." is one with a suffix.
    private static func splitOnCommas(_ text: String) -> [String] {
        let pieces = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard pieces.count > 1 else { return pieces }
        if pieces.count == 2, isSurnameFirst(pieces[0]), !suffixes.contains(pieces[1].lowercased()) {
            return ["\(pieces[1]) \(pieces[0])"]
        }
        var names: [String] = []
        for piece in pieces {
            if suffixes.contains(piece.lowercased()), let last = names.popLast() {
                names.append("\(last) \(piece)")
            } else {
                names.append(piece)
            }
        }
        return names
    }

    /// One word ("Herbert"), or particles then one word ("Le Guin", "van Gogh").
    private static func isSurnameFirst(_ text: String) -> Bool {
        let words = text.split(separator: " ").map { $0.lowercased() }
        return words.dropLast().allSatisfy { particles.contains($0) }
    }

    private static func collapseSpaces(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
