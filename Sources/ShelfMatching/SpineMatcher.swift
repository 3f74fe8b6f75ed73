import ShelfCore
import Synchronization

package struct MatchResult: Sendable, Equatable {
    /// Top candidate, nil when nothing plausible.
    package var best: MatchCandidate?
    /// Best first, at most five.
    package var candidates: [MatchCandidate]
    /// `accepted`: the matcher's `acceptance` rule holds for the best candidate (see `AcceptanceRule`).
    package var decision: MatchDecision
    /// What the best candidate's score rests on; nil when there is no best candidate.
    package var evidence: MatchEvidence?
    /// Other editions of the best candidate's work among the candidates, with another ISBN: the spine
    /// names the work, and which of these it is only its ISBN would tell.
    package var otherEditions: [MatchCandidate] = []
    /// Plausible records another spine of the photo took (`assign`): what a piece of that spine read apart from it
    /// (a subtitle, the authors set across it) would be.
    package var takenElsewhere: [MatchCandidate] = []

    package init(
        best: MatchCandidate?, candidates: [MatchCandidate], decision: MatchDecision,
        evidence: MatchEvidence? = nil
    ) {
        self.best = best; self.candidates = candidates; self.decision = decision; self.evidence = evidence
    }
}

/// Scores catalogue records against what a spine showed and decides whether one of them is the book
/// (ARCHITECTURE.md, "One entry per work"; when it may say so without asking is `AcceptanceRule`). Pure: sources find the records, this
/// only compares text.
///
/// A score (0…1) weighs how much of the record's title the text covers (word by word, tolerant of OCR
/// damage and cut-off words), whether the author's surname and the call number are read, how much of the
/// text the record explains, and, a little, the subtitle, the year and an ISBN hint. A title of little
/// weight ("Poems", a single short word) that neither the author nor the call number confirms is scored
/// down: many books could have shown it.
package struct SpineMatcher: Sendable {
    /// When the best record is accepted without asking.
    package var acceptance = AcceptanceRule.standard
    /// No match below this score is accepted.
    package var acceptThreshold: Double { acceptance.score }
    /// Below: not plausible; not offered as the best candidate.
    package var plausible = 0.25
    /// Records already taken apart, shared by copies of this matcher: a catalogue's entries come back
    /// spine after spine, and preparing one costs more than scoring it.
    private let prepared = PreparedRecords()

    package init() {}

    // Weights of the evidence; they sum to 1 for free text, which may show all of it.
    static let titleWeight = 0.45, subtitleWeight = 0.1, authorWeight = 0.15, tagWeight = 0.15, explainedWeight = 0.15
    static let yearBonus = 0.03, isbnBonus = 0.15
    /// A subtitle read to at least this weight (three ordinary words) shows the title with it.
    static let subtitleReadMass = 3.0
    /// A title read to no more information than one ordinary word whose rarity nothing tells, unconfirmed, keeps this
    /// share of its score: many books could show it. Fixed, not fitted: the acceptance rule is fitted on the scores.
    static let thinTitleInformation = WordRarity.unknownWord, thinTitleFactor = 0.75
    /// A record that accounts for less than this share of the text keeps this share of its score.
    static let explainedFloor = 0.3, unexplainedFactor = 0.85
    /// Against a record without an author, this much of the text it does not account for is what any spine
    /// carries beside its title: a name and a publisher (three ordinary words).
    static let authorlessAllowance = 3.0

    package func score(_ query: SpineQuery, _ record: CatalogueRecord) -> Double {
        score(PreparedQuery(query), prepared[record])
    }

    /// Whether the text shows the record's author: a word of the surname read as well as a title's word must be
    /// to tell records apart (`distinctRead`). A record without an author shows none.
    package func showsAuthor(of record: CatalogueRecord, in query: SpineQuery) -> Bool {
        let query = PreparedQuery(query)
        return prepared[record].surnames.contains { query.presence(of: $0) >= Self.distinctRead }
    }

    /// `rarity`: how many catalogue entries hold the records' title words (`WordRarity`), when known.
    package func decide(_ query: SpineQuery, among records: [CatalogueRecord], rarity: WordRarity = .unknown)
        -> MatchResult
    {
        let spine = PreparedQuery(query)
        return result(scored(spine, among: unique(records), rarity: rarity), for: spine)
    }

    /// One photo: each record used at most once (a one-to-one assignment, not independent searches).
    /// The assignment maximises the summed score of the photo's matches; each spine then decides among
    /// its own records that no other spine took.
    package func assign(
        _ queries: [SpineQuery], candidates: [[CatalogueRecord]], rarity: WordRarity = .unknown
    ) -> [MatchResult] {
        var columns: [String: Int] = [:]
        let spines = queries.map(PreparedQuery.init)
        let scored: [[Scored]] = queries.indices.map { i in
            let records = i < candidates.count ? unique(candidates[i]) : []
            for record in records where columns[Self.identity(record)] == nil {
                columns[Self.identity(record)] = columns.count
            }
            return self.scored(spines[i], among: records, rarity: rarity)
        }
        var benefit = [[Double]](repeating: [Double](repeating: 0, count: columns.count), count: queries.count)
        for (i, list) in scored.enumerated() {
            for scored in list where scored.candidate.score >= plausible {
                benefit[i][columns[Self.identity(scored.candidate.record)]!] = scored.candidate.score
            }
        }
        let chosen = Assignment.maximising(benefit)
        var owner: [Int: Int] = [:]
        for (i, column) in chosen.enumerated() {
            if let column { owner[column] = i }
        }
        return scored.enumerated().map { i, list in
            let mine = { (scored: Scored) in owner[columns[Self.identity(scored.candidate.record)]!, default: i] == i }
            var result = result(list.filter(mine), for: spines[i])
            result.takenElsewhere = list.filter { !mine($0) && $0.candidate.score >= plausible }.map(\.candidate)
            return result
        }
    }

    // MARK: Scoring

    /// Each record's evidence, best first. The words some record's title holds are title words, not the name
    /// or publisher a record without an author is forgiven ("India" is not forgiven the "Norte" of "India norte"),
    /// unless some record's author holds them too: "George" of "1984 George Orwell" is Orwell's name, though a
    /// book is called *George*.
    private func scored(_ query: PreparedQuery, among records: [CatalogueRecord], rarity: WordRarity) -> [Scored] {
        let ready = records.map { prepared[$0] }
        let titled = Set(ready.flatMap { $0.titleWords.map(\.hash) })
            .subtracting(ready.flatMap(\.authorWords))
        return ranked(
            zip(records, ready).map { record, ready in
                Scored(evidence(query, ready, rarity: rarity, titled: titled), record: record, prepared: ready)
            })
    }

    func score(_ query: PreparedQuery, _ record: PreparedRecord) -> Double { evidence(query, record).score }

    /// The record's score and what it rests on. A record without an author (a list of titles) is neither
    /// confirmed nor doubted by a name the spine shows: the words of a name and a publisher beside its title are
    /// what any spine carries. Against a record with an author, a name that is not theirs counts against it.
    func evidence(
        _ query: PreparedQuery, _ record: PreparedRecord, rarity: WordRarity = .unknown, titled: Set<UInt64> = []
    ) -> MatchEvidence {
        // The title as read: whichever of its forms the text shows best.
        func covered(_ words: [Word]) -> Coverage { coverage(words, in: query, rarity: rarity) }
        var title = covered(record.mainTitle)
        if !record.firstAlternative.isEmpty {
            let alternative = covered(record.firstAlternative)
            if alternative.share > title.share { title = alternative }
        }
        // A spine that prints the subtitle at length shows the title whole, even when a short word of it is misread
        // ("mōlk The truth, the lies and the unbelievable story…" for "Milk: The Truth, the Lies and…"). A word or two
        // of a subtitle is not enough: the author's other books share those ("El Origen de la cultura" is not
        // "Caníbales y reyes : los orígenes de la cultura").
        let subtitle = record.subtitle.isEmpty ? Coverage() : covered(record.subtitle)
        if subtitle.mass >= Self.subtitleReadMass {
            let whole = covered(record.titleWords)
            if whole.share >= title.share { title = whole }
        }
        let hasAuthor = !record.surnames.isEmpty
        let author = record.surnames.map(query.presence(of:)).max() ?? 0
        let tag = query.isStructured ? 0 : tagAgreement(record, query)
        let explained = explainedShare(
            of: query, by: record, forgiving: hasAuthor ? 0 : Self.authorlessAllowance, except: titled)

        var total =
            Self.titleWeight * title.share + Self.subtitleWeight * subtitle.share + Self.explainedWeight * explained
        var weights = Self.titleWeight + Self.subtitleWeight + Self.explainedWeight
        if query.hasAuthor && hasAuthor { total += Self.authorWeight * author; weights += Self.authorWeight }
        if !query.isStructured { total += Self.tagWeight * tag; weights += Self.tagWeight }
        var score = total / weights
        if let year = record.year, query.years.contains(year) { score += Self.yearBonus }
        if let isbn = query.isbn, isbn == record.isbn13 { score += Self.isbnBonus }
        if title.information <= Self.thinTitleInformation && author < 0.8 && tag < 0.8 {
            // Less than one ordinary word ("Poems", "Collected Stories"): down more.
            score *= Self.thinTitleFactor - 0.15 * max(0, 1 - title.information / Self.thinTitleInformation)
        }
        // A text mostly about something else (a longer title that merely contains this one) is not this book.
        if explained < Self.explainedFloor { score *= Self.unexplainedFactor }
        return MatchEvidence(
            score: min(score, 1), lead: 0, title: title.share, titleMass: title.mass,
            titleInformation: title.information,
            author: author, tag: tag, explained: explained,
            callNumberDisagrees: tag < 1 && !query.isStructured && callNumberDisagrees(record, query),
            numberDisagrees: numberDisagrees(record, query))
    }

    /// Whether the record's title ends in a volume number ("Gramática ativa. 2", "Francés 2 : curso…") that
    /// the text does not show while it shows another one ("Gramática Ativa 1"): the spine is another volume.
    /// One or two digits (years are not volumes), never the call number's own; a number inside a title
    /// ("50 excursions") is the title, not a volume.
    private func numberDisagrees(_ record: PreparedRecord, _ query: PreparedQuery) -> Bool {
        guard let volume = record.mainTitle.last, record.mainTitle.count > 1, Self.isVolumeNumber(volume.bytes),
            !query.contains(volume)
        else { return false }
        let label = Set(record.tag.map(\.hash))
        return query.words.contains { Self.isVolumeNumber($0.bytes) && !label.contains($0.hash) }
    }

    private static func isVolumeNumber(_ bytes: [UInt8]) -> Bool {
        (1...2).contains(bytes.count) && bytes.allSatisfy(isDigit)
    }

    /// Whether the text tells `record` apart from `rival`: it shows a word of the record's title that the
    /// rival's lacks (a volume number, "Intermediate", "Norte") and no word of the rival's that the record's
    /// lacks. Little words ("la", "y") say nothing either way; a rival's word half read counts against.
    func tellsApart(_ query: PreparedQuery, _ record: PreparedRecord, from rival: PreparedRecord) -> Bool {
        func own(_ words: [Word], against other: [Word]) -> [Word] {
            let theirs = Set(other.map(\.hash))
            return words.filter { !theirs.contains($0.hash) && !WordWeight.function.contains($0.hash) }
        }
        let ours = own(record.titleWords, against: rival.titleWords)
        guard ours.contains(where: { query.presence(of: $0) >= Self.distinctRead }) else { return false }
        // A rival's word that holds a word both titles share ("Prehistoria" beside "Historia") is half read by
        // that shared word alone: it says nothing.
        let shared = record.titleWords.filter { word in
            word.bytes.count >= 4 && rival.titleWords.contains { $0.hash == word.hash }
        }
        return !own(rival.titleWords, against: record.titleWords).contains { word in
            query.presence(of: word) >= Self.rivalRead
                && !shared.contains { word.bytes.count > $0.bytes.count && word.bytes.contains(bytes: $0.bytes) }
        }
    }

    /// A word read this well shows the record; a rival's word read this well (half its trigrams) blocks.
    static let distinctRead = 0.8, rivalRead = 0.45

    /// Whether the text shows the record's call number with another book's part in it: its last class
    /// followed by other letters ("435.6 Lei" where the record has "435.6 Coi"), or its letters after
    /// another class number ("834 Poe" where it has "841B Poe"). One character off ("Bed" for "Bec", "79"
    /// for "179") is the OCR's misreading of the same label, not another label; nor is a word of the record's
    /// own ("N Amos Oz La caixa negra" for "N Oz": "Amos" is the author's name). A spine shows one label, so
    /// this vetoes the record whatever else agrees.
    private func callNumberDisagrees(_ record: PreparedRecord, _ query: PreparedQuery) -> Bool {
        guard let code = record.tag.last, let lastClass = record.tag.dropLast().last else { return false }
        let numbers = record.tag.dropLast().filter { $0.bytes.first.map(Self.isDigit) == true }
        let words = query.words
        for index in words.indices.dropLast() {
            let (word, next) = (words[index], words[index + 1])
            if word.hash == lastClass.hash && (3...4).contains(next.bytes.count) && next.bytes.allSatisfy(Self.isLetter)
                && Self.differences(next.bytes, code.bytes) >= 2 && !record.vocabulary.contains(next.hash)
            {
                return true
            }
            if next.hash == code.hash && !numbers.isEmpty && word.bytes.allSatisfy(Self.isDigit)
                && !numbers.contains(where: { Self.nearly(word.bytes, $0.bytes) })
            {
                return true
            }
        }
        return false
    }

    private static func isLetter(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Characters that differ, position by position, over the shorter of the two.
    private static func differences(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Int {
        zip(a, b).filter { $0 != $1 }.count
    }

    /// A class number read with at most one digit wrong, lined up at its start ("841" for "841B") or its end
    /// ("79" for "179": a label's edge cuts off the first digits).
    private static func nearly(_ read: [UInt8], _ number: [UInt8]) -> Bool {
        differences(read, number) <= 1 || differences(read.reversed(), number.reversed()) <= 1
    }

    /// How much of some words a text shows: the weighted share found, the weight found, and the weight found with
    /// each word weighed by its rarity too (`WordRarity`).
    struct Coverage {
        var share = 0.0, mass = 0.0, information = 0.0
    }

    /// The coverage of `words` in the text, each word's presence found once.
    private func coverage(_ words: [Word], in query: PreparedQuery, rarity: WordRarity = .unknown) -> Coverage {
        var found = 0.0, total = 0.0, informed = 0.0
        for word in words {
            let presence = query.presence(of: word)
            total += word.weight
            found += word.weight * presence
            informed += word.weight * rarity.factor(of: word) * presence
        }
        return total > 0 ? Coverage(share: found / total, mass: found, information: informed) : Coverage()
    }

    /// A call number read whole is sure; otherwise its letters (usually the surname's first three) and
    /// its class numbers count separately, since OCR often drops a digit or a bracket.
    private func tagAgreement(_ record: PreparedRecord, _ query: PreparedQuery) -> Double {
        guard let code = record.tag.last else { return 0 }
        if query.paddedText.contains(bytes: record.paddedTag) { return 1 }
        let codeRead = query.contains(code) ? 1.0 : 0
        let classes = record.tag.dropLast()
        let classesRead =
            classes.isEmpty ? codeRead : Double(classes.filter(query.contains).count) / Double(classes.count)
        return 0.5 * codeRead + 0.4 * classesRead
    }

    /// How much of the text the record accounts for: spines also show publishers and editors, so this
    /// ranks more than it decides. Up to `forgiving` of the weight of the words it does not account for is left
    /// out, but for words in `except`.
    private func explainedShare(
        of query: PreparedQuery, by record: PreparedRecord, forgiving: Double, except: Set<UInt64>
    ) -> Double {
        var found = 0.0, total = 0.0, forgivable = 0.0
        for word in query.words {
            total += word.weight
            if record.vocabulary.contains(word.hash) { found += word.weight; continue }
            var coverage = 0.0
            if word.bytes.count >= 4 {
                let shared = word.trigrams.reduce(0) { $0 + (record.vocabularyTrigrams.contains($1) ? 1 : 0) }
                coverage = Double(shared) / Double(word.trigrams.count)
                if coverage >= 0.5 { found += word.weight * coverage } else { coverage = 0 }
            }
            if !except.contains(word.hash) { forgivable += word.weight * (1 - coverage) }
        }
        total -= min(forgiving, forgivable)
        return total > 0 ? found / total : 0
    }

    // MARK: Deciding

    /// A candidate, taken apart, and the work it is an edition of.
    struct Scored {
        var candidate: MatchCandidate
        var evidence: MatchEvidence
        var prepared: PreparedRecord
        var work: String { prepared.work }

        init(_ evidence: MatchEvidence, record: CatalogueRecord, prepared: PreparedRecord) {
            candidate = MatchCandidate(record: record, score: evidence.score)
            self.evidence = evidence
            self.prepared = prepared
        }
    }

    private func ranked(_ candidates: [Scored]) -> [Scored] {
        candidates.enumerated().sorted { a, b in
            a.element.candidate.score != b.element.candidate.score
                ? a.element.candidate.score > b.element.candidate.score : a.offset < b.offset
        }.map(\.element)
    }

    private func result(_ ranked: [Scored], for query: PreparedQuery) -> MatchResult {
        let shown = ranked.prefix(5).map(\.candidate).filter { $0.score > 0 }
        guard let top = ranked.first, top.candidate.score >= plausible else {
            return MatchResult(best: nil, candidates: shown, decision: .none)
        }
        // Two editions of one work are not rivals: the margin is to the best record of another work. Of the
        // editions, the one whose title the spine shows most is the book (the English "Homo Deus: A Brief History
        // of Tomorrow" for a spine that reads so, beside the Spanish "Homo deus : breve historia del mañana").
        var editions: [Scored] = [], rivals: [Scored] = []
        for scored in ranked {
            if !scored.prepared.isEdition(of: top.prepared) {
                rivals.append(scored)
            } else if scored.candidate.score >= plausible {
                editions.append(scored)
            }
        }
        let chosen =
            editions.max { a, b in
                a.evidence.title != b.evidence.title
                    ? a.evidence.title < b.evidence.title : a.candidate.score < b.candidate.score
            } ?? top
        var evidence = chosen.evidence
        evidence.lead = chosen.candidate.score - (rivals.first?.candidate.score ?? 0)
        // A rival the text tells apart (another volume, another level of one course) is no rival.
        let untold = rivals.first { !tellsApart(query, chosen.prepared, from: $0.prepared) }
        evidence.distinctLead = chosen.candidate.score - (untold?.candidate.score ?? 0)
        let accepted = acceptance.accepts(evidence)
        var result = MatchResult(
            best: chosen.candidate,
            candidates: Array(
                ([chosen.candidate]
                    + shown.filter { Self.identity($0.record) != Self.identity(chosen.candidate.record) })
                    .prefix(5)),
            decision: accepted ? .accepted : .review, evidence: evidence)
        result.otherEditions = editions.map(\.candidate).filter {
            $0.record.isbn13 != nil && $0.record.isbn13 != chosen.candidate.record.isbn13
        }
        return result
    }

    private func unique(_ records: [CatalogueRecord]) -> [CatalogueRecord] {
        var seen = Set<String>()
        return records.filter { seen.insert(Self.identity($0)).inserted }
    }

    package static func identity(_ record: CatalogueRecord) -> String { "\(record.source):\(record.key)" }

    /// Whether two records are editions of one work, and so no rivals for a spine (`PreparedRecord.isEdition`).
    package func areEditions(_ a: CatalogueRecord, _ b: CatalogueRecord) -> Bool {
        prepared[a].isEdition(of: prepared[b])
    }
}

/// A bounded memory of prepared records, by key (a hit is checked against the whole record, so a changed
/// record is prepared again). Emptied when full: simpler than LRU, and a daemon's working set (a batch
/// of photos: some thirty spines each, twenty candidates a spine) refills it at once. A prepared
/// record takes about 2.5 KB, so the memory stays near 10 MB.
final class PreparedRecords: Sendable {
    private let records = Mutex<[String: (record: CatalogueRecord, prepared: PreparedRecord)]>([:])
    static let capacity = 4_096

    subscript(record: CatalogueRecord) -> PreparedRecord {
        if let known = records.withLock({ $0[record.key] }), known.record == record { return known.prepared }
        let made = PreparedRecord(record)
        records.withLock { records in
            if records.count >= Self.capacity { records.removeAll(keepingCapacity: true) }
            records[record.key] = (record, made)
        }
        return made
    }
}
