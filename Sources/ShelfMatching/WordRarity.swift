import Foundation
import ShelfCore

/// How many of the local catalogue's entries hold each word: what tells a rare title ("Hallucinations",
/// "Prisoners of Geography") from a common one ("Linear Algebra" among the maths shelf, "Poems"). A title's
/// words weigh by their rarity (ARCHITECTURE.md, "Acceptance is evidence"), so a title of one rare word can stand
/// without its author, and one of common words cannot.
///
/// A word's factor is its self-information in the catalogue, log₂((entries + K) / (holding + 1)), in units of a
/// word held by one entry in a million (20 bits). The K = 1,000 pseudo-entries keep a small catalogue (a person's
/// list of a few hundred titles) from calling every word common. With nothing known the catalogue counts as
/// empty, and every word as one in a thousand: 0.5, so that a title alone then needs two ordinary words.
package struct WordRarity: Sendable {
    /// Entries counted.
    package let entries: Int
    /// Entries holding each word, by the word's hash.
    private let holding: [UInt64: Int]

    /// Nothing known: an empty catalogue, every word one in a thousand.
    package static let unknown = WordRarity(entries: 0, hashed: [:])

    static let pseudoEntries = 1_000.0, referenceBits = log2(1_000_000.0)
    /// The factor of every word when nothing is known: one in a thousand, 0.5.
    package static let unknownWord = log2(pseudoEntries) / referenceBits
    /// A factor is kept within these: a word in most entries still says a little.
    static let factors = 0.05...1.0

    /// `holding`: for each folded word, the entries that hold it (a word not given holds none).
    package init(entries: Int, holding words: [String: Int]) {
        self.entries = entries
        holding = Dictionary(words.map { (Word.hash(Array($0.key.utf8)), $0.value) }) { a, _ in a }
    }

    private init(entries: Int, hashed holding: [UInt64: Int]) {
        self.entries = entries; self.holding = holding
    }

    func factor(of word: Word) -> Double {
        let held = Double(holding[word.hash] ?? 0)
        let bits = log2((Double(entries) + Self.pseudoEntries) / (held + 1))
        return min(max(bits / Self.referenceBits, Self.factors.lowerBound), Self.factors.upperBound)
    }

    /// The folded words of these records' titles: what to count for them.
    package static func words(of records: [CatalogueRecord]) -> Set<String> {
        Set(records.flatMap { TextNormalization.fold($0.title).split(separator: " ").map(String.init) })
    }

    /// These counts and `other`'s, for the same catalogue.
    package func merging(_ other: WordRarity) -> WordRarity {
        WordRarity(entries: max(entries, other.entries), hashed: holding.merging(other.holding) { a, _ in a })
    }
}
