/// The provider kinds, the one list a new provider joins: a case in `ProviderKind` and `ProviderName` (the words
/// `pipeline.provider` accepts; both in ShelfCore's `ProviderName.swift`) and its facts below. Everything else about it is in its own file in
/// `Providers/` (`GeminiFacts.swift` …) beside the wire format it builds.

package import ShelfCore

extension ProviderKind {
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
    /// What `pipeline.provider` (and `--provider`) may name (`ProviderName`, in ShelfCore so the pipeline knows it
    /// without the configuration).
    package typealias Provider = ProviderName
}
