/// A provider that reads photos itself (`auto` and `hybrid` choose among these). Typed down to the queue; what
/// shelfd knows of each (secrets, limits, label, how it is built) is `ProviderKind.facts`, in ShelfConfig.
package enum ProviderKind: String, Sendable, CaseIterable, Codable {
    case gemini, cloudflare, openai, ocr
}

/// What `pipeline.provider` and `--provider` may name, in the order messages list them.
package enum ProviderName: String, Sendable, CaseIterable {
    /// Gemini when its key is present, else Cloudflare when its credentials are, else `ocr` (no key, no network).
    case auto
    case gemini, cloudflare, openai, hybrid, ocr

    /// The one provider this names; nil for `auto` and `hybrid`, which choose.
    package var kind: ProviderKind? { ProviderKind(rawValue: rawValue) }

    package init(_ kind: ProviderKind) { self.init(rawValue: kind.rawValue)! }
}
