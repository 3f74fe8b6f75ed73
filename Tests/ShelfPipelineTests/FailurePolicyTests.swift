import Foundation
import ShelfCore
import ShelfPipeline
import ShelfStore
import Testing

/// What a failure does to a photo: the provider's trouble gives it back, the photo's own costs an attempt.
struct FailurePolicyTests {
    let policy = FailurePolicy(maxAttempts: 3)
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    func describe(_ result: JobOutcome.Result) -> String {
        switch result {
        case .released(_, _, let refund): "released, attempt \(refund ? "refunded" : "kept")"
        case .failed(_, let message, let at): "failed: \(message), in \(Int(at.timeIntervalSince(now).rounded())) s"
        case .dead(_, let message): "dead: \(message)"
        default: "\(result)"
        }
    }

    @Test("An outage, a quota or a bad key gives the photo back with its attempt; no answer about it costs one")
    func providersTroubleIsFree() {
        for error in [
            PhotoError(.network, "no route", disposition: .retry(after: nil)),
            PhotoError(.providerUnavailable, "503", disposition: .retry(after: 5)),
            PhotoError(.providerQuota, "quota", disposition: .providerWait(until: Date())),
            PhotoError(.providerAuth, "bad key", disposition: .providerBroken),
        ] {
            #expect(
                describe(policy.outcome(for: error, jobID: 7, attempts: 3, charged: true, now: now))
                    == "released, attempt refunded")
        }
    }

    @Test("The photo's own trouble waits the provider's delay, and after the last attempt says how to try again")
    func photosOwnTroubleCounts() {
        let rejected = PhotoError(.providerRejected, "400 on this photo", disposition: .retry(after: 30))
        #expect(
            describe(policy.outcome(for: rejected, jobID: 7, attempts: 1, charged: true, now: now))
                == "failed: 400 on this photo, in 30 s")
        #expect(
            describe(policy.outcome(for: rejected, jobID: 7, attempts: 3, charged: true, now: now))
                == "dead: 400 on this photo (gave up after 3 attempts; 'shelfd retry 7' tries again)")
    }

    @Test("A final answer about the photo is final, except from a Batch API job, where the photo goes again alone")
    func finalUnlessFromABatchAPIJob() {
        let blocked = PhotoError(.providerBlocked, "blocked", disposition: .dead)
        #expect(
            describe(policy.outcome(for: blocked, jobID: 7, attempts: 1, charged: true, now: now)) == "dead: blocked")
        #expect(
            describe(policy.outcome(for: blocked, jobID: 7, attempts: 1, charged: true, inBatchAPIJob: true, now: now))
                .hasPrefix("failed: blocked"))
        #expect(
            describe(policy.outcome(for: blocked, jobID: 7, attempts: 3, charged: true, inBatchAPIJob: true, now: now))
                .hasPrefix("dead: blocked (gave up"))
    }

    @Test("Quick retries within an attempt: only for an outage, the server's Retry-After up to 30 s")
    func quickRetries() {
        #expect(
            FailurePolicy.quickRetryDelay(
                for: PhotoError(.providerUnavailable, "503", disposition: .retry(after: 12)), try: 1) == 12)
        #expect(
            FailurePolicy.quickRetryDelay(
                for: PhotoError(.providerUnavailable, "503", disposition: .retry(after: 90)), try: 1) == nil)
        #expect(
            FailurePolicy.quickRetryDelay(
                for: PhotoError(.providerRejected, "400", disposition: .retry(after: nil)), try: 1) == nil)
        let second = FailurePolicy.quickRetryDelay(
            for: PhotoError(.network, "reset", disposition: .retry(after: nil)), try: 2)
        #expect(second.map { (1.6...2.4).contains($0) } == true)
    }
}
