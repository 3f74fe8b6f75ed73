import Logging
import ShelfConfig
import ShelfCore
import ShelfHTTP
import ShelfOCR
import ShelfProviders
import ShelfStore

/// How each provider kind is built from the configuration, beside the facts `ProviderFacts` keeps for the
/// configuration, `auto`, `doctor` and `status`. A new provider adds its case here and in `ProviderKind`.
enum ProviderWiring {
    static func makeProvider(_ kind: ProviderKind, config: Configuration, secrets: Secrets, http: HTTPClient,
                             licenses: any CloudflareLicenseMemory) -> any VisionProvider {
        switch kind {
        case .gemini:
            let settings = GeminiSettings(model: config.gemini.model, baseURL: config.gemini.baseURL,
                                          apiKey: secrets.geminiAPIKey ?? Secret(""),
                                          timeout: .seconds(config.gemini.timeoutS))
            return GeminiProvider(settings: settings, http: http, logger: Logger(label: "shelfd.gemini"))
        case .openai:
            let settings = OpenAICompatibleSettings(model: config.openai.model, baseURL: config.openai.baseURL,
                                                    apiKey: secrets.openAIAPIKey, timeout: .seconds(config.openai.timeoutS),
                                                    maxSide: config.openai.maxSide, quality: config.openai.jpegQuality)
            return OpenAICompatibleProvider(settings: settings, http: http, logger: Logger(label: "shelfd.openai"))
        case .cloudflare:
            let settings = CloudflareSettings(model: config.cloudflare.model, baseURL: config.cloudflare.baseURL,
                                              accountID: secrets.cloudflareAccountID ?? Secret(""),
                                              apiToken: secrets.cloudflareAPIToken ?? Secret(""),
                                              timeout: .seconds(config.cloudflare.timeoutS))
            return CloudflareProvider(settings: settings, http: http, logger: Logger(label: "shelfd.cloudflare"),
                                      licenseStore: licenses)
        case .ocr:
            return OCRProvider(settings: OCRSettings(languages: config.ocr.languages), logger: Logger(label: "shelfd.ocr"))
        }
    }

    /// The model results record and `status` shows: the same words the provider itself gives as `model`.
    static func model(_ kind: ProviderKind, config: Configuration) -> String {
        switch kind {
        case .gemini: config.gemini.model
        case .cloudflare: config.cloudflare.model
        case .openai: config.openai.model
        case .ocr: OCRProvider.model(languages: config.ocr.languages)
        }
    }

    /// The request budget every process shares for this kind; nil when shelfd sets no limit of its own.
    static func requestBudget(_ kind: ProviderKind, config: Configuration) -> RequestBudget? {
        kind.facts.limits(config).map { limits in
            RequestBudget(requestsPerMinute: limits.perMinute, perDay: limits.perDay, dayEnds: { limits.day.end(after: $0) })
        }
    }
}
