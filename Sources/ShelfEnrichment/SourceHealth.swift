import Foundation
import Synchronization

/// Whether a remote book source is being asked, and if not, until when and why (for `status`).
package struct SourceHealth: Sendable, Equatable, Codable {
    package enum State: String, Sendable, Codable {
        case ok
        /// 429 or a spent daily quota: asked again after `until`.
        case rateLimited = "rate_limited"
        /// A wrong key or a client the service will not serve: not asked again until the configuration changes.
        case refused
        /// Down or failing: asked again after a short pause.
        case unavailable
    }

    package var source: String
    package var state: State
    /// When it is asked again; nil when `ok`, or `refused` (until the configuration changes).
    package var until: Date?
    /// For a person: what happened and what to do.
    package var message: String?
}

/// A book source that talks to a remote service and can report whether it is being asked.
package protocol RemoteBookSource: BookSource {
    var health: SourceHealth { get }
}

/// Remembers why a source stopped being asked, so a photo of forty spines makes one request to a
/// rate-limited or refusing service, not forty.
final class SourceGate: Sendable {
    private struct State {
        var health: SourceHealth
        /// What every lookup throws while the gate is closed.
        var error: LookupError?
        /// 429s in a row without a Retry-After: each doubles the wait.
        var rateLimitStreak = 0
    }
    private let state: Mutex<State>

    init(source: String) { state = Mutex(State(health: SourceHealth(source: source, state: .ok))) }

    var health: SourceHealth { state.withLock { $0.health } }

    /// Throws the remembered error while the gate is closed; opens it once its time has passed.
    func admit(now: Date) throws(LookupError) {
        let blocked: LookupError? = state.withLock { s in
            guard let error = s.error else { return nil }
            if let until = s.health.until, until <= now {
                s.error = nil
                s.health = SourceHealth(source: s.health.source, state: .ok)
                return nil
            }
            return error
        }
        if let blocked { throw blocked }
    }

    func succeeded() {
        state.withLock { s in
            s.error = nil; s.rateLimitStreak = 0
            s.health = SourceHealth(source: s.health.source, state: .ok)
        }
    }

    /// Closes the gate until `until` (nil: until the configuration changes) and returns the error to throw.
    @discardableResult
    func close(_ error: LookupError, state newState: SourceHealth.State, until: Date?, message: String) -> LookupError {
        state.withLock { s in
            s.error = error
            s.health = SourceHealth(source: s.health.source, state: newState, until: until, message: message)
        }
        return error
    }

    /// The wait after a 429 without Retry-After: 60 s, doubling for each one in a row, at most an hour.
    func nextRateLimitBackoff() -> TimeInterval {
        state.withLock { s in
            s.rateLimitStreak += 1
            return min(3600, 60 * pow(2, Double(s.rateLimitStreak - 1)))
        }
    }
}
