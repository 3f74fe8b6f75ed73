import Foundation
import ShelfCore
import ShelfStore

/// The queue as a door shows and moves it: its progress, failed photos put back (`Requeue`, as `shelfd retry`
/// does) and a photo read again (`PhotoRescan`, as `shelfd rescan` does).
package struct QueueDesk: Sendable {
    private let store: Store
    /// The date progress is read at and a retry recorded at.
    private let time: TimeSource

    package init(store: Store, time: TimeSource) { self.store = store; self.time = time }

    /// The counts, the current pass and the photos on their way: what the overview and `/events` show.
    package func progress() throws -> QueueProgress { try store.queue.progress(now: time.now) }

    package func retry(_ jobIDs: [Int64]?) throws -> Requeue.Outcome {
        try Requeue.failed(jobIDs, in: store, now: time.now)
    }

    /// Why these jobs are not failed ones a retry could take, in `Requeue`'s words.
    package func refusals(of jobIDs: [Int64]) throws -> [Int64: String] { try Requeue.refusals(of: jobIDs, in: store) }

    package func rescan(sha256: String, providerChoice: String?) throws -> PhotoRescan.Outcome {
        try PhotoRescan.queue(sha256: sha256, providerChoice: providerChoice, store: store, now: time.now)
    }

    /// True while a `watch` process is registered on this database: it takes a queued photo within a minute.
    package func daemonRuns() -> Bool { !((try? store.workers.all()) ?? []).isEmpty }
}
