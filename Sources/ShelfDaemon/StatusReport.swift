import Foundation
import ShelfConfig
import ShelfCore
import ShelfStore

/// `shelfd status`: built from the database alone, so it works whether the daemon runs or not.
package enum StatusReport {
    package static func build(config: Configuration, now: Date = Date()) throws -> StatusDocument {
        let providerName = config.pipeline.provider.rawValue
        let model = config.pipeline.provider == .gemini ? config.gemini.model : ""
        let running = DaemonLock.isHeld(stateFolder: config.paths.state)
        guard let store = try Store.openForReading(path: config.paths.database) else {
            return StatusDocument(
                daemon: .init(running: running, pid: nil, since: nil, watchMode: nil),
                queue: .init(pending: 0, leased: 0, done: 0, review: 0, failed: 0, dead: 0, oldestPendingS: nil),
                provider: .init(name: providerName, model: model, state: "ok", backoffUntil: nil, reason: nil, latencyMs: nil),
                problems: [])
        }
        let record = running ? try store.daemonRecord() : nil
        let counts = try store.queueCounts(now: now)
        let health = try store.providerHealth(providerName)
        let latency = try store.latencyPercentiles(provider: providerName)
        var state = health?.state.rawValue ?? "ok"
        if health?.state == .backoff, let until = health?.until, until <= now { state = "ok" }

        var problems: [StatusDocument.Problem] = []
        if let health, state != "ok" {
            problems.append(.init(code: health.code ?? "provider_\(state)", severity: health.state == .paused ? "error" : "warning",
                                  message: health.message ?? "\(providerName) is \(state)"))
        }
        for problem in try store.jobProblems() {
            let message = problem.state == .dead
                ? problem.message
                : "\(problem.message) (attempt \(problem.attempts); retrying\(problem.retryAt.map { " at \(ISO8601DateFormatter().string(from: $0))" } ?? ""))"
            problems.append(.init(code: problem.code, severity: problem.state == .dead ? "error" : "warning", message: message,
                                  path: problem.path, job: problem.jobID))
        }
        for problem in try store.pathProblems() {
            problems.append(.init(code: problem.code, severity: "error", message: problem.message, path: problem.path))
        }
        return StatusDocument(
            daemon: .init(running: running, pid: record?.pid, since: record?.since, watchMode: record?.watchMode),
            queue: .init(pending: counts.pending, leased: counts.leased, done: counts.done, review: counts.review,
                         failed: counts.failed, dead: counts.dead, oldestPendingS: counts.oldestPendingSeconds),
            provider: .init(name: providerName, model: model, state: state,
                            backoffUntil: state == "backoff" ? health?.until : nil,
                            reason: state == "ok" ? nil : health?.message,
                            latencyMs: latency.map { .init(p50: $0.p50, p95: $0.p95) }),
            problems: problems)
    }

    /// The one-line summary systemd shows (`STATUS=`) and `status` prints first.
    package static func summary(_ status: StatusDocument) -> String {
        let q = status.queue
        var parts = ["\(q.pending) pending", "\(q.leased) in progress", "\(q.done) done", "\(q.review) to review"]
        if q.failed > 0 { parts.append("\(q.failed) retrying") }
        if q.dead > 0 { parts.append("\(q.dead) failed") }
        var line = parts.joined(separator: ", ")
        if status.provider.state != "ok" { line += "; \(status.provider.name) \(status.provider.state)" }
        return line
    }
}
