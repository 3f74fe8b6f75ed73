import Foundation
import ShelfCore
import ShelfStore
import Synchronization

/// One photo's way through the queue while it is read: the steps it reaches, each recorded once (hybrid asks twice),
/// and its attempt, charged once, just before the first request that costs anything.
final class JobProgress: AttemptMeter, Sendable {
    let job: ClaimedJob
    private let store: any JobSteps
    /// The date the steps and the charge are recorded at.
    private let time: TimeSource
    private let state: Mutex<State>

    private struct State {
        var stage: JobStage?
        var attempts: Int
        var charged = false
    }

    init(store: any JobSteps, job: ClaimedJob, time: TimeSource) {
        self.job = job; self.store = store; self.time = time
        state = Mutex(State(attempts: job.attempts))
    }

    /// The attempt the photo is on.
    var attempts: Int { state.withLock { $0.attempts } }
    /// Whether this reading charged the attempt: a provider's trouble gives it back.
    var charged: Bool { state.withLock { $0.charged } }

    /// The charge is made under the lock: however many ask, the attempt is charged once.
    func charge() throws -> Int {
        try state.withLock { state in
            if !state.charged {
                state.attempts = try store.chargeAttempt(jobID: job.id, now: time.now)
                Self.charged(&state)
            }
            return state.attempts
        }
    }

    var unchargedJob: Int64? { charged ? nil : job.id }

    func charged(attempts: Int) {
        state.withLock { state in
            state.attempts = attempts
            Self.charged(&state)
        }
    }

    private static func charged(_ state: inout State) {
        state.charged = true
        state.stage = .asking // by the charge's own statement
    }

    func reached(_ stage: JobStage) {
        let isNew = state.withLock { state in
            defer { state.stage = stage }
            return state.stage != stage
        }
        guard isNew else { return }
        try? store.recordStage(stage, jobIDs: [job.id], now: time.now) // the overview's, not worth failing a photo for
    }

    /// The stage was written with another change of the job (an attempt charged, an answer saved): reaching it
    /// writes nothing more.
    func recorded(_ stage: JobStage) {
        state.withLock { $0.stage = stage }
    }
}
