import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfHTTP
import ShelfOCR
import ShelfProviders
import Synchronization

/// Each provider kind built from its configuration section and secrets: the one place a provider is made. The
/// configuration reads the sections (`ShelfConfig/Providers/*Facts.swift`); the wire formats are ShelfProviders' and
/// ShelfOCR's.
enum ProviderFactory {
    static func make(_ kind: ProviderKind, config: Configuration, secrets: Secrets, context: ProviderContext)
        -> any VisionProvider
    {
        switch kind {
        case .gemini:
            GeminiProvider(
                settings: gemini(config, secrets), http: context.http, logger: Logger(label: "shelfd.gemini"),
                time: context.time)
        case .cloudflare:
            CloudflareProvider(
                settings: CloudflareSettings(
                    model: config.cloudflare.model, baseURL: config.cloudflare.baseURL,
                    accountID: secrets[.cloudflareAccountID] ?? Secret(""),
                    apiToken: secrets[.cloudflareAPIToken] ?? Secret(""),
                    timeout: .seconds(config.cloudflare.timeoutS)),
                http: context.http, logger: Logger(label: "shelfd.cloudflare"),
                licenseStore: RememberedLicenses(memory: context.memory), time: context.time)
        case .openai:
            OpenAICompatibleProvider(
                settings: OpenAICompatibleSettings(
                    model: config.openai.model, baseURL: config.openai.baseURL,
                    apiKey: secrets[.openAIAPIKey],
                    timeout: .seconds(config.openai.timeoutS),
                    maxSide: config.openai.maxSide, quality: config.openai.jpegQuality),
                http: context.http, logger: Logger(label: "shelfd.openai"), time: context.time)
        case .ocr:
            OCRProvider(settings: config.ocrSettings, logger: Logger(label: "shelfd.ocr"), time: context.time)
        }
    }

    /// Gemini's settings, for its provider and for the Batch API's client alike.
    static func gemini(_ config: Configuration, _ secrets: Secrets) -> GeminiSettings {
        GeminiSettings(
            model: config.gemini.model, baseURL: config.gemini.baseURL, apiKey: secrets[.geminiAPIKey] ?? Secret(""),
            timeout: .seconds(config.gemini.timeoutS))
    }
}

/// What a provider is built with besides its configuration and secrets.
package struct ProviderContext: Sendable {
    package var http: HTTPClient
    /// What it remembers across restarts (Cloudflare: the license agreements it sent).
    package var memory: any ProviderMemory
    /// The date its answers and errors are stamped with (a Retry-After's end), and the clock of its latency.
    package var time: TimeSource

    package init(http: HTTPClient, memory: any ProviderMemory, time: TimeSource) {
        self.http = http; self.memory = memory; self.time = time
    }
}

/// Small facts a provider keeps across restarts, by key; the daemon keeps them in its database.
package protocol ProviderMemory: Sendable {
    func value(for key: String) -> String?
    func remember(_ value: String, for key: String)
}

/// Facts kept for the life of the process (`doctor`, which sends no photo, and tests).
package final class InMemoryProviderMemory: ProviderMemory {
    private let values = Mutex<[String: String]>([:])

    package init() {}

    package func value(for key: String) -> String? { values.withLock { $0[key] } }
    package func remember(_ value: String, for key: String) { values.withLock { $0[key] = value } }
}

/// Llama 3.2 Vision's one-time license agreement, remembered across restarts (the daemon's database).
private struct RememberedLicenses: CloudflareLicenseMemory {
    let memory: any ProviderMemory

    func hasAgreed(model: String) -> Bool { memory.value(for: "cloudflare.agreed:\(model)") != nil }
    func recordAgreement(model: String) { memory.remember("yes", for: "cloudflare.agreed:\(model)") }
}
