import ShelfCore
import ShelfProviders
import ShelfStore

// What the queue, `scan` and `eval` give the reader: where answers are kept, how attempts are charged, how a
// provider's health is heard.

/// A provider's answer kept on disk (the queue) or in memory (eval), replayed instead of asking again.
package struct SavedAnswer: Sendable {
    /// The queue's row for the answer; nil for one kept in memory.
    package var id: Int64?
    package var raw: RawResponse
    package var file: String
    package var latencyMs: Int?

    package init(id: Int64?, raw: RawResponse, file: String, latencyMs: Int?) {
        self.id = id; self.raw = raw; self.file = file; self.latencyMs = latencyMs
    }
}

/// Where the answers of one photo are kept: a photo's answer is never paid for twice.
package protocol AnswerJournal: Sendable {
    /// The saved answer of this photo from this provider and model, if there is a usable one.
    func saved(from provider: any VisionProvider) -> SavedAnswer?
    /// Keeps an answer before it is acted on, so a crash from here on replays it (a failure to keep it is
    /// logged: the answer is used all the same).
    func save(_ raw: RawResponse, from provider: any VisionProvider, latencyMs: Int) -> SavedAnswer
    /// A saved answer that does not parse is never replayed again.
    func discard(_ saved: SavedAnswer)
    /// A request of this photo that failed, remembered so it is not sent again (eval's run); nil: ask again.
    func failure(from provider: any VisionProvider) -> PhotoError?
    func failed(_ error: PhotoError, from provider: any VisionProvider)
    /// `save` also logs the request that brought the answer (the queue's, in the same transaction): the health
    /// recorder then hears only the requests that failed.
    var logsAnsweredRequests: Bool { get }
}

extension AnswerJournal {
    package var logsAnsweredRequests: Bool { false }
    /// The queue asks again: a failure is the queue's to retry, back off or give up on.
    package func failure(from provider: any VisionProvider) -> PhotoError? { nil }
    package func failed(_ error: PhotoError, from provider: any VisionProvider) {}
}

/// Charges the photo for a request, once, just before the first request that costs anything.
package protocol AttemptMeter: Sendable {
    /// The attempt the photo is on after charging.
    func charge() throws -> Int
    /// The queue's job this meter has still to charge (nil once charged, or outside the queue): its charge can
    /// ride on the request's turn (`RequestBudgetStore.takeRequestTurn(charging:)`).
    var unchargedJob: Int64? { get }
    /// The charge was made with the turn: the attempt the photo is on now.
    func charged(attempts: Int)
}

extension AttemptMeter {
    package var unchargedJob: Int64? { nil }
    package func charged(attempts: Int) {}
}

/// Hears how each provider is doing and says whether it may be asked. The queue keeps it in the database
/// (`StoredProviderHealth`); eval asks regardless and records nothing (`UntrackedProviderHealth`).
package protocol ProviderHealthRecorder: Sendable {
    /// Whether a request may go to the provider now: open, the one probe of a provider that is down, or wait.
    func turn(_ provider: String) -> ProviderTurn
    /// The provider's health as stored, in force or not (read while a photo waits for its turn); nil: never troubled.
    func current(_ provider: String) -> ProviderHealth?
    /// One request's latency and outcome (`ok` or the error's code), for `status`.
    func requested(_ provider: String, latency: Duration, outcome: String)
    /// The provider answered.
    func answered(_ provider: String)
    /// The provider failed; returns the health now in force because of it (nil when the failure is the photo's).
    @discardableResult
    func failed(_ provider: String, error: PhotoError, probe: Bool) -> ProviderHealth?
}

/// Eval's providers: always asked, nothing recorded (eval never pauses the user's queue).
package struct UntrackedProviderHealth: ProviderHealthRecorder {
    package init() {}
    package func turn(_ provider: String) -> ProviderTurn { .open }
    package func current(_ provider: String) -> ProviderHealth? { nil }
    package func requested(_ provider: String, latency: Duration, outcome: String) {}
    package func answered(_ provider: String) {}
    package func failed(_ provider: String, error: PhotoError, probe: Bool) -> ProviderHealth? { nil }
}
