import Foundation
import ShelfCore
import ShelfStore

/// Whose trouble a failure is, and what it does to the photo (ARCHITECTURE.md, "Whose trouble is it"). The queue, the
/// reader, a provider channel's quick retries and batch mode all ask this one value.
package struct FailurePolicy: Sendable {
    /// Attempts a photo gets for trouble of its own (`[pipeline] max_attempts`).
    package var maxAttempts: Int

    package init(maxAttempts: Int) { self.maxAttempts = maxAttempts }

    /// Requests per attempt for transient failures (5xx, network) before the provider is marked down.
    package static let triesPerAttempt = 3

    /// No connection, DNS, a timeout or a 5xx: the provider's trouble, never charged to the photo.
    package static func isOutage(_ error: PhotoError) -> Bool {
        guard case .retry = error.disposition else { return false }
        return error.code == .network || error.code == .providerUnavailable
    }

    /// Whether a failure is the photo's own: the provider answered about this photo (unreadable, too large,
    /// blocked, an answer that never parses).
    package static func isPhotosOwn(_ error: PhotoError) -> Bool {
        switch error.disposition {
        case .dead: true
        case .retry: !isOutage(error)
        case .providerWait, .providerBroken: false
        }
    }

    /// The wait before trying again within an attempt: the server's Retry-After when it gives one (up to
    /// 30 s), else 1 s, 2 s … with ±20 % jitter. Nil when the error is not worth an immediate retry.
    package static func quickRetryDelay(for error: PhotoError, try number: Int) -> TimeInterval? {
        guard error.code == .providerUnavailable || error.code == .network,
            case .retry(let after) = error.disposition
        else { return nil }
        if let after { return after <= 30 ? after : nil }
        return pow(2, Double(number - 1)) * Double.random(in: 0.8...1.2)
    }

    /// Exponential backoff with ±20 % jitter: 2 s, 4 s, 8 s … capped at 5 minutes.
    package static func backoff(attempt: Int) -> TimeInterval {
        let base = min(300, pow(2, Double(max(1, attempt))))
        return base * Double.random(in: 0.8...1.2)
    }

    /// What the queue does with a photo whose reading failed with `error` at its `attempts`-th attempt. The provider's
    /// trouble gives the photo back, with the attempt if it was `charged`; the photo's own costs the attempt, up to
    /// `maxAttempts`. `inBatchAPIJob`: an answer line of a Batch API job; the photo goes again alone even when the
    /// provider called its trouble final, since a Batch API job is not how the photo is usually asked.
    package func outcome(
        for error: PhotoError, jobID: Int64, attempts: Int, charged: Bool,
        inBatchAPIJob: Bool = false, now: Date
    ) -> JobOutcome.Result {
        guard Self.isPhotosOwn(error) else {
            // The reader told the provider's health when the request failed: the photo only goes back, uncharged.
            return .released(error.code, message: error.message, refundAttempt: charged)
        }
        if case .dead = error.disposition, !inBatchAPIJob { return .dead(error.code, message: error.message) }
        if attempts >= maxAttempts {
            return .dead(
                error.code,
                message: "\(error.message) (gave up after \(attempts) attempts; 'shelfd retry \(jobID)' tries again)")
        }
        let after: TimeInterval? = if case .retry(let after) = error.disposition { after } else { nil }
        return .failed(
            error.code, message: error.message,
            retryAt: now.addingTimeInterval(after ?? Self.backoff(attempt: attempts)))
    }
}
