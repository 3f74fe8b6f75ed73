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
    /// What shelfd would file, against the truth (`EvalScoring.tally`): accepted books (`verified`) that are a
    /// truth book, each truth book once.
    package var acceptedRight = 0
    /// Truth books that are an accepted book or the first candidate of a book left for review, each once.
    package var found = 0
    /// Accepted books that are no truth book.
    package var acceptedWrong = 0
    /// Books left for review that are no truth book: questions without a right answer (a scrap, a stray word).
    package var reviewWrong = 0
    /// Texts read that were left unread, as naming no book (`ResultDocument.unreadSpines`).
    package var unreadSpines = 0

    package var wrong: Int { reported - right }
    package var missed: Int { expected - right }
    /// Found / expected; nil with nothing expected.
    package var recall: Double? { expected == 0 ? nil : Double(right) / Double(expected) }
    /// Right / reported; nil with nothing reported.
    package var precision: Double? { reported == 0 ? nil : Double(right) / Double(reported) }
    package var needsReviewShare: Double? { reported == 0 ? nil : Double(needsReview) / Double(reported) }
    package var secondsPerPhoto: Double? { photos == 0 ? nil : seconds / Double(photos) }

    package static func + (a: EvalScore, b: EvalScore) -> EvalScore {
        EvalScore(
            photos: a.photos + b.photos, expected: a.expected + b.expected, reported: a.reported + b.reported,
            right: a.right + b.right, wrongISBNs: a.wrongISBNs + b.wrongISBNs,
            needsReview: a.needsReview + b.needsReview, seconds: a.seconds + b.seconds,
            acceptedRight: a.acceptedRight + b.acceptedRight, found: a.found + b.found,
            acceptedWrong: a.acceptedWrong + b.acceptedWrong, reviewWrong: a.reviewWrong + b.reviewWrong,
            unreadSpines: a.unreadSpines + b.unreadSpines)
    }
}

