import Foundation
import Logging
import ShelfCore
import ShelfProviders
import ShelfStore

/// A provider's request limits, kept in the database: every shelfd process that asks the provider (`watch`,
/// a `run` the timer starts beside it, `scan`, `rescan`, `eval`) takes its turns from the same bucket.
package struct SharedLimits: Sendable {
    package let store: any RequestBudgetStore
    package let budget: RequestBudget

    package init(store: any RequestBudgetStore, budget: RequestBudget) { self.store = store; self.budget = budget }
}

/// How waiting for a request's turn ended.
enum TurnWait: Sendable {
    case granted
    /// `shouldStop` said so (shutting down, the provider paused meanwhile), or the task was cancelled.
    case stopped
    /// `requests_per_day` is reached: a `provider_quota` error that waits for the provider's day to end.
    case dayUsedUp(PhotoError)
}

/// A provider and its limits.
package struct ProviderChannel: Sendable {
    package let provider: any VisionProvider
    /// What the provider is, for the facts kept about its kind (secrets, limits, label).
    package let kind: ProviderKind
    /// Nil: no limit of shelfd's own (a local server, whose queue is the limit; `doctor`, which sends no photo).
    package let limits: SharedLimits?

    package init(_ provider: any VisionProvider, kind: ProviderKind, limits: SharedLimits?) {
        self.provider = provider
        self.kind = kind
        self.limits = limits
    }

    package var name: String { provider.name }

    /// Waits until the provider's limits let one more request start, and counts it. A turn is taken only
    /// when it is due, never reserved ahead, so a photo that gives up waiting leaves nothing for others to
    /// wait out. `shouldStop` is asked at least every half second while waiting. `charging`: the attempt this
    /// request costs, charged with the turn that is granted (in its transaction).
    func waitForTurn(
        time: TimeSource, logger: Logger, shouldStop: () -> Bool, charging meter: (any AttemptMeter)? = nil
    ) async -> TurnWait {
        guard let limits else { return shouldStop() ? .stopped : .granted }
        while true {
            if shouldStop() { return .stopped }
            var turn: RequestTurn
            do {
                if let meter, let job = meter.unchargedJob {
                    let taken = try limits.store.takeRequestTurn(
                        provider: name, budget: limits.budget, charging: job, now: time.now)
                    turn = taken.turn
                    if let attempts = taken.attempts { meter.charged(attempts: attempts) }
                } else {
                    turn = try limits.store.takeRequestTurn(provider: name, budget: limits.budget, now: time.now)
                }
            } catch {
                // Never send uncounted: wait for the database (busy with a long write, or the disk full).
                logger.warning("Cannot take a request turn", metadata: ["provider": "\(name)", "error": "\(error)"])
                turn = .notBefore(time.now.addingTimeInterval(1))
            }
            switch turn {
            case .granted:
                return .granted
            case .notBefore(let date):
                var wait = date.timeIntervalSince(time.now)
                while wait > 0 {
                    if shouldStop() { return .stopped }
                    do { try await time.sleep(for: .seconds(min(wait, 0.5))) } catch { return .stopped }
                    wait = date.timeIntervalSince(time.now)
                }
            case .dayUsedUp(let until, let used):
                let reset = ISO8601DateFormatter().string(from: until)
                return .dayUsedUp(
                    PhotoError(
                        .providerQuota,
                        "\(name) reached the daily limit set in shelfd.toml ([\(name)] requests_per_day: \(used) requests "
                            + "sent today). Photos wait until the provider's day ends at \(reset); raise or remove the limit "
                            + "and restart shelfd to go on sooner.", disposition: .providerWait(until: until)))
            }
        }
    }

    /// One request, tried again at once for a short outage (5xx, network) within the same attempt, each
    /// retry after its own turn. `record` hears each request's latency and outcome (`ok` or the error's code);
    /// `shouldStop` ends the retries (shutting down).
    func send(
        _ upload: PhotoUpload, time: TimeSource, logger: Logger, shouldStop: () -> Bool = { false },
        record: (Duration, String) -> Void = { _, _ in }
    ) async -> Result<RawResponse, PhotoError> {
        var tries = 1
        while true {
            let started = time.clock.now
            do {
                var raw = try await provider.send(upload)
                if raw.latency == nil { raw.latency = started.duration(to: time.clock.now) }
                record(raw.latency ?? .zero, "ok")
                return .success(raw)
            } catch let error {
                record(started.duration(to: time.clock.now), error.code.rawValue)
                guard tries < FailurePolicy.triesPerAttempt, !shouldStop(),
                    let delay = FailurePolicy.quickRetryDelay(for: error, try: tries)
                else { return .failure(error) }
                logger.warning(
                    "Provider request failed; trying again",
                    metadata: [
                        "code": "\(error.code.rawValue)", "try": "\(tries)",
                        "delay_s": "\(String(format: "%.1f", delay))",
                    ])
                try? await time.sleep(for: .seconds(delay))
                switch await waitForTurn(time: time, logger: logger, shouldStop: shouldStop) {
                case .granted: break
                case .stopped: return .failure(error)
                case .dayUsedUp(let quota): return .failure(quota)
                }
                tries += 1
            }
        }
    }
}

/// Who is asked about a photo: one provider, or a fast one first and an accurate one when the fast
/// answer is not good enough (any book below `escalateBelow`, or no answer at all).
package enum Lineup: Sendable {
    case single(ProviderChannel)
    case hybrid(fast: ProviderChannel, accurate: ProviderChannel, escalateBelow: Double)

    /// The name jobs and status use: the provider's, or "hybrid".
    package var name: String {
        switch self {
        case .single(let channel): channel.name
        case .hybrid: "hybrid"
        }
    }

    package var model: String {
        switch self {
        case .single(let channel): channel.provider.model
        case .hybrid(let fast, let accurate, _):
            "\(fast.name):\(fast.provider.model)+\(accurate.name):\(accurate.provider.model)"
        }
    }

    package var channels: [ProviderChannel] {
        switch self {
        case .single(let channel): [channel]
        case .hybrid(let fast, let accurate, _): [fast, accurate]
        }
    }
}
