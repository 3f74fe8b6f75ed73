import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfEnrichment
import ShelfHTTP
import ShelfOutputs
import ShelfPipeline
import ShelfProviders
import ShelfStore

/// Everything a processing command needs, set up in the same order by `watch`, `run` and `scan`.
package struct Runtime: Sendable {
    package let config: Configuration
    package let store: Store
    package let pipeline: Pipeline
    /// The writer of library.json, review/ and exports/ every commit of this process hands its change to.
    package var files: FilesWriter { pipeline.files }
    /// The daemon's time, which the pipeline and the web page's sessions share.
    package var time: TimeSource { pipeline.time }
    /// The provider this process uses and why (`pipeline.provider = "auto"` decides from the keys present).
    package let chosen: ProviderChoice
    /// For a lineup built later: jobs another process asked for with `--provider` and left unfinished.
    let secrets: Secrets

    /// `choice` overrides `pipeline.provider` for this process (`scan --provider`, `rescan --provider`);
    /// `refreshLookups` asks OpenLibrary and Google Books again instead of using their cached answers.
    /// `time`: the daemon's is the machine's; tests give a manual clock. `owner`: whose claims and leases this
    /// process's are (tests run several workers in one process).
    package static func start(
        config: Configuration, secrets: Secrets, logger: Logger,
        choice: Configuration.Provider? = nil, refreshLookups: Bool = false,
        time: TimeSource = .system, owner: String = ProcessIdentity.current
    ) throws -> Runtime {
        let paths = config.paths
        // Judged before incoming/ is made in the root. A node that leaves the files to another makes no results/.
        let writesFiles = FilesRole.decideAtStart(config: config, shared: config.store.postgres != nil)
        for folder in [paths.root, paths.incoming, paths.state, paths.responses] + (writesFiles ? [paths.results] : [])
        {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw StartupError(
                    "Cannot create \(folder): \((error as NSError).localizedDescription). Check paths.root and paths.state in the configuration."
                )
            }
        }
        // Only the folders shelfd writes, and only its own names (TemporaryFile.prefix): the root may be `~`.
        // results/ is searched whole: its shelves' sub-folders and .history.
        for folder in [paths.responses] + (writesFiles ? [paths.root, paths.review, paths.exports] : []) {
            AtomicFile.removeLeftovers(in: URL(fileURLWithPath: folder))
        }
        if writesFiles { AtomicFile.removeLeftovers(in: URL(fileURLWithPath: paths.results), recursive: true) }
        let store = try StoreAccess.open(config: config, secrets: secrets)
        // A shared store's leases of other machines are theirs until they run out.
        let recovered = try store.queue.recoverLeases(
            isAlive: ProcessIdentity.aliveCheck(sharedStore: store.isShared), now: time.now)
        if recovered > 0 {
            logger.notice("Jobs of a stopped process returned to the queue", metadata: ["jobs": "\(recovered)"])
        }

        let chosen = ProviderChoice.resolve(config: config, secrets: secrets, override: choice)
        if config.pipeline.provider == .auto && choice == nil {
            logger.notice(
                "Provider chosen",
                metadata: [
                    "event": "provider_chosen", "provider": "\(chosen.provider.rawValue)",
                    "reason": "\(chosen.reason)",
                ])
        }
        let sources = try makeSources(
            config: config, secrets: secrets, cache: store.lookupCache,
            catalogue: StoreAccess.catalogue(config: config, shared: store).catalogue,
            refresh: refreshLookups, logger: logger, time: time)
        SourceHealthRecord.liftPauses(sources, in: store.providers, now: time.now)
        let lineup = try makeLineup(
            config: config, secrets: secrets, chosen: chosen,
            memory: StoredProviderMemory(store: store), limits: store, time: time)
        try checkKeys(of: lineup, store: store, secrets: secrets, logger: logger, now: time.now)
        if let choice { try store.queue.holdProviderChoice(choice.rawValue, owner: ProcessIdentity.current) }
        let current = "\(lineup.name)/\(lineup.model)"
        if choice == nil {
            if let previous = try store.settings.value("provider"), previous != current {
                logger.notice(
                    "Provider switched",
                    metadata: ["event": "provider_switched", "from": "\(previous)", "to": "\(current)"])
                try store.queue.addEvent("provider_switched", message: "\(previous) → \(current)", now: time.now)
            }
            try store.settings.set("provider", current)
        }

        var enricher = Enricher(sources: sources, reviewThreshold: config.pipeline.reviewThreshold)
        let library = store.library
        // A library that cannot be read holds nothing: the edition the spine shows is taken.
        enricher.libraryHolds = { isbns in (try? library.heldISBNs(among: isbns)) ?? [] }
        var settings = PipelineSettings(
            batchSize: config.pipeline.batchSize, concurrency: config.pipeline.concurrency,
            reviewThreshold: config.pipeline.reviewThreshold, maxAttempts: config.pipeline.maxAttempts,
            moveAfter: config.pipeline.after == .move,
            incoming: URL(fileURLWithPath: paths.incoming), results: URL(fileURLWithPath: paths.results),
            processed: URL(fileURLWithPath: paths.processed), libraryFile: URL(fileURLWithPath: paths.libraryFile),
            review: URL(fileURLWithPath: paths.review), responses: URL(fileURLWithPath: paths.responses),
            filesLock: URL(fileURLWithPath: paths.filesLock))
        settings.exports = URL(fileURLWithPath: paths.exports)
        settings.exclusiveShelf = config.export.exclusiveShelf
        settings.probeMax = TimeInterval(config.pipeline.probeMaxS)
        settings.barcodes = config.pipeline.barcodes
        settings.roundQuiet = config.shelves.roundQuiet
        // On PostgreSQL a watch hears of every job made due (JobNotificationService): its idle poll is only a safety net.
        if store.isShared { settings.idlePoll = 30 }
        settings.writesFiles = writesFiles
        if store.isShared {
            let node = try FilesRole.node(stateFolder: paths.state)
            settings.node = node
            settings.writesOthersResults = config.store.writesFiles == true
            if !writesFiles { try store.results.leave(node: node) }
        }
        if !writesFiles {
            logger.notice(
                "This worker writes no files for people: a node with writes_files = true writes the results of the photos found here",
                metadata: ["event": "files_elsewhere"])
        }
        return Runtime(
            config: config, store: store,
            pipeline: Pipeline(
                settings: settings, store: store.queue, library: store.library, providers: store.providers,
                sharedResults: store.results,
                rounds: store.shelves, lineup: lineup, choice: choice,
                enricher: enricher, logger: logger, owner: owner, time: time,
                onIdle: {
                    store.releaseMemory(); IdleMemory.release()
                }),
            chosen: chosen, secrets: secrets)
    }

    /// Batch mode's runner when `[gemini] mode = "batch"` or `force` (`run --batch`) with Gemini as the provider; in
    /// sync mode, one that only collects the Batch API jobs still in flight (`submits` false); nil for the usual
    /// request per photo (a `--provider` process, no Batch API job in flight, another provider without `force`).
    package func batchAPIJobRunner(force: Bool = false) throws -> BatchAPIJobRunner? {
        guard pipeline.choice == nil else { return nil }
        let sends = force || config.gemini.mode == .batch
        guard sends || !((try? store.batchAPIJobs.batchAPIJobsInFlight()) ?? []).isEmpty else { return nil }
        guard case .single(let channel) = pipeline.lineup, channel.kind == .gemini else {
            guard sends else { return nil } // collected when Gemini is the provider again
            throw StartupError(
                "Batch mode is Gemini's Batch API, but the provider is \(pipeline.lineup.name). Set "
                    + "pipeline.provider = \"gemini\", or [gemini] mode = \"sync\" and drop --batch.")
        }
        var runner = BatchAPIJobRunner(
            pipeline: pipeline, queue: store.batchAPIJobs,
            client: Self.batchAPIClient(config: config, secrets: secrets, time: pipeline.time),
            maxPhotos: config.gemini.batchMaxPhotos, pollInterval: .seconds(config.gemini.batchPollS))
        runner.submits = sends
        return runner
    }

    /// `shelfd batch cancel`: asks Gemini to cancel a Batch API job; the next poll gives the photos back.
    package static func cancelBatchAPIJob(_ name: String, config: Configuration, secrets: Secrets)
        async throws(PhotoError)
    {
        try await batchAPIClient(config: config, secrets: secrets).cancel(name)
    }

    /// Gemini's Batch and Files APIs as configured (`shelfd batch cancel` needs no more).
    package static func batchAPIClient(config: Configuration, secrets: Secrets, time: TimeSource = .system)
        -> GeminiBatchAPIClient
    {
        GeminiBatchAPIClient(
            settings: ProviderFactory.gemini(config, secrets), http: HTTPClient(maxConcurrent: 2),
            logger: Logger(label: "shelfd.gemini.batch"), time: time)
    }

    /// The configured provider (`auto` resolved), or the fast and accurate pair for hybrid. `limits` is
    /// the database whose request budgets every process shares (nil: no limit, for `doctor`, which sends no photo).
    package static func makeLineup(
        config: Configuration, secrets: Secrets, logger: Logger,
        choice: Configuration.Provider? = nil,
        memory: any ProviderMemory = InMemoryProviderMemory(),
        limits: Store? = nil, time: TimeSource
    ) throws -> Lineup {
        try makeLineup(
            config: config, secrets: secrets,
            chosen: ProviderChoice.resolve(config: config, secrets: secrets, override: choice),
            memory: memory, limits: limits, time: time)
    }

    /// The lineup of a provider already chosen.
    package static func makeLineup(
        config: Configuration, secrets: Secrets, chosen: ProviderChoice,
        memory: any ProviderMemory = InMemoryProviderMemory(),
        limits: Store? = nil, time: TimeSource
    ) throws -> Lineup {
        let context = ProviderContext(
            http: HTTPClient(maxConcurrent: config.pipeline.concurrency), memory: memory, time: time)
        func channel(_ kind: ProviderKind) -> ProviderChannel {
            let facts = kind.facts
            // The request budget every process shares for this kind; none when shelfd sets no limit of its own.
            let budget = facts.limits(config).map { limits in
                RequestBudget(
                    requestsPerMinute: limits.perMinute, perDay: limits.perDay, dayEnds: { limits.day.end(after: $0) })
            }
            return ProviderChannel(
                ProviderFactory.make(kind, config: config, secrets: secrets, context: context),
                kind: kind,
                limits: limits.flatMap { store in budget.map { SharedLimits(store: store.providers, budget: $0) } })
        }
        if chosen.provider == .hybrid {
            return .hybrid(
                fast: channel(config.hybrid.fast), accurate: channel(config.hybrid.accurate),
                escalateBelow: config.hybrid.escalateBelow)
        }
        guard let kind = chosen.provider.kind else {
            // `resolve` never answers `auto`.
            throw StartupError(
                "pipeline.provider = \"\(chosen.provider.rawValue)\" names no provider to ask; use gemini, cloudflare, openai, ocr or hybrid."
            )
        }
        return .single(channel(kind))
    }

    /// A fresh lineup is asked again even if a configuration problem paused it; one whose key is missing is
    /// paused at once with what to do.
    static func checkKeys(of lineup: Lineup, store: Store, secrets: Secrets, logger: Logger, now: Date) throws {
        for channel in lineup.channels {
            try store.providers.liftPause(channel.name, now: now)
            if let limits = channel.limits {
                try store.providers.liftDailyLimitPause(provider: channel.name, budget: limits.budget, now: now)
            }
            if let problem = missingKeyProblem(for: channel.kind, secrets: secrets) {
                try store.providers.setProviderHealth(
                    ProviderHealth(
                        name: channel.name, state: .paused,
                        code: PhotoError.Code.providerAuth.rawValue, message: problem), now: now)
                logger.error("Provider paused", metadata: ["provider": "\(channel.name)", "reason": "\(problem)"])
            }
        }
    }

    /// The key a provider needs, when it is missing.
    package static func missingKeyProblem(for kind: ProviderKind, secrets: Secrets) -> String? {
        let facts = kind.facts
        return facts.missing(in: secrets).isEmpty ? nil : facts.missingAdvice
    }
}

/// What providers remember across restarts (Cloudflare's license agreements), in the database's settings.
struct StoredProviderMemory: ProviderMemory {
    let store: Store

    func value(for key: String) -> String? { try? store.settings.value(key) }
    func remember(_ value: String, for key: String) { try? store.settings.set(key, value) }
}
