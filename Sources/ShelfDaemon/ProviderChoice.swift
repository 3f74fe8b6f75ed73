import ShelfConfig

/// The provider a process uses and why: `pipeline.provider = "auto"` picks the best one the keys allow,
/// so a first run with no key and no network still catalogues (with the offline OCR).
package struct ProviderChoice: Sendable, Equatable {
    package var provider: Configuration.Provider
    /// For a person: "pipeline.provider = auto: no Gemini key or Cloudflare credentials, so the offline OCR".
    package var reason: String

    package init(provider: Configuration.Provider, reason: String) { self.provider = provider; self.reason = reason }

    /// `override` (a `--provider` option) wins; else `pipeline.provider`, with `auto` resolved from the keys present.
    package static func resolve(config: Configuration, secrets: Secrets, override: Configuration.Provider? = nil) -> ProviderChoice {
        if let override, override != .auto { return ProviderChoice(provider: override, reason: "--provider \(override.rawValue)") }
        let configured = config.pipeline.provider
        guard configured == .auto else {
            return ProviderChoice(provider: configured, reason: "pipeline.provider = \(configured.rawValue)")
        }
        if secrets.geminiAPIKey != nil {
            return ProviderChoice(provider: .gemini, reason: "pipeline.provider = auto: a Gemini API key is present")
        }
        if secrets.cloudflareAPIToken != nil && secrets.cloudflareAccountID != nil {
            return ProviderChoice(provider: .cloudflare,
                                  reason: "pipeline.provider = auto: no Gemini API key; Cloudflare credentials are present")
        }
        return ProviderChoice(provider: .ocr, reason: "pipeline.provider = auto: no Gemini API key or Cloudflare credentials, so the offline OCR (Tesseract) reads the photos; set GEMINI_API_KEY for better results")
    }
}
