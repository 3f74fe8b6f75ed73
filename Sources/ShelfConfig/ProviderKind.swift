/// The provider kinds, the one list a new provider joins: a case in `ProviderKind` (and `Configuration.Provider`,
/// the words `pipeline.provider` accepts) and its facts below. Everything else about it is in its own file in
/// `Providers/` (`GeminiFacts.swift` …) beside the wire format it builds.

/// A provider that reads photos itself (`auto` and `hybrid` choose among these). Typed down to the queue.
package enum ProviderKind: String, Sendable, CaseIterable, Codable {
    case gemini, cloudflare, openai, ocr

    /// What shelfd knows of it: its section, secrets, limits, label, `auto` rank, `doctor` check, how it is built.
    package var facts: ProviderFacts {
        switch self {
        case .gemini: .gemini
        case .cloudflare: .cloudflare
        case .openai: .openai
        case .ocr: .ocr
        }
    }
}

extension Configuration {
    /// What `pipeline.provider` (and `--provider`) may name, in the order messages list them.
    package enum Provider: String, Sendable, CaseIterable {
        /// Gemini when its key is present, else Cloudflare when its credentials are, else `ocr` (no key, no network).
        case auto
        case gemini, cloudflare, openai, hybrid, ocr
    }
}

extension Configuration.Provider {
    /// The one provider this names; nil for `auto` and `hybrid`, which choose.
    package var kind: ProviderKind? { ProviderKind(rawValue: rawValue) }

    package init(_ kind: ProviderKind) { self.init(rawValue: kind.rawValue)! }
}
