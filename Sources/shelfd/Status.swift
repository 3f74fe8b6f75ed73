import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What shelfd is doing, what failed, and what needs a look. Works with the daemon stopped.",
        discussion:
            "Exits 0 when healthy, 3 when degraded (failed photos, provider paused or down), 4 with --require-daemon when no daemon runs."
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the status as JSON (schema shelfd.status/1).") var json = false
    @Flag(name: .long, help: "Exit 4 when the daemon is not running.") var requireDaemon = false

    func run() async throws {
        let (config, secrets, _) = try global.load(quiet: true)
        let now = Date() // the command's one reading of the wall: the report is of this moment
        let status = try StatusReport.build(config: config, secrets: secrets, now: now)
        if json { try printJSON(status) } else { print(Self.text(status, now: now)) }
        if requireDaemon && !status.daemon.running { throw ExitCode(4) }
        if status.isDegraded { throw ExitCode(3) }
    }

    static func text(_ status: StatusDocument, now: Date) -> String {
        let formatter = ISO8601DateFormatter()
        var lines: [String] = []
        if status.daemon.running {
            let since = status.daemon.since.map { " since \(formatter.string(from: $0))" } ?? ""
            lines.append(
                "daemon:   running (pid \(status.daemon.pid.map(String.init) ?? "?")\(since), watching with \(status.daemon.watchMode ?? "…"))"
            )
        } else {
            lines.append("daemon:   not running")
        }
        let q = status.queue
        var queue =
            "queue:    \(q.pending) pending · \(q.leased) in progress · \(q.done) done · \(q.review) to review · \(q.failed) retrying · \(q.dead) failed"
        if let oldest = q.oldestPendingS, q.pending > 0 { queue += " (oldest waiting \(oldest) s)" }
        lines.append(queue)
        if let stopped = q.leasedByStoppedSentence { lines.append("          " + stopped) }
        // Several workers share a PostgreSQL store; one on its own needs no list.
        if let workers = status.workers, workers.count > 1 || workers.first?.host != StatusReport.thisHost {
            for worker in workers {
                let files = worker.writesFiles ? ", writes the files" : ""
                lines.append(
                    "worker:   \(worker.host) pid \(worker.pid) (shelfd \(worker.version)) — \(worker.inFlight) in flight, "
                        + "heartbeat \(formatter.string(from: worker.heartbeat))\(files)")
            }
        }
        for limit in status.limits ?? [] {
            let day =
                limit.requestsPerDay.map { " · \(limit.usedToday) of \($0) today" } ?? " · \(limit.usedToday) today"
            lines.append("limit:    \(limit.provider) \(limit.requestsPerMinute)/min\(day), shared by every worker")
        }
        for job in status.batchAPIJobs ?? [] {
            lines.append(
                "gemini:   Batch API job \(job.name ?? job.displayName) — \(job.state), \(job.photos) photo\(job.photos == 1 ? "" : "s"), "
                    + "submitted \(job.ageS) s ago")
        }
        for p in status.providers {
            if let down = StatusReport.outageSentence(p, now: now) { lines.append(down); continue }
            var provider = "provider: \(p.name) \(p.model) — \(p.state)"
            if let until = p.backoffUntil { provider += " until \(formatter.string(from: until))" }
            if let reason = p.reason { provider += ": \(reason)" }
            if let latency = p.latencyMs { provider += " (p50 \(latency.p50) ms, p95 \(latency.p95) ms)" }
            lines.append(provider)
        }
        if let because = status.provider.chosenBecause { lines.append("          chosen because \(because)") }
        if let web = status.web { lines.append("web:      \(web.url)") }
        if status.problems.isEmpty {
            lines.append("problems: none")
        } else {
            lines.append("problems:")
            for problem in status.problems {
                let job = problem.job.map { " [job \($0)]" } ?? ""
                let path = problem.path.map { " \($0)" } ?? ""
                lines.append("  \(problem.severity) \(problem.code)\(job)\(path): \(problem.message)")
            }
        }
        let advised = status.recent.filter { !$0.suggestions.isEmpty }
        if !advised.isEmpty {
            lines.append("tips for recent photos:")
            for photo in advised {
                for suggestion in photo.suggestions {
                    lines.append(
                        "  \(photo.photo) (\(suggestion.severity.rawValue), \(suggestion.type.rawValue)): \(suggestion.message)"
                    )
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}
