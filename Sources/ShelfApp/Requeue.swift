import Foundation
import ShelfCore
import ShelfStore

/// `shelfd retry` and the web page's Retry button: failed photos go back in the queue with a fresh attempt
/// count. One function, so the page does exactly what the command does.
package enum Requeue {
    package struct Outcome: Sendable, Equatable {
        /// The jobs put back in the queue.
        package var requeued: [Int64]
        /// Jobs asked for by ID that were not: why, in words ("it is done, not failed", "no such job").
        package var refused: [Int64: String]

        package init(requeued: [Int64], refused: [Int64: String]) { self.requeued = requeued; self.refused = refused }

        /// "Requeued 2 photos."
        package var summary: String { Self.summary(requeued: requeued.count) }
        package static func summary(requeued count: Int) -> String {
            "Requeued \(count) photo\(count == 1 ? "" : "s")."
        }
        /// One line per refused job: "job 12 not requeued: it is done, not failed".
        package var refusals: [String] { refused.keys.sorted().map { "job \($0) not requeued: \(refused[$0]!)" } }
    }

    /// Requeues these jobs, or with `jobIDs` nil every failed one (dead, or waiting to retry).
    /// A running daemon picks them up within seconds; otherwise the next `shelfd run` does.
    package static func failed(_ jobIDs: [Int64]?, in store: Store, now: Date) throws -> Outcome {
        let requeued = try store.queue.requeue(jobIDs: jobIDs, now: now)
        let missing = (jobIDs ?? []).filter { !requeued.contains($0) }
        return Outcome(requeued: requeued, refused: missing.isEmpty ? [:] : try refusals(of: missing, in: store))
    }

    /// Why each of these jobs is not one to requeue: "it is done, not failed", or "no such job".
    package static func refusals(of jobIDs: [Int64], in store: Store) throws -> [Int64: String] {
        let states = try store.queue.jobStates(jobIDs)
        var refused: [Int64: String] = [:]
        for id in jobIDs { refused[id] = states[id].map { "it is \($0.rawValue), not failed" } ?? "no such job" }
        return refused
    }
}
