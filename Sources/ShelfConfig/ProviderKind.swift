import Foundation
internal import ShelfCore
import TOMLKit

/// A provider that reads photos itself (`auto` and `hybrid` choose among these).
package enum ProviderKind: String, Sendable, CaseIterable, Codable {
    case gemini, cloudflare, openai, ocr
}

extension Configuration.Provider {
    /// The one provider this names; nil for `auto` and `hybrid`, which choose.
    package var kind: ProviderKind? { ProviderKind(rawValue: rawValue) }

    package init(_ kind: ProviderKind) { self.init(rawValue: kind.rawValue)! }
}

// Each provider's section of shelfd.toml, with its built-in defaults (`etc/shelfd.toml` repeats them).
extension Configuration {
    package struct Gemini: Sendable, Equatable {
        package var model = "gemini-2.5-flash"
        package var baseURL = "https://generativelanguage.googleapis.com"
        package var requestsPerMinute = 10
        /// Requests per Gemini day (it resets at midnight Pacific); 0: no limit of shelfd's own.
        package var requestsPerDay = 0
        package var timeoutS = 120
        package init() {}
    }

    package struct Cloudflare: Sendable, Equatable {
        package var model = "@cf/meta/llama-3.2-11b-vision-instruct"
        package var baseURL = "https://api.cloudflare.com"
        package var requestsPerMinute = 300
        /// Requests per Cloudflare day (it resets at midnight UTC); 0: no limit of shelfd's own.
        package var requestsPerDay = 0
        package var timeoutS = 60
        package init() {}
    }

    /// Any OpenAI-compatible server: Ollama, llama.cpp, vLLM.
    package struct OpenAI: Sendable, Equatable {
        package var model = "qwen2.5vl:7b"
        package var baseURL = "http://127.0.0.1:11434/v1"
        package var timeoutS = 300
        /// Longest side of the image sent, in pixels, 256…8192 (never upscaled).
        package var maxSide = 1536
        /// JPEG quality to start from, 50…100; it steps down when the image is over its byte target.
        package var jpegQuality = 85
        package init() {}
    }

    /// The offline provider (Tesseract).
    package struct OCR: Sendable, Equatable {
        /// Tesseract traineddata names, read together: "eng", "spa", "cat", "deu"… (package tesseract-ocr-<name>).
        package var languages = ["eng"]
        package init() {}
    }
}

/// When a provider's day (and its daily quota) starts again.
package enum QuotaDay: Sendable {
    /// Google's quotas: midnight Pacific time.
    case pacific
    /// Cloudflare's neuron allocation: midnight UTC.
    case utc

    package func end(after now: Date) -> Date {
        switch self {
        case .pacific: QuotaTimes.nextPacificMidnight(after: now)
        case .utc: QuotaTimes.nextUTCMidnight(after: now)
        }
    }
}

/// A remote provider's limits as `shelfd.toml` sets them.
package struct RequestLimits: Sendable, Equatable {
    package var perMinute: Int
    /// 0: no daily limit of shelfd's own.
    package var perDay: Int
    package var day: QuotaDay

    package init(perMinute: Int, perDay: Int, day: QuotaDay) { self.perMinute = perMinute; self.perDay = perDay; self.day = day }
}

/// What shelfd knows of a provider outside its wire format, written once: configuration parsing (its section's
/// keys and how they are read), `auto` (its rank and the secrets it needs), the wiring (its limits), `doctor` (its secrets and what to
/// do when one is missing) and `status` (its label and model) read it. How it is built lives beside its wire
/// format's wiring (`ProviderWiring` in ShelfDaemon).
package struct ProviderFacts: Sendable {
    package let kind: ProviderKind
    /// Its `[section]` keys, in the order of `etc/shelfd.toml`.
    package let keys: [String]
    /// For a person: "Gemini", "the offline OCR (Tesseract)".
    package let label: String
    /// Secrets it cannot work without; `auto` passes it over while one is missing.
    package let required: [Secrets.Name]
    /// A secret it sends when present (a local server may want none).
    package let optional: [Secrets.Name]
    /// The secrets as `doctor` names them ("Gemini API key"), and as `auto` says they are missing ("no …").
    package let secretsLabel: String
    /// Where `auto` ranks it, first tried first; nil: `auto` never picks it.
    package let autoRank: Int?
    /// Why `auto` picked it, after the missing secrets of the providers ranked before it.
    package let autoReason: String
    /// What to do when a required secret is missing.
    package let missingAdvice: String
    /// Its request limits from the configuration; nil for a local server, whose own queue is the limit.
    package let limits: @Sendable (Configuration) -> RequestLimits?
    /// Reads its `[section]` into the configuration, checking every value.
    let parse: @Sendable (Reader, TOMLTable, inout Configuration) throws(ConfigError) -> Void

    package var section: String { kind.rawValue }

    /// The required secrets that are missing.
    package func missing(in secrets: Secrets) -> [Secrets.Name] { required.filter { secrets[$0] == nil } }
}

