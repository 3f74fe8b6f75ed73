internal import ShelfCore

// Google's Gemini (`[gemini]`, wire format in ShelfProviders/GeminiProvider.swift).

extension Configuration {
    package struct Gemini: HostedModelSection {
        package var model = "gemini-2.5-flash"
        package var baseURL = "https://generativelanguage.googleapis.com"
        package var requestsPerMinute = 10
        /// Requests per Gemini day (it resets at midnight Pacific); 0: no limit of shelfd's own.
        package var requestsPerDay = 0
        package var timeoutS = 120
        /// `sync`: one request per photo; `batch`: photos go in Gemini Batch API jobs (half the price, hours).
        package var mode = Mode.sync
        /// Photos in one Batch API job (the API's size limits decide inline or a JSONL file).
        package var batchMaxPhotos = 500
        /// How often Batch API jobs in flight are asked about.
        package var batchPollS = 60
        package init() {}

        package enum Mode: String, Sendable, CaseIterable { case sync, batch }

        /// The keys of every hosted section, then batch mode's.
        static var allKeys: [String] { keys + ["mode", "batch_max_photos", "batch_poll_s"] }

        func readingBatchMode(_ section: SectionReader) throws(ConfigError) -> Self {
            var s = self
            s.mode = try section.choice("mode", s.mode)
            s.batchMaxPhotos = try section.int("batch_max_photos", s.batchMaxPhotos, 1...10_000)
            s.batchPollS = try section.int("batch_poll_s", s.batchPollS, 1...86_400)
            return s
        }
    }

    package var gemini: Gemini {
        get { providers[Gemini.self] }
        set { providers[Gemini.self] = newValue }
    }
}

extension Secrets.Name {
    package static let geminiAPIKey = Secrets.Name("gemini_api_key")
}

extension ProviderFacts {
    static let gemini = ProviderFacts(
        kind: .gemini, keys: Configuration.Gemini.allKeys,
        label: "Gemini", required: [.geminiAPIKey], secretsLabel: "Gemini API key", autoRank: 1,
        autoReason: "a Gemini API key is present",
        missingAdvice:
            "No Gemini API key: put it in $CREDENTIALS_DIRECTORY/gemini_api_key (systemd LoadCredential=) or the GEMINI_API_KEY environment variable, then restart shelfd.",
        limits: { $0.gemini.limits(day: .pacific) },
        parse: { s, config throws(ConfigError) in config.gemini = try config.gemini.reading(s).readingBatchMode(s) })
}
