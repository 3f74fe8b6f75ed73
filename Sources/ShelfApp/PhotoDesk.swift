import Foundation
import ShelfCore
import ShelfStore

/// The photos shelfd knows, as the web page's photo list and photo pages show them.
package struct PhotoDesk: Sendable {
    private let store: Store

    package init(store: Store) { self.store = store }

    /// Every photo with its newest job, newest first.
    package func summaries() throws -> [PhotoSummary] { try store.queue.photoSummaries() }

    package func summary(sha256: String) throws -> PhotoSummary? { try store.queue.photoSummary(sha256: sha256) }

    /// What became of each reading of the photo: decisions, open items, the works they are filed under.
    package func readings(sha256: String) throws -> PhotoReadings { try store.queue.photoReadings(sha256: sha256) }
}