extension ProviderKind {
    package var facts: ProviderFacts {
        switch self {
        case .gemini:
            ProviderFacts(
                kind: self, keys: ["model", "base_url", "requests_per_minute", "requests_per_day", "timeout_s"],
                label: "Gemini", required: [.geminiAPIKey], optional: [], secretsLabel: "Gemini API key", autoRank: 1,
                autoReason: "a Gemini API key is present",
                missingAdvice: "No Gemini API key: put it in $CREDENTIALS_DIRECTORY/gemini_api_key (systemd LoadCredential=) or the GEMINI_API_KEY environment variable, then restart shelfd.",
                limits: { RequestLimits(perMinute: $0.gemini.requestsPerMinute, perDay: $0.gemini.requestsPerDay, day: .pacific) },
                parse: { reader, t, config throws(ConfigError) in
                    var g = config.gemini
                    g.model = try reader.model(t, "gemini", g.model)
                    g.baseURL = try reader.url(t, "gemini", "base_url", g.baseURL)
                    g.requestsPerMinute = try reader.int(t, "gemini", "requests_per_minute", g.requestsPerMinute, 1...Int.max)
                    g.requestsPerDay = try reader.int(t, "gemini", "requests_per_day", g.requestsPerDay, 0...Int.max)
                    g.timeoutS = try reader.int(t, "gemini", "timeout_s", g.timeoutS, 1...Int.max)
                    config.gemini = g
                })
        case .cloudflare:
            ProviderFacts(
                kind: self, keys: ["model", "base_url", "requests_per_minute", "requests_per_day", "timeout_s"],
                label: "Cloudflare Workers AI", required: [.cloudflareAPIToken, .cloudflareAccountID], optional: [],
                secretsLabel: "Cloudflare API token", autoRank: 2, autoReason: "Cloudflare credentials are present",
                missingAdvice: "No Cloudflare credentials: put the API token and the account ID in $CREDENTIALS_DIRECTORY/cloudflare_api_token and cloudflare_account_id (systemd LoadCredential=) or CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID, then restart shelfd.",
                limits: { RequestLimits(perMinute: $0.cloudflare.requestsPerMinute, perDay: $0.cloudflare.requestsPerDay, day: .utc) },
                parse: { reader, t, config throws(ConfigError) in
                    var c = config.cloudflare
                    c.model = try reader.model(t, "cloudflare", c.model)
                    c.baseURL = try reader.url(t, "cloudflare", "base_url", c.baseURL)
                    c.requestsPerMinute = try reader.int(t, "cloudflare", "requests_per_minute", c.requestsPerMinute, 1...Int.max)
                    c.requestsPerDay = try reader.int(t, "cloudflare", "requests_per_day", c.requestsPerDay, 0...Int.max)
                    c.timeoutS = try reader.int(t, "cloudflare", "timeout_s", c.timeoutS, 1...Int.max)
                    config.cloudflare = c
                })
        case .openai:
            ProviderFacts(
                kind: self, keys: ["model", "base_url", "timeout_s", "max_side", "jpeg_quality"],
                label: "an OpenAI-compatible server", required: [], optional: [.openAIAPIKey],
                secretsLabel: "OpenAI-compatible key", autoRank: nil, autoReason: "", missingAdvice: "",
                limits: { _ in nil },
                parse: { reader, t, config throws(ConfigError) in
                    var o = config.openai
                    o.model = try reader.model(t, "openai", o.model)
                    o.baseURL = try reader.url(t, "openai", "base_url", o.baseURL)
                    o.timeoutS = try reader.int(t, "openai", "timeout_s", o.timeoutS, 1...Int.max)
                    o.maxSide = try reader.int(t, "openai", "max_side", o.maxSide, 256...8192)
                    o.jpegQuality = try reader.int(t, "openai", "jpeg_quality", o.jpegQuality, 50...100)
                    config.openai = o
                })
        case .ocr:
            ProviderFacts(
                kind: self, keys: ["languages"], label: "the offline OCR (Tesseract)", required: [], optional: [],
                secretsLabel: "", autoRank: 3,
                autoReason: "so the offline OCR (Tesseract) reads the photos; set GEMINI_API_KEY for better results",
                missingAdvice: "", limits: { _ in nil },
                parse: { reader, t, config throws(ConfigError) in
                    let languages = try reader.strings(t, "ocr", "languages", config.ocr.languages)
                    // Tesseract names: letters, digits and underscores ("chi_sim"); anything else would reach its loader as a path.
                    if languages.isEmpty || languages.contains(where: { $0.isEmpty || !$0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") } }) {
                        throw reader.invalid("ocr", "languages", "= \(languages) is not a list of Tesseract language names. For example languages = [\"eng\", \"spa\"].")
                    }
                    config.ocr.languages = languages
                })
        }
    }

    /// The providers `auto` may pick, first tried first.
    package static var autoOrder: [ProviderKind] {
        allCases.filter { $0.facts.autoRank != nil }.sorted { $0.facts.autoRank! < $1.facts.autoRank! }
    }
}