extension EvalScore: Codable {
    enum CodingKeys: String, CodingKey {
        case photos, expected, reported, right, wrong, missed, recall, precision, seconds
        case wrongISBNs = "wrong_isbns", needsReview = "needs_review", needsReviewShare = "needs_review_share"
        case secondsPerPhoto = "seconds_per_photo"
        case acceptedRight = "accepted_right", found, acceptedWrong = "accepted_wrong"
        case reviewWrong = "review_wrong", unreadSpines = "unread_spines"
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
        try c.encode(needsReviewShare, forKey: .needsReviewShare);
        try c.encode(secondsPerPhoto, forKey: .secondsPerPhoto)
        try c.encode(acceptedRight, forKey: .acceptedRight); try c.encode(found, forKey: .found)
        try c.encode(acceptedWrong, forKey: .acceptedWrong)
        try c.encode(reviewWrong, forKey: .reviewWrong); try c.encode(unreadSpines, forKey: .unreadSpines)
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            photos: try c.decode(Int.self, forKey: .photos), expected: try c.decode(Int.self, forKey: .expected),
            reported: try c.decode(Int.self, forKey: .reported), right: try c.decode(Int.self, forKey: .right),
            wrongISBNs: try c.decode(Int.self, forKey: .wrongISBNs),
            needsReview: try c.decode(Int.self, forKey: .needsReview),
            seconds: try c.decode(Double.self, forKey: .seconds),
            // Documents written before these counts had none.
            acceptedRight: try c.decodeIfPresent(Int.self, forKey: .acceptedRight) ?? 0,
            found: try c.decodeIfPresent(Int.self, forKey: .found) ?? 0,
            acceptedWrong: try c.decodeIfPresent(Int.self, forKey: .acceptedWrong) ?? 0,
            reviewWrong: try c.decodeIfPresent(Int.self, forKey: .reviewWrong) ?? 0,
            unreadSpines: try c.decodeIfPresent(Int.self, forKey: .unreadSpines) ?? 0)
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
        let matches = pairing(allowed, truthCount: truth.count, order: Array(reported.indices))
        let wrongISBN = reported.indices.filter { r in
            guard let t = matches[r], let mine = reported[r].isbn13,
                let theirs = truth[t].isbn13.flatMap(ISBN.init)?.isbn13
            else { return false }
            return mine != theirs
        }
        let score = EvalScore(
            photos: 1, expected: truth.count, reported: reported.count,
            right: matches.compactMap { $0 }.count, wrongISBNs: wrongISBN.count,
            needsReview: reported.filter { $0.status == .needsReview }.count,
            reviewWrong: reported.indices.filter { reported[$0].status == .needsReview && matches[$0] == nil }.count)
        return Judgement(
            matches: matches, missed: truth.indices.filter { !matches.contains($0) }, wrongISBN: wrongISBN,
            score: score)
    }

    /// What shelfd would file from one photo, against its truth: a book it accepted (`verified`) is what it
    /// says; a book left for review is its first candidate, the record a person is offered first.
    package struct Tally: Sendable, Equatable {
        /// For each reported book, in order: the truth book it was counted as, accepted or as its first candidate.
        package var countedAs: [Int?]
        /// Truth books no accepted book and no first candidate is.
        package var notFound: [Int]
        package var acceptedRight: Int
        package var found: Int
        package var acceptedWrong: Int
    }

    /// Each truth book counts at most once. Accepted books are paired first and keep their truth books, so
    /// `acceptedRight` is as many as the accepted books alone could be, and `found` as many as all of them.
    /// A photo whose truth lists no books is unlabelled: none of its accepted books is counted wrong.
    package static func tally(_ reported: [Book], against truth: [TruthDocument.Book]) -> Tally {
        let accepted = reported.indices.filter { reported[$0].status == .verified }
        let allowed = reported.map { book -> [Int] in
            let filed: (title: String, author: String?)? =
                switch book.status {
                case .verified: (title: book.title, author: book.author)
                case .needsReview: book.candidates?.first.map { (title: $0.record.title, author: $0.record.author) }
                }
            guard let filed else { return [] }
            return truth.indices.filter { isSameBook(title: filed.title, author: filed.author, truth[$0]) }
        }
        let order = accepted + reported.indices.filter { reported[$0].status != .verified }
        let countedAs = pairing(allowed, truthCount: truth.count, order: order)
        return Tally(
            countedAs: countedAs, notFound: truth.indices.filter { !countedAs.contains($0) },
            acceptedRight: accepted.filter { countedAs[$0] != nil }.count,
            found: countedAs.compactMap { $0 }.count,
            acceptedWrong: truth.isEmpty ? 0 : accepted.filter { allowed[$0].isEmpty }.count)
    }

    /// A maximum pairing of reported books (each allowed some truth indices) with truth books, each at most once,
    /// placing the books in `order`: a book placed stays placed as later ones are, though its truth book may change.
    /// For each reported book, the truth index it is paired with.
    static func pairing(_ allowed: [[Int]], truthCount: Int, order: [Int]) -> [Int?] {
        var owner = [Int?](repeating: nil, count: truthCount) // truth index → reported index
        // Kuhn's augmenting paths: a handful of books per photo, so the simple form is enough.
        func place(_ r: Int, _ seen: inout [Bool]) -> Bool {
            for t in allowed[r] where !seen[t] {
                seen[t] = true
                if owner[t] == nil || place(owner[t]!, &seen) { owner[t] = r; return true }
            }
            return false
        }
        for r in order {
            var seen = [Bool](repeating: false, count: truthCount)
            _ = place(r, &seen)
        }
        var matches = [Int?](repeating: nil, count: allowed.count)
        for (t, r) in owner.enumerated() { if let r { matches[r] = t } }
        return matches
    }

    /// The same book: titles equal after normalisation (brackets, subtitles, case, accents, punctuation,
    /// leading article), and the same author surname ("J. R. R. Tolkien", "J.R.R. Tolkien" and "Tolkien, J.R.R."
    /// all give "tolkien"). A truth book without an author is judged on its title alone. A book with the truth
    /// book's ISBN-13 is that book, however its record spells the author ("MacCarthy, Cormac").
    package static func isSameBook(_ book: Book, _ truth: TruthDocument.Book) -> Bool {
        if let isbn = book.isbn13.flatMap(ISBN.init), isbn == truth.isbn13.flatMap(ISBN.init) { return true }
        return isSameBook(title: book.title, author: book.author, truth)
    }

    static func isSameBook(title: String, author: String?, _ truth: TruthDocument.Book) -> Bool {
        if let truthAuthor = truth.author, !TextNormalization.surname(truthAuthor).isEmpty,
            TextNormalization.surname(author) != TextNormalization.surname(truthAuthor)
        {
            return false
        }
        return !titleForms(title).isDisjoint(with: titleForms(truth.title))
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
