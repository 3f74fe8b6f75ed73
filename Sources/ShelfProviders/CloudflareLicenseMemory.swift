import Synchronization

/// Where the Cloudflare provider remembers that it sent a model's one-time license agreement
/// (`{"prompt": "agree"}`, Llama 3.2 Vision's code 5016), so it is sent once, not once per photo
/// or per restart. The daemon backs it with its database; tests use `InMemoryCloudflareLicenses`.
package protocol CloudflareLicenseMemory: Sendable {
    func hasAgreed(model: String) -> Bool
    func recordAgreement(model: String)
}

/// Agreements kept for the life of the process.
package final class InMemoryCloudflareLicenses: CloudflareLicenseMemory {
    private let models: Mutex<Set<String>>

    package init(agreed: Set<String> = []) { models = Mutex(agreed) }

    package func hasAgreed(model: String) -> Bool { models.withLock { $0.contains(model) } }
    package func recordAgreement(model: String) { _ = models.withLock { $0.insert(model) } }

    /// Every model agreed to so far.
    package var agreedModels: Set<String> { models.withLock { $0 } }
}
