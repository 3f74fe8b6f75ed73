import Foundation
import ShelfCore

// The matcher scores some twenty records per spine within a millisecond budget, so text is taken apart
// once (records are cached, see `PreparedRecords`) into plain integers: a word is a 64-bit hash of its
// folded bytes, a trigram three bytes packed into 32 bits, and sets of them hash by multiplication
// instead of SipHash over Strings.

/// A character trigram of a folded word, its three UTF-8 bytes packed into one integer. Bytes rather than
/// characters: folded text is nearly all ASCII, and a split multi-byte letter still compares consistently.
typealias Trigram = UInt32

/// Words that carry little identity: articles, prepositions and conjunctions in the languages the
/// catalogues hold, and the generic words of titles ("Poems", "Collected Stories") that need the author.
enum WordWeight {
    static let function = hashes([
        "a", "al", "als", "an", "and", "at", "au", "aux", "by", "d", "da", "das", "de", "dei", "del", "della",
        "dels", "der", "des", "di", "die", "do", "dos", "du", "e", "ed", "el", "els", "en", "et", "for", "from",
        "i", "il", "in", "l", "la", "las", "le", "les", "lo", "los", "na", "no", "o", "of", "on", "or", "per",
        "pel", "pels", "por", "sobre", "the", "to", "un", "una", "uno", "unos", "und", "y",
    ])
    static let generic = hashes([
        "poems", "poem", "poemas", "poemes", "poesia", "poesias", "poesies", "poetry", "stories", "story",
        "cuentos", "relatos", "contes", "tales", "collected", "complete", "completa", "completas", "completo",
        "completos", "obra", "obras", "works", "selected", "essays", "ensayos", "assaigs", "novels", "novelas",
        "letters", "cartas", "antologia", "anthology", "selection", "seleccion",
    ])

    /// How much a word says about which book it is: a function word little, a short word less than a long one.
    static func of(hash: UInt64, length: Int) -> Double {
        if function.contains(hash) { return 0.2 }
        if generic.contains(hash) { return 0.3 }
        return length <= 3 ? 0.6 : 1.0
    }

    private static func hashes(_ words: [String]) -> IntegerSet { IntegerSet(words.map { Word.hash(Array($0.utf8)) }) }
}

/// One folded word, taken apart once.
struct Word {
    let bytes: [UInt8]
    /// FNV-1a of the bytes: the word's identity in `IntegerSet`s.
    let hash: UInt64
    /// Trigrams of the word padded with a space on each side, so its start and end count.
    let trigrams: [Trigram]
    let weight: Double

    init(_ text: some StringProtocol) { self.init(Array(text.utf8)[...]) }

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = Array(bytes)
        hash = Self.hash(bytes)
        var trigrams: [Trigram] = []
        trigrams.reserveCapacity(bytes.count)
        Self.forEachTrigram(of: bytes) { trigrams.append($0) }
        self.trigrams = trigrams
        weight = WordWeight.of(hash: hash, length: bytes.count)
    }

    /// Another spelling of the same word, as a translation of a title may spell it: words of six letters or more
    /// sharing three quarters of their trigrams (Dice), "superintelligence" and "superinteligencia".
    func isSpelledLike(_ other: Word) -> Bool {
        guard bytes.count >= 6, other.bytes.count >= 6 else { return false }
        let ours = Set(trigrams), theirs = Set(other.trigrams)
        return 2 * Double(ours.intersection(theirs).count) / Double(ours.count + theirs.count) >= 0.75
    }

    static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// The trigrams of the word padded with a space on each side.
    static func forEachTrigram(of bytes: ArraySlice<UInt8>, _ body: (Trigram) -> Void) {
        guard !bytes.isEmpty else { return }
        var window: Trigram = 32 // the leading pad
        for (offset, byte) in bytes.enumerated() {
            window = (window << 8 | Trigram(byte)) & 0xFF_FFFF
            if offset >= 1 { body(window) }
        }
        body((window << 8 | 32) & 0xFF_FFFF) // the trailing pad
    }

    /// The words of a folded text (single spaces between words), split on bytes: no Strings made.
    static func split(_ folded: String) -> [Word] {
        var words: [Word] = []
        forEachWord(of: Array(folded.utf8)) { words.append(Word($0)) }
        return words
    }

    static func forEachWord(of bytes: [UInt8], _ body: (ArraySlice<UInt8>) -> Void) {
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == 32 {
            if index > start { body(bytes[start..<index]) }
            start = index + 1
        }
    }
}

