import ShelfCore
import ShelfProviders
import ShelfStore

/// What the reader made of a photo.
package enum PhotoReading: Sendable {
    case read(ReadPhoto)
    /// No provider gave an answer to use: how the last one asked ended, and which one it was.
    case unread(Step, ProviderChannel, runs: [ResultDocument.Run])
}

/// A photo's checked and enriched books, with the answer they were decided from and every run made.
package struct ReadPhoto: Sendable {
    package var answer: ModelAnswer
    /// The run whose answer decided the books.
    package var decided: ResultDocument.Run
    package var runs: [ResultDocument.Run]
    package var books: [Book]
    /// What was read besides the books and names none (`Enricher.Outcome.unread`).
    package var unread: [ResultDocument.UnreadSpine] = []
    /// The model's notes and the enrichment's (why the accurate provider was not asked is `notAsked.note`).
    package var notes: [String]
    package var notAsked: AccurateNotAsked?
    /// What was measured on the photo while it was prepared (nil when every answer was replayed).
    package var signals: QualitySignals?
}

/// One provider's go at a photo.
package enum Step: Sendable {
    case answered(ModelAnswer, ResultDocument.Run)
    case failed(PhotoError, ResultDocument.Run)
    /// The provider is paused or backing off: not asked.
    case unavailable(ProviderHealth)
    /// Shutting down before the request was sent.
    case stopped
}

/// Hybrid: the accurate provider was not asked about a photo, so its fast reading is kept for review.
package struct AccurateNotAsked: Sendable {
    /// Every book of such a reading waits for a person with this reason.
    package static let reviewReason = "accurate_not_asked"
    package var provider: String
    package var reason: String
    /// Asked again when the provider answers (not after a recheck that it already answered).
    package var awaiting: Bool
    /// How the accurate provider failed; nil when it was not asked at all (paused, backing off, down).
    package var error: PhotoError? = nil

    package var note: String {
        "\(provider) (the accurate provider) was not asked: \(reason); this is the fast reading, every book waits for review"
            + (awaiting ? ", and the photo is read again when \(provider) answers" : "")
    }
}
