import Foundation
package import ShelfCore

/// What the configuration says of a provider kind, written once in its own file (`Providers/GeminiFacts.swift` …):
/// its section's keys and how they are read, `auto`'s rank and the secrets it needs, its request limits, what
/// `doctor` says of its secrets, its label. Building the provider is the wiring's (`ShelfDaemon/ProviderFactory.swift`)
/// and the model `status` shows is the application layer's (`ShelfApp/ProviderModel.swift`): configuration reads, it
/// builds nothing.
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
    let parse: @Sendable (SectionReader, inout Configuration) throws(ConfigError) -> Void

    init(
        kind: ProviderKind, keys: [String], label: String, required: [Secrets.Name] = [], optional: [Secrets.Name] = [],
        secretsLabel: String = "", autoRank: Int? = nil, autoReason: String = "", missingAdvice: String = "",
        limits: @escaping @Sendable (Configuration) -> RequestLimits? = { _ in nil },
        parse: @escaping @Sendable (SectionReader, inout Configuration) throws(ConfigError) -> Void
    ) {
        self.kind = kind; self.keys = keys; self.label = label; self.required = required; self.optional = optional
        self.secretsLabel = secretsLabel; self.autoRank = autoRank; self.autoReason = autoReason
        self.missingAdvice = missingAdvice; self.limits = limits; self.parse = parse
    }

    package var section: String { kind.rawValue }

    /// The required secrets that are missing.
    package func missing(in secrets: Secrets) -> [Secrets.Name] { required.filter { secrets[$0] == nil } }
}

extension ProviderKind {
    /// The providers `auto` may pick, first tried first.
    package static var autoOrder: [ProviderKind] {
        allCases.filter { $0.facts.autoRank != nil }.sorted { $0.facts.autoRank! < $1.facts.autoRank! }
    }
}

/// A provider's `[section]`: its settings with their built-in defaults (`etc/shelfd.toml` repeats them).
package protocol ProviderSection: Sendable, Equatable {
    init()
}

extension ProviderSection {
    fileprivate func isSame(as other: (any ProviderSection)?) -> Bool { self == (other as? Self ?? Self()) }
}

/// Each provider's section, by its type; its facts file gives it a name (`config.gemini`). A section never
/// set holds its defaults.
package struct ProviderSections: Sendable, Equatable {
    private var sections: [ObjectIdentifier: any ProviderSection] = [:]

    package init() {}

    package subscript<Section: ProviderSection>(_: Section.Type) -> Section {
        get { sections[ObjectIdentifier(Section.self)] as? Section ?? Section() }
        set { sections[ObjectIdentifier(Section.self)] = newValue }
    }

    package static func == (a: ProviderSections, b: ProviderSections) -> Bool {
        Set(a.sections.keys).union(b.sections.keys).allSatisfy { key in
            if let section = a.sections[key] {
                section.isSame(as: b.sections[key])
            } else {
                b.sections[key]!.isSame(as: nil)
            }
        }
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
}

/// The section of a model asked over HTTP (Gemini, Workers AI, an OpenAI-compatible server): which model, where,
/// and how long an answer may take, read the same way.
package protocol ModelServerSection: ProviderSection {
    var model: String { get set }
    /// Without a trailing slash.
    var baseURL: String { get set }
    var timeoutS: Int { get set }
}

extension ModelServerSection {
    /// This section with the model, base URL and timeout `[section]` sets, each checked.
    func readingServer(_ section: SectionReader) throws(ConfigError) -> Self {
        var s = self
        s.model = try section.model(s.model)
        s.baseURL = try section.url("base_url", s.baseURL)
        s.timeoutS = try section.int("timeout_s", s.timeoutS, 1...Int.max)
        return s
    }
}

/// The section of a hosted model service (Gemini, Workers AI): the same keys, read and limited the same way.
package protocol HostedModelSection: ModelServerSection {
    var requestsPerMinute: Int { get set }
    /// 0: no daily limit of shelfd's own.
    var requestsPerDay: Int { get set }
}

extension HostedModelSection {
    /// Its keys, in the order of `etc/shelfd.toml`.
    static var keys: [String] { ["model", "base_url", "requests_per_minute", "requests_per_day", "timeout_s"] }

    /// This section with the values `[section]` sets, each checked.
    func reading(_ section: SectionReader) throws(ConfigError) -> Self {
        var s = try readingServer(section)
        s.requestsPerMinute = try section.int("requests_per_minute", s.requestsPerMinute, 1...Int.max)
        s.requestsPerDay = try section.int("requests_per_day", s.requestsPerDay, 0...Int.max)
        return s
    }

    /// Its request limits; `day` is when the service's day starts again.
    func limits(day: QuotaDay) -> RequestLimits {
        RequestLimits(perMinute: requestsPerMinute, perDay: requestsPerDay, day: day)
    }
}
