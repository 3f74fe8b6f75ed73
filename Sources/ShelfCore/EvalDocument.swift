import Foundation

/// What `shelfd eval --json` prints (schema shelfd.eval/1): each provider's books on each photo with a truth
/// file, judged right or wrong, the truth books it missed, and the counts per photo, per provider and overall.
package struct EvalDocument: Codable, Sendable, Equatable {
    package struct Provider: Codable, Sendable, Equatable {
        /// As chosen: `gemini`, `hybrid`, …
        package var provider: String
        package var model: String
        package var score: EvalScore
        package var photos: [Photo]
        /// A provider's photos, its counts theirs summed.
        package init(provider: String, model: String, photos: [Photo]) {
            self.provider = provider; self.model = model; self.photos = photos
            score = photos.map(\.score).reduce(EvalScore(), +)
        }
    }

    package struct Photo: Codable, Sendable, Equatable {
        /// The photo's file name in the truth folder.
        package var photo: String
        package var score: EvalScore
        package var books: [JudgedBook]
        /// Indices into the truth file's `books` that no reported book is.
        package var missed: [Int]
        /// Indices into the truth file's `books` that no accepted book and no first candidate of a book left for
        /// review is (`EvalScoring.tally`).
        package var notFound: [Int]?
        /// Why the provider gave no answer, when it did not.
        package var error: String?
        /// What was read and left unread, as naming no book (`ResultDocument.unreadSpines`).
        package var unreadSpines: [ResultDocument.UnreadSpine]?

        enum CodingKeys: String, CodingKey {
            case photo, score, books, missed, error, notFound = "not_found", unreadSpines = "unread_spines"
        }

        package init(
            photo: String, score: EvalScore, books: [JudgedBook], missed: [Int], notFound: [Int]? = nil,
            error: String? = nil, unreadSpines: [ResultDocument.UnreadSpine]? = nil
        ) {
            self.photo = photo; self.score = score; self.books = books; self.missed = missed; self.notFound = notFound
            self.error = error; self.unreadSpines = unreadSpines
        }
    }

    package struct JudgedBook: Codable, Sendable, Equatable {
        package var title: String
        package var author: String?
        package var isbn13: String?
        package var status: Book.Status
        package var confidence: Double
        package var box: Box?
        /// The truth book it is (index into the truth file's `books`); nil when it is wrong.
        package var truth: Int?
        package var wrongISBN: Bool
        /// What the reader read on the spine, when a record's title took its place (`Book.spineText`).
        package var spineText: String?
        /// For a book left for review, the record a person is offered first.
        package var firstCandidate: CatalogueRecord?
        /// The truth book it was counted as, accepted or as its first candidate (`EvalScoring.tally`).
        package var countedAs: Int?
        package var right: Bool { truth != nil }

        enum CodingKeys: String, CodingKey {
            case title, author, isbn13, status, confidence, box, truth, wrongISBN = "wrong_isbn",
                spineText = "spine_text", firstCandidate = "first_candidate", countedAs = "counted_as"
        }

        package init(_ book: Book, truth: Int?, wrongISBN: Bool, countedAs: Int? = nil) {
            title = book.title; author = book.author; isbn13 = book.isbn13; status = book.status
            confidence = book.confidence; box = book.box; self.truth = truth; self.wrongISBN = wrongISBN
            spineText = book.spineText
            firstCandidate = book.status == .needsReview ? book.candidates?.first?.record : nil
            self.countedAs = countedAs
        }
    }

    package var schema = "shelfd.eval/1"
    /// The folder of photos and truth files.
    package var truth: String
    package var createdAt: Date
    package var providers: [Provider]
    /// Every provider's photos together.
    package var overall: EvalScore

    enum CodingKeys: String, CodingKey {
        case schema, truth, providers, overall, createdAt = "created_at"
    }

    package init(truth: String, createdAt: Date = Date(), providers: [Provider]) {
        self.truth = truth; self.createdAt = createdAt; self.providers = providers
        overall = providers.map(\.score).reduce(EvalScore(), +)
    }
}

extension EvalDocument.Photo {
    /// One photo's books judged against its truth (`seconds`: the time the provider and enrichment took).
    package static func judged(
        _ photo: String, books: [Book], truth: [TruthDocument.Book], seconds: Double,
        error: String? = nil, unread: [ResultDocument.UnreadSpine] = []
    ) -> EvalDocument.Photo {
        let judgement = EvalScoring.judge(books, against: truth)
        let tally = EvalScoring.tally(books, against: truth)
        var score = judgement.score
        score.seconds = seconds
        score.unreadSpines = unread.count
        score.acceptedRight = tally.acceptedRight; score.found = tally.found; score.acceptedWrong = tally.acceptedWrong
        let judged = books.indices.map { index in
            EvalDocument.JudgedBook(
                books[index], truth: judgement.matches[index],
                wrongISBN: judgement.wrongISBN.contains(index), countedAs: tally.countedAs[index])
        }
        return EvalDocument.Photo(
            photo: photo, score: score, books: judged, missed: judgement.missed,
            notFound: tally.notFound, error: error, unreadSpines: unread.isEmpty ? nil : unread)
    }
}
