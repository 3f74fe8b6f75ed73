/// What a candidate's score rests on, each part 0…1 (but the title's weight): what the acceptance rule looks at.
package struct MatchEvidence: Sendable, Equatable {
    package var score: Double
    /// The lead over the best record of another work (the whole score when there is none).
    package var lead: Double
    /// The share of the record's title (or its first alternative title, or its title with its subtitle) the text
    /// covers, and the weight found (an ordinary word weighs 1, a short or generic word less).
    package var title: Double
    package var titleMass: Double
    /// The title's weight found with each word weighed by its rarity in the catalogue too (`WordRarity`: 1 for a
    /// word one entry in a million holds, 0.5 for one in a thousand or when nothing is known).
    package var titleInformation: Double
    /// How well the author's surname is read; 0 when the reading names no author.
    package var author: Double
    /// How well the call number is read: 1 whole, 0.9 its letters and its classes apart, less for a part.
    package var tag: Double
    /// The share of the text the record accounts for.
    package var explained: Double
    /// The text shows the record's call number with another book's letters or class: another book's label.
    package var callNumberDisagrees: Bool
    /// The record's title has a volume number the text does not show, and the text shows another.
    package var numberDisagrees: Bool
    /// The lead over the best record of another work that the text does not tell apart from this one (a
    /// sibling volume whose distinguishing word the text shows is no rival); at least `lead`.
    package var distinctLead: Double

    package init(
        score: Double, lead: Double, title: Double, titleMass: Double, titleInformation: Double? = nil,
        author: Double, tag: Double, explained: Double, callNumberDisagrees: Bool = false,
        numberDisagrees: Bool = false, distinctLead: Double? = nil
    ) {
        self.score = score; self.lead = lead; self.title = title; self.titleMass = titleMass
        self.titleInformation = titleInformation ?? titleMass * WordRarity.unknownWord
        self.author = author; self.tag = tag; self.explained = explained; self.callNumberDisagrees = callNumberDisagrees
        self.numberDisagrees = numberDisagrees; self.distinctLead = distinctLead ?? lead
    }
}

