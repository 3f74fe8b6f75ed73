import Logging
package import ShelfCore
import ShelfProviders

// Google's Gemini (`[gemini]`, wire format in ShelfProviders/GeminiProvider.swift).

extension Configuration {
    package struct Gemini: HostedModelSection {
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
        kind: .gemini, keys: Configuration.Gemini.keys,
        label: "Gemini", required: [.geminiAPIKey], secretsLabel: "Gemini API key", autoRank: 1,
        autoReason: "a Gemini API key is present",
        missingAdvice: "No Gemini API key: put it in $CREDENTIALS_DIRECTORY/gemini_api_key (systemd LoadCredential=) or the GEMINI_API_KEY environment variable, then restart shelfd.",
        limits: { $0.gemini.limits(day: .pacific) },
        parse: { reader, t, config throws(ConfigError) in config.gemini = try config.gemini.reading(t, "gemini", with: reader) },
        model: { $0.gemini.model },
        make: { config, secrets, context in
            let settings = GeminiSettings(model: config.gemini.model, baseURL: config.gemini.baseURL,
                                          apiKey: secrets.geminiAPIKey ?? Secret(""), timeout: .seconds(config.gemini.timeoutS))
            return GeminiProvider(settings: settings, http: context.http, logger: Logger(label: "shelfd.gemini"))
        })
}
