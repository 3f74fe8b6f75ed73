import Foundation
import ShelfCore
import ShelfStore

/// Gemini's Batch API jobs as `shelfd batch` shows them: the newest first, or one by the name a person gives.
package struct BatchAPIJobHistory: Sendable {
    let store: Store

    package init(store: Store) { self.store = store }

    package func recent(limit: Int) throws -> [BatchAPIJob] { try store.batchAPIJobs.recentBatchAPIJobs(limit: limit) }

    /// The Batch API job named `name`: the provider's `batches/…` or shelfd's display name.
    package func named(_ name: String) throws -> BatchAPIJob? {
        try store.batchAPIJobs.batchAPIJob(named: name)
    }
}