extension Array where Element == UInt8 {
    var trigrams: [Trigram] {
        guard count >= 3 else { return [] }
        return (0..<(count - 2)).map { Trigram(self[$0]) << 16 | Trigram(self[$0 + 1]) << 8 | Trigram(self[$0 + 2]) }
    }

    /// Whether `needle` occurs in these bytes (a call number in a spine's text: both a few dozen bytes).
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { start in
            self[start] == needle[0] && self[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}

/// An exact set of word hashes or trigrams: open addressing, linear probing, a multiplicative hash.
/// Zero marks an empty slot, so zero itself is never stored (no folded word or trigram hashes to it
/// in practice; a trigram of real text never is zero).
struct IntegerSet {
    private var slots: [UInt64]
    private let shift: UInt64

    init<S: Sequence>(_ values: S) where S.Element: FixedWidthInteger {
        let values = Array(values)
        var bits: UInt64 = 4
        while (1 << bits) < values.count * 2 { bits += 1 }
        slots = [UInt64](repeating: 0, count: 1 << Int(bits))
        shift = 64 - bits
        for value in values { insert(UInt64(truncatingIfNeeded: value)) }
    }

    private mutating func insert(_ value: UInt64) {
        guard value != 0 else { return }
        var slot = Int((value &* 0x9E37_79B9_7F4A_7C15) >> shift)
        while slots[slot] != 0 {
            if slots[slot] == value { return }
            slot = (slot + 1) & (slots.count - 1)
        }
        slots[slot] = value
    }

    func contains<T: FixedWidthInteger>(_ element: T) -> Bool {
        let value = UInt64(truncatingIfNeeded: element)
        var slot = Int((value &* 0x9E37_79B9_7F4A_7C15) >> shift)
        while slots[slot] != 0 {
            if slots[slot] == value { return true }
            slot = (slot + 1) & (slots.count - 1)
        }
        return false
    }
}

/// A set of trigrams as 4,096 bits (a one-hash Bloom filter): a record's hundred-odd trigrams in 512
/// bytes, at the price of a few percent of false hits, which only nudge how much of a text a record explains.
struct TrigramFilter {
    private var bits = [UInt64](repeating: 0, count: 64)

    init(_ words: [Word]) {
        for word in words { for gram in word.trigrams { insert(gram) } }
    }

    mutating func insert(_ gram: Trigram) {
        let bit = Self.bit(gram)
        bits[bit >> 6] |= 1 << UInt64(bit & 63)
    }

    func contains(_ gram: Trigram) -> Bool {
        let bit = Self.bit(gram)
        return bits[bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }

    private static func bit(_ gram: Trigram) -> Int { Int((gram &* 2_654_435_761) >> 20) }
}

/// What a spine showed, prepared once per query: its words (and their OCR-confusion readings) and trigrams.
struct PreparedQuery {
    /// Folded words, in reading order, as read.
    let words: [Word]
    /// The words, plus readings with OCR confusions undone (`phi1osopher` → `philosopher`, `rnodern` → `modern`).
    let wordSet: IntegerSet
    /// Trigrams of every word, padded, and of the text with its spaces removed (OCR splits and joins words).
    let trigrams: IntegerSet
    /// Words long enough to be a title word cut off at the spine's edge.
    let stems: [[UInt8]]
    /// The folded text padded with spaces, to find a call number as a whole.
    let paddedText: [UInt8]
    let years: Set<Int>
    let isbn: String?
    /// A structured reading (a model's title and author) never shows a call number.
    let isStructured: Bool
    let hasAuthor: Bool

    init(_ query: SpineQuery) {
        let folded = TextNormalization.fold(query.text)
        words = Word.split(folded)
        let readings = words + words.flatMap { Self.unconfused($0.bytes) }.map { Word($0[...]) }
        wordSet = IntegerSet(readings.map(\.hash))
        trigrams = IntegerSet(readings.flatMap(\.trigrams) + words.flatMap(\.bytes).trigrams)
        stems = words.map(\.bytes).filter { $0.count >= 3 }
        paddedText = Array(" \(folded) ".utf8)
        years = Set(words.compactMap { $0.bytes.count == 4 ? Int(String(decoding: $0.bytes, as: UTF8.self)) : nil })
        isbn = query.isbn?.isbn13
        isStructured = query.title != nil
        hasAuthor = !isStructured || !(query.author ?? "").isEmpty
    }

    /// Readings of a word with the commonest OCR confusions undone: digits inside letters (0/o, 1/l, 5/s),
    /// `rn` read for `m`, and `l` for a capital `I`.
    static func unconfused(_ word: [UInt8]) -> [[UInt8]] {
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        var readings: [[UInt8]] = []
        if word.contains(where: isDigit) && word.contains(where: { !isDigit($0) }) {
            readings.append(
                word.map { byte in
                    switch byte {
                    case UInt8(ascii: "0"): UInt8(ascii: "o")
                    case UInt8(ascii: "1"): UInt8(ascii: "l")
                    case UInt8(ascii: "5"): UInt8(ascii: "s")
                    default: byte
                    }
                })
        }
        for reading in [word] + readings where reading.contains(bytes: Array("rn".utf8)) {
            readings.append(replacing(Array("rn".utf8), with: UInt8(ascii: "m"), in: reading))
        }
        for reading in [word] + readings where reading.contains(UInt8(ascii: "l")) {
            readings.append(reading.map { $0 == UInt8(ascii: "l") ? UInt8(ascii: "i") : $0 })
        }
        return readings
    }

    private static func replacing(_ pair: [UInt8], with byte: UInt8, in word: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], index = 0
        while index < word.count {
            if index + 1 < word.count && word[index] == pair[0] && word[index + 1] == pair[1] {
                out.append(byte); index += 2
            } else {
                out.append(word[index]); index += 1
            }
        }
        return out
    }

    func contains(_ word: Word) -> Bool { wordSet.contains(word.hash) }

    /// How well one word of a record is found in the text: 1 when read as such, less for an OCR-damaged
    /// or cut-off reading, 0 when absent. Short words must be read exactly.
    func presence(of word: Word) -> Double {
        if wordSet.contains(word.hash) { return 1 }
        let length = word.bytes.count
        guard length >= 4 else { return 0 }
        let shared = word.trigrams.reduce(0) { $0 + (trigrams.contains($1) ? 1 : 0) }
        let coverage = Double(shared) / Double(word.trigrams.count)
        var best = coverage >= 0.5 ? 0.9 * coverage : 0
        for stem in stems where stem.count < length && word.bytes.starts(with: stem) {
            best = max(best, 0.9 * Double(stem.count) / Double(length) + 0.1)
        }
        return best
    }
}

/// A catalogue record in the matcher's terms.
struct PreparedRecord: Sendable {
    /// The title a spine shows: no subtitle, no leading article (ARCHITECTURE.md, "One entry per work").
    let mainTitle: [Word]
    /// The first of two alternative titles ("Frankenstein; or, The Modern Prometheus"), which a spine
    /// often shows alone; empty when the title has none.
    let firstAlternative: [Word]
    /// The rest of the full title (subtitle, bracketed parts): extra evidence when read, never missed.
    let subtitle: [Word]
    /// The main title and the rest: what tells two volumes or editions apart.
    var titleWords: [Word] { mainTitle + subtitle }
    /// Every word of the first author's surname ("Belmonte Nieto, Manuel": both).
    let surnames: [Word]
    /// Every word of the authors as given, first names too ("belmonte", "nieto", "manuel").
    let authorWords: [UInt64]
    /// The call number's words (`796.41 Lib` → `796`, `41`, `lib`) and the whole, padded.
    let tag: [Word]
    let paddedTag: [UInt8]
    /// Every word the record could explain in the text (title, author, call number, series), exactly
    /// and by trigram for words read with errors.
    let vocabulary: IntegerSet
    let vocabularyTrigrams: TrigramFilter
    let year: Int?
    let isbn13: String?
    /// Editions of one work are not rivals for a spine.
    let work: String

    init(_ record: CatalogueRecord) {
        mainTitle = Word.split(TextNormalization.title(record.title))
        firstAlternative =
            mainTitle.contains { Self.alternativeWords.contains($0.hash) }
            ? Self.firstAlternative(record.title).map { Word.split(TextNormalization.title($0)) } ?? [] : []
        let foldedTitle = TextNormalization.fold(record.title)
        let full = Word.split(foldedTitle)
        let main = IntegerSet(mainTitle.map(\.hash))
        subtitle = full.filter { !main.contains($0.hash) }
        let surname = TextNormalization.surname(record.author)
        surnames = Self.surnames(record.author, surname: surname).map(Word.init)
        let tagText = TextNormalization.fold(record.tag ?? "")
        tag = Word.split(tagText)
        paddedTag = Array(" \(tagText) ".utf8)
        // The author's and series' words only need to be known, not compared one by one: hashed and
        // filtered straight from their bytes.
        var hashes = (full + tag).map(\.hash)
        var trigrams = TrigramFilter(full + tag)
        var authorWords: [UInt64] = []
        for (text, isAuthor) in [(record.author, true), (record.series, false)] {
            Word.forEachWord(of: Array(TextNormalization.fold(text ?? "").utf8)) { word in
                hashes.append(Word.hash(word))
                if isAuthor { authorWords.append(Word.hash(word)) }
                Word.forEachTrigram(of: word) { trigrams.insert($0) }
            }
        }
        self.authorWords = authorWords
        vocabulary = IntegerSet(hashes)
        vocabularyTrigrams = trigrams
        year = record.year
        isbn13 = record.isbn13
        work = CatalogueRecord.workKey(foldedTitle: foldedTitle, surname: surname)
    }

    /// Whether the two are editions of one work, so not rivals for a spine: the same work key, or the same main
    /// title word for word, each word the same or spelt nearly alike as a translation often spells it
    /// ("Sàpiens", "Superinteligencia" for "Superintelligence"), with the same author's surname or one author
    /// not known (a list of titles). "Superhuman" and "Future Superhuman" are two works; so are two "Emma"s by
    /// two authors.
    func isEdition(of other: PreparedRecord) -> Bool {
        if work == other.work { return true }
        guard mainTitle.count == other.mainTitle.count, !mainTitle.isEmpty, !isVolume, !other.isVolume else {
            return false
        }
        let authors =
            surnames.isEmpty || other.surnames.isEmpty
            || !Set(surnames.map(\.hash)).isDisjoint(with: other.surnames.map(\.hash))
        return authors && zip(mainTitle, other.mainTitle).allSatisfy { $0.hash == $1.hash || $0.isSpelledLike($1) }
            && !sharesSubtitle(with: other)
    }

    /// Levels and parts of one course share their subtitle but for a word ("self-study and classroom use.
    /// Intermediate", "… Advanced"); a translation's subtitle is other words ("breve historia del mañana", "a brief
    /// history of tomorrow").
    private func sharesSubtitle(with other: PreparedRecord) -> Bool {
        let theirs = Set(other.subtitle.map(\.hash))
        return subtitle.contains { theirs.contains($0.hash) && !WordWeight.function.contains($0.hash) }
    }

    /// One volume or part of several ("Historia de España. Vol. II", "Cambridge English : Proficiency 2"):
    /// its title holds a number or a volume's word. Volumes share their main title and author, and are not
    /// editions of one another.
    var isVolume: Bool {
        titleWords.contains { word in
            word.bytes.contains { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                || Self.volumeWords.contains(word.hash)
        }
    }

    private static let volumeWords = IntegerSet(
        [
            "vol", "volume", "volumen", "tomo", "tom", "part", "parte", "book", "libro", "llibre", "ii", "iii", "iv",
            "vi",
        ]
        .map { Word.hash(Array($0.utf8)) })

    private static let alternativeWords = IntegerSet(["or", "o", "ou"].map { Word.hash(Array($0.utf8)) })

    /// The title before an ", or" / "; or," (and the Spanish, Catalan and French forms), when what precedes it
    /// is a real title.
    static func firstAlternative(_ title: String) -> String? {
        let lowered = title.lowercased()
        for separator in [", or ", "; or, ", "; or ", ", o, ", ", o ", ", ou ", "; ou, "] {
            guard let range = lowered.range(of: separator) else { continue }
            let head = String(title[..<range.lowerBound])
            return TextNormalization.fold(head).filter(\.isLetter).count >= 2 ? head : nil
        }
        return nil
    }

    /// The first author's surname words: before the comma of "Last, First" (all of them: "Belmonte Nieto"),
    /// else `surname`, the last word.
    static func surnames(_ author: String?, surname: String) -> [String] {
        guard let author else { return [] }
        let first = author.split(whereSeparator: { $0 == ";" || $0 == "&" }).first ?? ""
        let words =
            if let comma = first.firstIndex(of: ",") {
                TextNormalization.fold(String(first[..<comma])).split(separator: " ").map(String.init)
            } else {
                surname.isEmpty ? [] : [surname]
            }
        return words.filter { $0.utf8.count >= 2 && !WordWeight.function.contains(Word.hash(Array($0.utf8))) }
    }
}
