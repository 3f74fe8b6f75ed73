import Foundation
import ShelfCore
import ShelfStore

/// The provider batch jobs as `shelfd batch` shows them: the newest first, or one by the name a person gives.
package struct BatchHistory: Sendable {
    let store: Store

    package init(store: Store) { self.store = store }

    package func recent(limit: Int) throws -> [ProviderBatch] { try store.batches.recentBatches(limit: limit) }

    /// The batch named `name`: the provider's `batches/…` or shelfd's display name.
    package func named(_ name: String) throws -> ProviderBatch? {
        try store.batches.batch(named: name)
    }
}
