import Foundation
import ShelfConfig
import ShelfCore
import ShelfStore
import Synchronization

/// The status the web page serves (`/api/v1/status`, the overview), built once per change of the database
/// (`StatusQueries.changeStamp`) and second of the clock, however many ask: a script polling status, or fifty at once, costs
/// one statement each while nothing changes. On PostgreSQL, which has no stamp, each request builds it.
package final class StatusCache: Sendable {
    private let last = Mutex<(stamp: String, second: Int64, document: StatusDocument)?>(nil)

    package init() {}

    package func document(config: Configuration, secrets: Secrets?, store: Store, now: Date) throws
        -> StatusDocument
    {
        let second = Int64(now.timeIntervalSince1970.rounded(.down))
        guard let stamp = try store.status.changeStamp() else {
            return try StatusReport.build(config: config, secrets: secrets, store: store, now: now)
        }
        if let cached = last.withLock({ $0 }), cached.stamp == stamp, cached.second == second { return cached.document }
        let document = try StatusReport.build(config: config, secrets: secrets, store: store, now: now)
        last.withLock { $0 = (stamp, second, document) }
        return document
    }
}
