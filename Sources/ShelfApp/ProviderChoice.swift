import ShelfConfig
import ShelfCore

/// The provider a process uses and why: `pipeline.provider = "auto"` picks the best one the keys allow,
/// so a first run with no key and no network still catalogues (with the offline OCR).
package struct ProviderChoice: Sendable, Equatable {
    /// A single provider or `hybrid`; never `auto`.
    package var provider: Configuration.Provider
    /// For a person: "pipeline.provider = auto: no Gemini API key or Cloudflare credentials, so the offline OCR …".
    package var reason: String

    package init(provider: Configuration.Provider, reason: String) { self.provider = provider; self.reason = reason }

    /// `override` (a `--provider` option) wins; else `pipeline.provider`, with `auto` resolved from the keys
    /// present: the first provider in `ProviderKind.autoOrder` whose required secrets are all there.
    package static func resolve(config: Configuration, secrets: Secrets, override: Configuration.Provider? = nil)
        -> ProviderChoice
    {
        if let override, override != .auto {
            return ProviderChoice(provider: override, reason: "--provider \(override.rawValue)")
        }
        let configured = config.pipeline.provider
        guard configured == .auto else {
            return ProviderChoice(provider: configured, reason: "pipeline.provider = \(configured.rawValue)")
        }
        var lacking: [String] = []
        for kind in ProviderKind.autoOrder {
            let facts = kind.facts
            guard facts.missing(in: secrets).isEmpty else { lacking.append(facts.secretsLabel); continue }
            let skipped = lacking.isEmpty ? "" : "no \(lacking.joined(separator: " or ")), "
            return ProviderChoice(
                provider: Configuration.Provider(kind),
                reason: "pipeline.provider = auto: \(skipped)\(facts.autoReason)")
        }
        // The offline OCR needs no secret; it is always there to fall back on.
        return ProviderChoice(provider: .ocr, reason: "pipeline.provider = auto: \(ProviderKind.ocr.facts.autoReason)")
    }

    /// The providers asked: the chosen one, or hybrid's fast and accurate ones.
    package func kinds(_ config: Configuration) -> [ProviderKind] {
        provider.kind.map { [$0] } ?? [config.hybrid.fast, config.hybrid.accurate]
    }
}
