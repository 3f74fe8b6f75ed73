import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfHTTP
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

    package static func start(config: Configuration, secrets: Secrets, logger: Logger) throws -> Runtime {
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

        let provider = try makeProvider(config: config, secrets: secrets, logger: logger)
        // A fresh process re-reads keys and configuration: a pause for a configuration problem is lifted
        // (it comes back at once if the problem is still there). Quota waits stand.
        if let health = try store.providerHealth(provider.name), health.state == .paused {
            try store.setProviderHealth(ProviderHealth(name: provider.name, state: .ok))
        }
        if let problem = missingKeyProblem(config: config, secrets: secrets) {
            try store.setProviderHealth(ProviderHealth(name: provider.name, state: .paused, code: PhotoError.Code.providerAuth.rawValue,
                                                       message: problem))
            logger.error("Provider paused", metadata: ["provider": "\(provider.name)", "reason": "\(problem)"])
        }
        let current = "\(provider.name)/\(provider.model)"
        if let previous = try store.setting("provider"), previous != current {
            logger.notice("Provider switched", metadata: ["event": "provider_switched", "from": "\(previous)", "to": "\(current)"])
            try store.addEvent("provider_switched", message: "\(previous) → \(current)")
        }
        try store.setSetting("provider", current)

        let settings = PipelineSettings(
            batchSize: config.pipeline.batchSize, concurrency: config.pipeline.concurrency,
            reviewThreshold: config.pipeline.reviewThreshold, maxAttempts: config.pipeline.maxAttempts,
            moveAfter: config.pipeline.after == .move,
            incoming: URL(fileURLWithPath: paths.incoming), results: URL(fileURLWithPath: paths.results),
            processed: URL(fileURLWithPath: paths.processed), libraryFile: URL(fileURLWithPath: paths.libraryFile),
            responses: URL(fileURLWithPath: paths.responses),
            requestsPerMinute: requestsPerMinute(config))
        return Runtime(config: config, store: store,
                       pipeline: Pipeline(settings: settings, store: store, provider: provider, logger: logger))
    }

    static func requestsPerMinute(_ config: Configuration) -> Int {
        switch config.pipeline.provider {
        case .cloudflare: config.cloudflare.requestsPerMinute
        default: config.gemini.requestsPerMinute
        }
    }

    static func makeProvider(config: Configuration, secrets: Secrets, logger: Logger) throws -> any VisionProvider {
        switch config.pipeline.provider {
        case .gemini:
            let settings = GeminiSettings(model: config.gemini.model, baseURL: config.gemini.baseURL,
                                          apiKey: secrets.geminiAPIKey ?? Secret(""),
                                          timeout: .seconds(config.gemini.timeoutS))
            return GeminiProvider(settings: settings, http: HTTPClient(maxConcurrent: config.pipeline.concurrency),
                                  logger: Logger(label: "shelfd.gemini"))
        case let other:
            throw StartupError("pipeline.provider = \"\(other.rawValue)\" is not available in this version of shelfd yet; set pipeline.provider = \"gemini\".")
        }
    }

    /// The key the configured provider needs, when it is missing.
    package static func missingKeyProblem(config: Configuration, secrets: Secrets) -> String? {
        switch config.pipeline.provider {
        case .gemini where secrets.geminiAPIKey == nil:
            "No Gemini API key: put it in $CREDENTIALS_DIRECTORY/gemini_api_key (systemd LoadCredential=) or the GEMINI_API_KEY environment variable, then restart shelfd."
        default: nil
        }
    }
}
