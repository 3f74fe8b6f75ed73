import Logging
package import ShelfCore
import ShelfProviders

// Google's Gemini (`[gemini]`, wire format in ShelfProviders/GeminiProvider.swift).

extension Configuration {
    package struct Gemini: ProviderSection {
        package var model = "gemini-2.5-flash"
        package var baseURL = "https://generativelanguage.googleapis.com"
        package var requestsPerMinute = 10
        /// Requests per Gemini day (it resets at midnight Pacific); 0: no limit of shelfd's own.
        package var requestsPerDay = 0
        package var timeoutS = 120
        package init() {}
    }

    package var gemini: Gemini {
        get { providers[Gemini.self] }
        set { providers[Gemini.self] = newValue }
    }
}

extension Secrets.Name {
    package static let geminiAPIKey = Secrets.Name("gemini_api_key")
}

extension Secrets {
    package var geminiAPIKey: Secret? { self[.geminiAPIKey] }
}

extension ProviderFacts {
    static let gemini = ProviderFacts(
        kind: .gemini, keys: ["model", "base_url", "requests_per_minute", "requests_per_day", "timeout_s"],
        label: "Gemini", required: [.geminiAPIKey], secretsLabel: "Gemini API key", autoRank: 1,
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
        },
        model: { $0.gemini.model },
        make: { config, secrets, context in
            let settings = GeminiSettings(model: config.gemini.model, baseURL: config.gemini.baseURL,
                                          apiKey: secrets.geminiAPIKey ?? Secret(""), timeout: .seconds(config.gemini.timeoutS))
            return GeminiProvider(settings: settings, http: context.http, logger: Logger(label: "shelfd.gemini"))
        })
}