/// When a spine's best record is taken as the book without asking (ARCHITECTURE.md, "One entry per work"). A high score alone is not
/// enough: a book that is not in the catalogue often scores well against another book by the same
/// author, another volume, or another book with the same short title. So the record must be confirmed by
/// something a different book would not show, in one of three ways:
///
/// - **confirmed**: the author's surname or the call number agrees, some of the title is read, and the
///   score is at least `score`; with the call number alone, at least one ordinary word of the title (a
///   label's letters are often the title's own first letters, "641 Wok", "91(026)(45) Rom" for "Roma",
///   so a label and a scrap of title are one piece of evidence, not two);
/// - **confirmed twice**: the surname *and* the call number agree and the record accounts for nearly all
///   of the text (the title may be too damaged to read), with a lead of at least 0.1;
/// - **title alone**: nothing confirms it, but the text covers nearly all of a title whose words read weigh at
///   least `titleAloneMass` by their rarity in the catalogue (`MatchEvidence.titleInformation`: one rare word
///   does, "Linear Algebra" among a maths shelf or "Poems" does not, nor one word whose rarity nothing tells),
///   the score is at least `score`, and the lead at least `titleAloneLead`. A record without an author or a
///   call number (a list of titles) can only be taken this way.
///
/// Every way needs the record to lead, by `lead`, the best record of another work that the text does not
/// tell apart from it. A sibling (another volume, level or translation, usually with the same author and
/// call number) scores nearly as well, so the plain lead over it is small even when the spine settles
/// which one it is; the text tells the two apart when it shows a word of this record's title that the
/// sibling's lacks ("Intermediate", "Norte" of "India norte") and none of the sibling's own ("Advanced").
/// A sibling the text does not tell apart ("Harris 39 Har" for two of Harris's books) still counts.
///
/// Never when the spine shows the record's call number with another book's part in it ("435.6 Lei" for a
/// record labelled "435.6 Coi", "834 Poe" for "841B Poe"), whatever else agrees: a spine has one label;
/// nor when the record's title ends in a volume number the spine does not show while it shows another
/// ("Gramática Ativa 1" for "Gramática ativa. 2").
///
/// The four fitted constants were chosen by cross-validation (`scripts/bench-match.sh DATASET --photos FOLDER`, which
/// repeats the procedure and prints its figures) on four sets of spines: the development split of the library data
/// set (79 images, 1,606 spines) against its catalogue, and against the same catalogue with every other entry's
/// author taken away; and the development photos' spines (`home-shelf`, read offline) against their list with its
/// authors and without. Ten folds of whole images: the constants of a small grid that accept the most on nine folds,
/// each set's share counting the same (so a list of titles weighs as much as the library's 1,252 spines), while
/// keeping, over all four, wrong matches among the accepted ≤ 0.5 %, spines whose book is not in the catalogue
/// accepted ≤ 5 %, and spines whose book (every edition of it) was taken out of the catalogue accepted ≤ 4 % (a point
/// under the target, so the rule still holds on unseen images), then judged on the tenth; the constants below are
/// the same choice made on all images. The fixed thresholds (what counts as a surname, a call number or a title
/// read, "nearly all", "an ordinary word", when a word tells two titles apart) are not fitted: they say "read,
/// allowing OCR damage"; the grid of `titleAloneMass` starts above 0.5, so that a word whose rarity nothing tells
/// never stands alone.
package struct AcceptanceRule: Sendable, Equatable {
    /// The least score for the confirmed and title-alone ways.
    package var score: Double
    /// The least lead over the best record of another work the text does not tell apart, for every way.
    package var lead: Double
    /// The lead a title alone needs.
    package var titleAloneLead: Double
    /// The information a title alone needs read (`MatchEvidence.titleInformation`): a title of one rare word
    /// can stand alone, one of common words cannot, nor one word when the catalogue cannot say how rare it is.
    package var titleAloneMass: Double

    /// The rule shelfd uses, constants from the cross-validation described above.
    package static let standard = AcceptanceRule(score: 0.6, lead: 0.1, titleAloneLead: 0.2, titleAloneMass: 0.6)

    /// A surname read this well is the author's (a damaged or cut-off reading still counts).
    static let authorRead = 0.8
    /// A call number read whole, or its letters and its classes apart.
    static let callNumberRead = 0.9
    /// A confirmed record still needs this share of its title read: the author's other books are not it.
    static let someTitle = 0.25
    /// A call number confirms a title read of at least one ordinary word (an ordinary word weighs 1).
    static let callNumberTitleMass = 1.0
    /// A title alone must be read nearly whole.
    static let wholeTitle = 0.9
    /// A record confirmed by both surname and call number must account for nearly all of the text, and,
    /// with none of its title read, lead by at least this much whatever `lead` is: the author's book that
    /// is not in the catalogue often shares a subtitle's words with one that is ("El Origen de la
    /// cultura" for "Caníbales y reyes : los orígenes de la cultura"). A floor, not fitted: on the
    /// development split every floor up to 0.1 accepts the same spines.
    static let confirmedTwiceExplained = 0.9, confirmedTwiceLead = 0.1

    package func accepts(_ evidence: MatchEvidence) -> Bool {
        guard evidence.distinctLead >= lead, !evidence.callNumberDisagrees, !evidence.numberDisagrees else {
            return false
        }
        let author = evidence.author >= Self.authorRead, callNumber = evidence.tag >= Self.callNumberRead
        if author && callNumber && evidence.explained >= Self.confirmedTwiceExplained
            && evidence.distinctLead >= Self.confirmedTwiceLead
        {
            return true
        }
        guard evidence.score >= score, evidence.title >= Self.someTitle else { return false }
        if author || (callNumber && evidence.titleMass >= Self.callNumberTitleMass) { return true }
        return evidence.title >= Self.wholeTitle && evidence.titleInformation >= titleAloneMass
            && evidence.distinctLead >= titleAloneLead
    }
}
