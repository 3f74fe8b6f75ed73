import Foundation
import ShelfCore
import ShelfStore

/// What `/metrics` and `/healthz` report, read from the database at scrape time, where the daemon keeps it (the
/// queue, every provider request with its outcome and latency): `shelfd web` alone reports what the daemon did,
/// and a restart loses nothing. Only `activity` is this process's own, counted since it started.
package struct MetricsDesk: Sendable {
    private let store: Store
    /// The date the oldest waiting photo's age is counted to.
    private let time: TimeSource

    package init(store: Store, time: TimeSource) { self.store = store; self.time = time }

    package struct Reading: Sendable {
        /// This process's traffic with its database, read before the reading's own queries add to it.
        package var activity: StoreActivity
        package var queue: QueueCounts
        package var requests: [(provider: String, outcome: String, count: Int)]
        /// The answered requests' latencies, grouped by provider and millisecond.
        package var latencies: [(provider: String, latencyMs: Int, count: Int)]
    }

    /// True while the database answers a query.
    package func databaseAnswers() -> Bool { store.metrics.isAnswering() }

    package func read() throws -> Reading {
        let activity = store.activity
        return Reading(
            activity: activity, queue: try store.status.queueCounts(now: time.now),
            requests: try store.metrics.requestCounts(), latencies: try store.metrics.answeredLatencies())
    }
}
