import Foundation
import ShelfConfig
import ShelfCore
import ShelfHardcover
import ShelfPipeline
import ShelfStore

/// `shelfd status`: built from the database alone, so it works whether the daemon runs or not.
package enum StatusReport {
    /// This machine's name as the workers' list gives it: status lists the workers when there are several, or
    /// when the one there runs elsewhere.
    package static var thisHost: String { ProcessIdentity.host }

    /// `secrets` decide what `pipeline.provider = "auto"` picks (by default this process's own). `store`: the
    /// database, open (the web server's, or opened for this report); nil when there is none yet.
    package static func build(
        config: Configuration, secrets: Secrets? = nil, store: Store?,
        now: Date
    ) throws -> StatusDocument {
        let chosen = ProviderChoice.resolve(
            config: config,
            secrets: secrets ?? Secrets.load(environment: ProcessInfo.processInfo.environment))
        let kinds = chosen.kinds(config)
        let running = DaemonLock.isHeld(stateFolder: config.paths.state)
        let waiting = try store?.status.queueCounts(now: now)
        let providers = try kinds.map { kind in
            var provider = try provider(kind, config: config, store: store, now: now)
            if provider.isDown { provider.photosWaiting = waiting.map { $0.pending + $0.leased + $0.failed } ?? 0 }
            return provider
        }
        var overall = providers.last! // single: the one; hybrid: the accurate one decides
        overall.chosenBecause = chosen.reason
        if chosen.provider == .hybrid {
            overall.name = "hybrid"
            overall.model = providers.map { "\($0.name):\($0.model)" }.joined(separator: "+")
        }
        guard let store, let counts = waiting else {
            return StatusDocument(
                daemon: .init(running: running, pid: nil, since: nil, watchMode: nil),
                queue: .init(pending: 0, leased: 0, done: 0, review: 0, failed: 0, dead: 0, oldestPendingS: nil),
                provider: overall, providers: providers, problems: [])
        }
        let workers = try store.workers.all()
        // This machine's daemon: the worker here whose state folder's lock is held.
        let record = running ? workers.first { $0.host == ProcessIdentity.host } : nil
        let awaiting =
            chosen.provider == .hybrid ? try store.queue.awaitingCount(provider: config.hybrid.accurate.rawValue) : 0

        var problems: [StatusDocument.Problem] = []
        for provider in providers where provider.state != "ok" {
            let health = try store.providers.providerHealth(provider.name)
            // The last provider decides (hybrid carries on without its fast one: a warning, not an error).
            let blocking = provider == providers.last
            problems.append(
                .init(
                    code: health?.code ?? "provider_\(provider.state)",
                    severity: provider.state == "paused" && blocking ? "error" : "warning",
                    message: outageSentence(provider, now: now)
                        ?? "\(provider.name): \(provider.reason ?? provider.state)"))
        }
        if awaiting > 0 {
            problems.append(
                .init(
                    code: "accurate_not_asked", severity: "warning",
                    message:
                        "\(awaiting) photo\(awaiting == 1 ? "" : "s") kept the fast reading for review; they are read again when \(config.hybrid.accurate.rawValue) answers"
                ))
        }
        for source in config.enrich.sources where source != .catalogue {
            // A book source that is not being asked: books are decided without it (a warning, not an error).
            guard let health = try store.providers.providerHealth(source.rawValue), health.isInForce(at: now) else {
                continue
            }
            let until = health.until.map { " until \(ISO8601DateFormatter().string(from: $0))" } ?? ""
            problems.append(
                .init(
                    code: health.code ?? "source_unavailable", severity: "warning",
                    message: "\(source.rawValue)\(until): \(health.message ?? health.state.rawValue)"))
        }
        // Pushing to Hardcover waits (a refused token, a rate limit, an outage); the photos do not.
        if let health = try store.providers.providerHealth(HardcoverPusher.name), health.isInForce(at: now) {
            problems.append(
                .init(
                    code: health.code ?? "hardcover_paused", severity: "warning",
                    message: "Hardcover: \(health.message ?? health.state.rawValue)"))
        }
        for problem in try store.status.jobProblems() {
            let message =
                problem.state == .dead
                ? problem.message
                : "\(problem.message) (attempt \(problem.attempts); retrying\(problem.retryAt.map { " at \(ISO8601DateFormatter().string(from: $0))" } ?? ""))"
            problems.append(
                .init(
                    code: problem.code, severity: problem.state == .dead ? "error" : "warning", message: message,
                    path: problem.path, job: problem.jobID))
        }
        // A node with writes_files = true takes them within seconds: none runs.
        let unwritten =
            store.isShared ? try store.results.withoutWriter(finishedBefore: now.addingTimeInterval(-30)) : 0
        if unwritten > 0 {
            problems.append(
                .init(
                    code: "results_without_writer", severity: "warning",
                    message: """
                        \(unwritten) result\(unwritten == 1 ? "" : "s") of photos found at nodes with writes_files = false wait for a node \
                        with writes_files = true: set it on the node that should keep them
                        """))
        }
        for problem in try store.status.pathProblems() {
            problems.append(.init(code: problem.code, severity: "error", message: problem.message, path: problem.path))
        }
        var document = StatusDocument(
            daemon: .init(running: running, pid: record?.pid, since: record?.since, watchMode: record?.watchMode),
            queue: .init(
                pending: counts.pending, leased: counts.leased, done: counts.done, review: counts.review,
                failed: counts.failed, dead: counts.dead, oldestPendingS: counts.oldestPendingSeconds),
            provider: overall, providers: providers, problems: problems, recent: try recentPhotos(store),
            web: try webAddress(store).map(StatusDocument.Web.init))
        if counts.leased > 0 {
            let isAlive = ProcessIdentity.aliveCheck(sharedStore: store.isShared)
            let stopped = try store.status.leaseHolders().filter { !isAlive($0.key) }.values.reduce(0, +)
            document.queue.leasedByStopped = stopped > 0 ? stopped : nil
        }
        // A database a newer binary is still migrating has no Batch API job table yet: no Batch API jobs.
        let apiJobs = ((try? store.batchAPIJobs.batchAPIJobsInFlight()) ?? []).map { job in
            StatusDocument.BatchAPIJob(
                name: job.name, displayName: job.displayName, state: job.state, photos: job.photos,
                ageS: max(0, Int(now.timeIntervalSince(job.createdAt))))
        }
        document.batchAPIJobs = apiJobs.isEmpty ? nil : apiJobs
        document.workers =
            workers.isEmpty
            ? nil
            : workers.map {
                StatusDocument.Worker(
                    host: $0.host, pid: $0.pid, version: $0.version, since: $0.since, heartbeat: $0.heartbeat,
                    inFlight: $0.inFlight, writesFiles: $0.writesFiles)
            }
        let limits = try kinds.compactMap { kind -> StatusDocument.Limit? in
            guard let limits = kind.facts.limits(config) else { return nil }
            return StatusDocument.Limit(
                provider: kind.rawValue, requestsPerMinute: limits.perMinute,
                requestsPerDay: limits.perDay > 0 ? limits.perDay : nil,
                usedToday: try store.providers.requestsToday(provider: kind.rawValue, now: now)?.used ?? 0)
        }
        document.limits = limits.isEmpty ? nil : limits
        return document
    }

    /// The settings the web server writes as it starts listening (and clears as it stops).
    package static let webURLSetting = "web.url", webPIDSetting = "web.pid"

    /// The address of the web page, while the process that serves it lives (a killed one cannot clear it).
    package static func webAddress(_ store: Store) throws -> String? {
        guard let url = try store.settings.value(webURLSetting), !url.isEmpty else { return nil }
        if let pid = try store.settings.value(webPIDSetting).flatMap({ Int32($0) }), kill(pid, 0) != 0, errno == ESRCH {
            return nil
        }
        return url
    }

    /// How many finished photos `status` shows advice for.
    static let recentLimit = 5

    /// The newest finished photos and their suggestions, read from their result documents (on any node of a shared
    /// store, whichever node wrote the file).
    static func recentPhotos(_ store: Store) throws -> [StatusDocument.RecentPhoto] {
        try PhotoResults(store: store).recent(limit: recentLimit).map { recent in
            .init(
                photo: recent.relativePath, finishedAt: recent.finishedAt, books: recent.document.books.count,
                suggestions: recent.document.suggestions)
        }
    }

    static func provider(_ kind: ProviderKind, config: Configuration, store: Store?, now: Date) throws
        -> StatusDocument.Provider
    {
        let model = ProviderModel.name(of: kind, config: config)
        let health = try store?.providers.providerHealth(kind.rawValue)
        // An outage lasts until a probe gets an answer, also while its next probe is due.
        let state = health.map { $0.isInForce(at: now) || $0.isOutage ? $0.state.rawValue : "ok" } ?? "ok"
        let latency = try store?.status.latencyPercentiles(provider: kind.rawValue)
        var provider = StatusDocument.Provider(
            name: kind.rawValue, model: model, state: state,
            backoffUntil: state == "backoff" ? health?.until : nil,
            reason: state == "ok" ? nil : health?.message,
            latencyMs: latency.map { .init(p50: $0.p50, p95: $0.p95) })
        if let health, health.isOutage {
            provider.since = health.since
            provider.nextTry = health.until
        }
        return provider
    }

    /// A provider that is down, in one sentence for `status` and `run`:
    /// "provider: gemini — unreachable since 10:02:11 (Could not connect …), next try 10:04:40; 23 photos waiting".
    package static func outageSentence(_ provider: StatusDocument.Provider, now: Date) -> String? {
        guard provider.isDown else { return nil }
        var sentence = "provider: \(provider.name) — \(provider.state)"
        if let since = provider.since { sentence += " since \(since.timeOfDay)" }
        if let reason = provider.reason { sentence += " (\(reason))" }
        if let next = provider.nextTry {
            sentence += next > now ? ", next try \(next.timeOfDay)" : ", next try with the next photo"
        }
        if let waiting = provider.photosWaiting {
            sentence += "; \(waiting) photo\(waiting == 1 ? "" : "s") waiting"
        }
        return sentence
    }

    /// The one-line summary systemd shows (`STATUS=`) and `status` prints first.
    package static func summary(_ status: StatusDocument) -> String {
        summary(queue: status.queue, provider: status.provider)
    }

    /// The same line from the daemon's own store, without the rest of the report (no problems, latencies or
    /// result files): what `STATUS=` shows every few seconds.
    package static func summary(
        config: Configuration, chosen: Configuration.Provider, store: Store,
        now: Date
    ) throws -> String {
        // `chosen` is resolved (never `auto`); hybrid is decided by its accurate provider.
        guard let kind = chosen == .hybrid ? config.hybrid.accurate : chosen.kind else { return "" }
        let counts = try store.status.queueCounts(now: now)
        var deciding = try provider(kind, config: config, store: store, now: now)
        if chosen == .hybrid { deciding.name = "hybrid" }
        return summary(
            queue: .init(
                pending: counts.pending, leased: counts.leased, done: counts.done, review: counts.review,
                failed: counts.failed, dead: counts.dead, oldestPendingS: counts.oldestPendingSeconds),
            provider: deciding)
    }

    static func summary(queue q: StatusDocument.Queue, provider: StatusDocument.Provider) -> String {
        var parts = ["\(q.pending) pending", "\(q.leased) in progress", "\(q.done) done", "\(q.review) to review"]
        if q.failed > 0 { parts.append("\(q.failed) retrying") }
        if q.dead > 0 { parts.append("\(q.dead) failed") }
        var line = parts.joined(separator: ", ")
        if provider.state != "ok" { line += "; \(provider.name) \(provider.state)" }
        return line
    }
}
