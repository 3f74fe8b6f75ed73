import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfEnrichment
import ShelfHTTP
import ShelfOCR
import ShelfProviders
import ShelfStore

/// A problem that stops a command before it does anything, with what to do about it.
package struct StartupError: Error, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// Everything a processing command needs, set up in the same order by `watch`, `run` and `scan`.
package struct Runtime: Sendable {
    package let config: Configuration
    package let store: Store
    package let pipeline: Pipeline
    /// The provider this process uses and why (`pipeline.provider = "auto"` decides from the keys present).
    package let chosen: ProviderChoice
    /// For a lineup built later: jobs another process asked for with `--provider` and left unfinished.
    let secrets: Secrets

    /// `choice` overrides `pipeline.provider` for this process (`scan --provider`, `rescan --provider`);
    /// `refreshLookups` asks OpenLibrary and Google Books again instead of using their cached answers.
    package static func start(config: Configuration, secrets: Secrets, logger: Logger,
                              choice: Configuration.Provider? = nil, refreshLookups: Bool = false) throws -> Runtime {
        let paths = config.paths
        for folder in [paths.root, paths.incoming, paths.results, paths.state, paths.responses] {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw StartupError("Cannot create \(folder): \((error as NSError).localizedDescription). Check paths.root and paths.state in the configuration.")
            }
        }
        for folder in [paths.results, paths.responses, paths.root] {
            AtomicFile.removeLeftovers(in: URL(fileURLWithPath: folder))
        }
        let store: Store
        do { store = try Store.open(path: paths.database) } catch {
            throw StartupError("Cannot open the database \(paths.database): \(error)")
        }
        let recovered = try store.recoverLeases(isAlive: ProcessIdentity.isAlive)
        if recovered > 0 {
            logger.notice("Jobs of a stopped process returned to the queue", metadata: ["jobs": "\(recovered)"])
        }

        let chosen = ProviderChoice.resolve(config: config, secrets: secrets, override: choice)
        if config.pipeline.provider == .auto && choice == nil {
            logger.notice("Provider chosen", metadata: ["event": "provider_chosen", "provider": "\(chosen.provider.rawValue)",
                                                        "reason": "\(chosen.reason)"])
        }
        let sources = try makeSources(config: config, secrets: secrets, store: store, refresh: refreshLookups, logger: logger)
        SourceHealthRecord.liftPauses(sources, in: store)
        let lineup = try makeLineup(config: config, secrets: secrets, logger: logger, choice: choice,
                                    licenses: StoredCloudflareLicenses(store: store), sources: sources, limits: store)
        try checkKeys(of: lineup, store: store, secrets: secrets, logger: logger)
        if let choice { try store.holdProviderChoice(choice.rawValue, owner: ProcessIdentity.current) }
        let current = "\(lineup.name)/\(lineup.model)"
        if choice == nil {
            if let previous = try store.setting("provider"), previous != current {
                logger.notice("Provider switched", metadata: ["event": "provider_switched", "from": "\(previous)", "to": "\(current)"])
                try store.addEvent("provider_switched", message: "\(previous) → \(current)")
            }
            try store.setSetting("provider", current)
        }

        let enricher = Enricher(sources: sources, reviewThreshold: config.pipeline.reviewThreshold)
        var settings = PipelineSettings(
            batchSize: config.pipeline.batchSize, concurrency: config.pipeline.concurrency,
            reviewThreshold: config.pipeline.reviewThreshold, maxAttempts: config.pipeline.maxAttempts,
            moveAfter: config.pipeline.after == .move,
            incoming: URL(fileURLWithPath: paths.incoming), results: URL(fileURLWithPath: paths.results),
            processed: URL(fileURLWithPath: paths.processed), libraryFile: URL(fileURLWithPath: paths.libraryFile),
            review: URL(fileURLWithPath: paths.review), responses: URL(fileURLWithPath: paths.responses))
        settings.exports = URL(fileURLWithPath: paths.exports)
        settings.exclusiveShelf = config.export.exclusiveShelf
        settings.probeMax = TimeInterval(config.pipeline.probeMaxS)
        return Runtime(config: config, store: store,
                       pipeline: Pipeline(settings: settings, store: store, lineup: lineup, choice: choice?.rawValue,
                                          enricher: enricher, logger: logger),
                       chosen: chosen, secrets: secrets)
    }

    /// The configured provider (`auto` resolved), or the fast and accurate pair for hybrid. `sources` are the
    /// book sources the offline OCR matches spine texts against (none: it reports the text read). `limits` is
    /// the database whose request budgets every process shares (nil: no limit, for `doctor`, which sends no photo).
    package static func makeLineup(config: Configuration, secrets: Secrets, logger: Logger,
                                   choice: Configuration.Provider? = nil,
                                   licenses: any CloudflareLicenseMemory = InMemoryCloudflareLicenses(),
                                   sources: [any BookSource] = [], limits: Store? = nil) throws -> Lineup {
        let http = HTTPClient(maxConcurrent: config.pipeline.concurrency)
        func channel(_ kind: Configuration.Provider) throws -> ProviderChannel {
            let budget = requestBudget(kind, config)
            return ProviderChannel(try makeProvider(kind, config: config, secrets: secrets, http: http, licenses: licenses, sources: sources),
                                   limits: limits.flatMap { store in budget.map { SharedLimits(store: store, budget: $0) } })
        }
        switch ProviderChoice.resolve(config: config, secrets: secrets, override: choice).provider {
        case .hybrid:
            return .hybrid(fast: try channel(config.hybrid.fast), accurate: try channel(config.hybrid.accurate),
                           escalateBelow: config.hybrid.escalateBelow)
        case let kind:
            return .single(try channel(kind))
        }
    }

    /// `[gemini]` and `[cloudflare]` limits, with the time each provider's daily quota resets. Nil for a
    /// local server (OpenAI-compatible, the offline OCR): its own queue is the limit.
    static func requestBudget(_ kind: Configuration.Provider, _ config: Configuration) -> RequestBudget? {
        switch kind {
        case .gemini:
            RequestBudget(requestsPerMinute: config.gemini.requestsPerMinute, perDay: config.gemini.requestsPerDay,
                          dayEnds: { QuotaTimes.nextPacificMidnight(after: $0) })
        case .cloudflare:
            RequestBudget(requestsPerMinute: config.cloudflare.requestsPerMinute, perDay: config.cloudflare.requestsPerDay,
                          dayEnds: { QuotaTimes.nextUTCMidnight(after: $0) })
        default: nil
        }
    }

    static func makeProvider(_ kind: Configuration.Provider, config: Configuration, secrets: Secrets,
                             http: HTTPClient, licenses: any CloudflareLicenseMemory,
                             sources: [any BookSource]) throws -> any VisionProvider {
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
            return OCRProvider(settings: OCRSettings(languages: config.ocr.languages), sources: sources,
                               logger: Logger(label: "shelfd.ocr"))
        case .hybrid, .auto:
            // makeLineup resolves both before it asks for a single provider.
            throw StartupError("pipeline.provider = \"\(kind.rawValue)\" names no single provider; use gemini, cloudflare, openai or ocr.")
        }
    }

    /// A fresh lineup is asked again even if a configuration problem paused it; one whose key is missing is
    /// paused at once with what to do.
    static func checkKeys(of lineup: Lineup, store: Store, secrets: Secrets, logger: Logger) throws {
        for channel in lineup.channels {
            try store.liftPause(channel.name)
            if let limits = channel.limits { try store.liftDailyLimitPause(provider: channel.name, budget: limits.budget) }
            if let problem = missingKeyProblem(for: channel.name, secrets: secrets) {
                try store.setProviderHealth(ProviderHealth(name: channel.name, state: .paused,
                                                           code: PhotoError.Code.providerAuth.rawValue, message: problem))
                logger.error("Provider paused", metadata: ["provider": "\(channel.name)", "reason": "\(problem)"])
            }
        }
    }

    /// The key a provider needs, when it is missing.
    package static func missingKeyProblem(for provider: String, secrets: Secrets) -> String? {
        switch provider {
        case "gemini" where secrets.geminiAPIKey == nil:
            "No Gemini API key: put it in $CREDENTIALS_DIRECTORY/gemini_api_key (systemd LoadCredential=) or the GEMINI_API_KEY environment variable, then restart shelfd."
        case "cloudflare" where secrets.cloudflareAPIToken == nil || secrets.cloudflareAccountID == nil:
            "No Cloudflare credentials: put the API token and the account ID in $CREDENTIALS_DIRECTORY/cloudflare_api_token and cloudflare_account_id (systemd LoadCredential=) or CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID, then restart shelfd."
        default: nil
        }
    }
}

/// Cloudflare's one-time license agreement for Llama 3.2 Vision, remembered across restarts.
struct StoredCloudflareLicenses: CloudflareLicenseMemory {
    let store: Store

    func hasAgreed(model: String) -> Bool { (try? store.setting("cloudflare.agreed:\(model)")) != nil }
    func recordAgreement(model: String) { try? store.setSetting("cloudflare.agreed:\(model)", "yes") }
}
