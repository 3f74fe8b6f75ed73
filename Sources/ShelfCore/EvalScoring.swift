/// Counts of one evaluation: a photo, a provider's photos, or everything (`shelfd eval`).
package struct EvalScore: Sendable, Equatable {
    /// Photos judged (a photo the provider failed on counts, with every truth book missed).
    package var photos = 0
    /// Books in the truth files.
    package var expected = 0
    /// Books the provider reported.
    package var reported = 0
    /// Reported books that are a truth book (each truth book matched at most once); also the books found.
    package var right = 0
    /// Right books whose ISBN is not the truth's (only where both have one).
    package var wrongISBNs = 0
    /// Reported books left for a person (`needs_review`).
    package var needsReview = 0
    /// Wall time spent on the photos: preparing, the provider (once per photo), checking, enrichment.
    package var seconds = 0.0

    package init(photos: Int = 0, expected: Int = 0, reported: Int = 0, right: Int = 0, wrongISBNs: Int = 0,
                 needsReview: Int = 0, seconds: Double = 0) {
        self.photos = photos; self.expected = expected; self.reported = reported; self.right = right
        self.wrongISBNs = wrongISBNs; self.needsReview = needsReview; self.seconds = seconds
    }

    package var wrong: Int { reported - right }
    package var missed: Int { expected - right }
    /// Found / expected; nil with nothing expected.
    package var recall: Double? { expected == 0 ? nil : Double(right) / Double(expected) }
    /// Right / reported; nil with nothing reported.
    package var precision: Double? { reported == 0 ? nil : Double(right) / Double(reported) }
    package var needsReviewShare: Double? { reported == 0 ? nil : Double(needsReview) / Double(reported) }
    package var secondsPerPhoto: Double? { photos == 0 ? nil : seconds / Double(photos) }

    package static func + (a: EvalScore, b: EvalScore) -> EvalScore {
        EvalScore(photos: a.photos + b.photos, expected: a.expected + b.expected, reported: a.reported + b.reported,
                  right: a.right + b.right, wrongISBNs: a.wrongISBNs + b.wrongISBNs,
                  needsReview: a.needsReview + b.needsReview, seconds: a.seconds + b.seconds)
    }
}

extension EvalScore: Codable {
    enum CodingKeys: String, CodingKey {
        case photos, expected, reported, right, wrong, missed, recall, precision, seconds
        case wrongISBNs = "wrong_isbns", needsReview = "needs_review", needsReviewShare = "needs_review_share"
        case secondsPerPhoto = "seconds_per_photo"
    }

    /// The counts, and the ratios worked out from them so a script need not.
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(photos, forKey: .photos); try c.encode(expected, forKey: .expected)
        try c.encode(reported, forKey: .reported); try c.encode(right, forKey: .right)
        try c.encode(wrong, forKey: .wrong); try c.encode(missed, forKey: .missed)
        try c.encode(wrongISBNs, forKey: .wrongISBNs); try c.encode(needsReview, forKey: .needsReview)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(recall, forKey: .recall); try c.encode(precision, forKey: .precision)
        try c.encode(needsReviewShare, forKey: .needsReviewShare); try c.encode(secondsPerPhoto, forKey: .secondsPerPhoto)
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(photos: try c.decode(Int.self, forKey: .photos), expected: try c.decode(Int.self, forKey: .expected),
                  reported: try c.decode(Int.self, forKey: .reported), right: try c.decode(Int.self, forKey: .right),
                  wrongISBNs: try c.decode(Int.self, forKey: .wrongISBNs),
                  needsReview: try c.decode(Int.self, forKey: .needsReview), seconds: try c.decode(Double.self, forKey: .seconds))
    }
}

/// How reported books are judged against a photo's truth: pure, so tests can assert recall and precision floors.
package enum EvalScoring {
    /// What became of each reported book and each truth book of one photo.
    package struct Judgement: Sendable, Equatable {
        /// For each reported book, in order: the index of the truth book it is, or nil when it is wrong.
        package var matches: [Int?]
        /// Truth books no reported book is.
        package var missed: [Int]
        /// Reported books that are right but carry another ISBN than the truth's.
        package var wrongISBN: [Int]
        /// Counts for this photo (`seconds` left at 0, `photos` at 1).
        package var score: EvalScore
    }

    /// Judges one photo. Each truth book is matched at most once (a book reported twice is right once), and the
    /// pairing is a maximum matching, so the order of the reported books does not change the counts.
    package static func judge(_ reported: [Book], against truth: [TruthDocument.Book]) -> Judgement {
        let allowed = reported.map { book in truth.indices.filter { isSameBook(book, truth[$0]) } }
        var owner = [Int?](repeating: nil, count: truth.count)      // truth index → reported index
        // Kuhn's augmenting paths: a handful of books per photo, so the simple form is enough.
        func place(_ r: Int, _ seen: inout [Bool]) -> Bool {
            for t in allowed[r] where !seen[t] {
                seen[t] = true
                if owner[t] == nil || place(owner[t]!, &seen) { owner[t] = r; return true }
            }
            return false
        }
        for r in reported.indices {
            var seen = [Bool](repeating: false, count: truth.count)
            _ = place(r, &seen)
        }
        var matches = [Int?](repeating: nil, count: reported.count)
        for (t, r) in owner.enumerated() { if let r { matches[r] = t } }
        let wrongISBN = reported.indices.filter { r in
            guard let t = matches[r], let mine = reported[r].isbn13,
                  let theirs = truth[t].isbn13.flatMap(ISBN.init)?.isbn13 else { return false }
            return mine != theirs
        }
        let score = EvalScore(photos: 1, expected: truth.count, reported: reported.count,
                              right: matches.compactMap { $0 }.count, wrongISBNs: wrongISBN.count,
                              needsReview: reported.filter { $0.status == .needsReview }.count)
        return Judgement(matches: matches, missed: truth.indices.filter { owner[$0] == nil }, wrongISBN: wrongISBN,
                         score: score)
    }

    /// The same book: titles equal after normalisation (brackets, subtitles, case, accents, punctuation,
    /// leading article), and the same author surname ("J. R. R. Tolkien", "J.R.R. Tolkien" and "Tolkien, J.R.R."
    /// all give "tolkien"). A truth book without an author is judged on its title alone.
    package static func isSameBook(_ book: Book, _ truth: TruthDocument.Book) -> Bool {
        if let author = truth.author, !TextNormalization.surname(author).isEmpty,
           TextNormalization.surname(book.author) != TextNormalization.surname(author) { return false }
        return !titleForms(book.title).isDisjoint(with: titleForms(truth.title))
    }

    /// The normalised title, and the part after a series or subtitle separator: "The Lord of the Rings: The Two
    /// Towers" is right for a truth of "The Two Towers", as "Dune: Deluxe Edition" is for "Dune".
    static func titleForms(_ title: String) -> Set<String> {
        var forms: Set<String> = [TextNormalization.title(title)]
        for separator in [":", " - ", " — ", " – "] {
            if let range = title.firstRange(of: separator) {
                let tail = TextNormalization.title(String(title[range.upperBound...]))
                if !tail.isEmpty { forms.insert(tail) }
                break
            }
        }
        forms.remove("")
        return forms
    }
}
