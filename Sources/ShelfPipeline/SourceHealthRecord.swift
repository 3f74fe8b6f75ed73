import Foundation
import ShelfEnrichment
import ShelfStore

/// A remote book source's pause lives in the process that met it; it is written to the database so
/// `status` (another process) can show it, beside the providers'.
package enum SourceHealthRecord {
    /// Writes each remote source's health where it differs from what is stored.
    package static func save(_ sources: [any BookSource], to store: any ProviderHealthStore, now: Date) {
        for case let source as any RemoteBookSource in sources {
            let health = source.health
            let state: ProviderHealth.State =
                switch health.state {
                case .ok: .ok
                case .refused: .paused
                case .rateLimited, .unavailable: .backoff
                }
            let record = ProviderHealth(
                name: health.source, state: state,
                until: health.until, code: health.state == .ok ? nil : "source_\(health.state.rawValue)",
                message: health.message)
            let stored = try? store.providerHealth(health.source)
            if stored != record && !(stored == nil && record.state == .ok) {
                try? store.setProviderHealth(record, now: now)
            }
        }
    }

    /// As for providers: a refusal is lifted by a fresh process; a rate limit's wait stands until it ends.
    package static func liftPauses(_ sources: [any BookSource], in store: any ProviderHealthStore, now: Date) {
        for case let source as any RemoteBookSource in sources { try? store.liftPause(source.name, now: now) }
    }
}
