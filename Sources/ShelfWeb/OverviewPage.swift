import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ShelfApp
import ShelfCore

/// `/`: the queue's counts, the current pass, each provider's state and latency, the problems with what fixes
/// them (a Retry button where `shelfd retry` helps: POST `/retry`), and the photos on their way with their
/// stage. The page shows the state when it was loaded; `/events` keeps it current where scripts run.
enum OverviewPage {
    static func register(on router: RouterGroup<WebContext>, site: WebSite) {
        router.get("/") { request, context in
            let status = try site.status()
            let progress = try site.desks.queue.progress()
            let notice = Notice(query: request.uri.queryParameters, queue: site.desks.queue)
            return site.templates.page(
                "overview", title: "Overview", Overview(status, progress, notice: notice, now: site.desks.time.now),
                context: context)
        }
        router.post("/retry") { request, context in
            try await retry(request, context: context, site: site)
        }
    }

    /// The form's fields: `job` is a job's ID, or `all` for every failed photo (`shelfd retry --failed`).
    struct RetryForm: Decodable {
        var job: String?
    }

    /// Does what `shelfd retry` does, then shows the overview again with what happened.
    static func retry(_ request: Request, context: WebContext, site: WebSite) async throws -> Response {
        var request = request
        let form = try await request.form(RetryForm.self, context: context)
        let ids: [Int64]?
        switch form?.job {
        case "all": ids = nil
        case let job? where Int64(job) != nil: ids = [Int64(job)!]
        default:
            throw HTTPError(.badRequest, message: "Say which photo to retry: job=<ID> (see the overview) or job=all.")
        }
        let outcome = try site.desks.queue.retry(ids)
        site.logger.notice(
            "Photos requeued from the web page", metadata: ["event": "requeued", "photos": "\(outcome.requeued.count)"])
        var target = "/?requeued=\(outcome.requeued.count)"
        if !outcome.refused.isEmpty {
            target += "&refused=" + outcome.refused.keys.sorted().map(String.init).joined(separator: ",")
        }
        return Response(status: .seeOther, headers: [.location: target])
    }

    /// What the last Retry did, from the redirect's query (numbers only: nothing of the query is shown as given).
    struct Notice {
        let summary: String
        let refusals: [String]

        init?(query: Parameters, queue: QueueDesk) {
            guard let count = query.get("requeued").flatMap(Int.init) else { return nil }
            // A Retry refuses one job at most; a longer list is not this page's, and is not looked up whole.
            let refused = (query.get("refused") ?? "").split(separator: ",").prefix(10).compactMap { Int64($0) }
            let outcome = Requeue.Outcome(requeued: [], refused: (try? queue.refusals(of: refused)) ?? [:])
            summary = Requeue.Outcome.summary(requeued: count)
            refusals = outcome.refusals
        }
    }

    struct Overview {
        let notice: Notice?
        let daemon: String
        let counts: [Count]
        let pass: Pass?
        let providers: [Provider]
        let problems: [Problem]
        /// More than one failed photo: a button for them all (`shelfd retry --failed`).
        let retryAll: Bool
        let photos: [Photo]
        let hasPhotos: Bool
        /// The failed counts this page was rendered with: the script offers a refresh when they change.
        let failedSeen: String

        /// `now`: the desks' date, which a provider's next try is before or after.
        init(_ status: StatusDocument, _ progress: QueueProgress, notice: Notice?, now: Date) {
            self.notice = notice
            let daemon = status.daemon
            var sentence: String
            if daemon.running {
                let since = daemon.since.map { " since \($0.timeOfDay)" } ?? ""
                let mode = daemon.watchMode.map { ", watching incoming/ (\($0))" } ?? ""
                sentence = "The daemon is running\(since)\(mode)."
            } else {
                sentence = "No daemon is running: photos wait for 'shelfd run' (or its timer), or 'shelfd watch'."
            }
            if let stopped = status.queue.leasedByStoppedSentence { sentence += " " + stopped }
            self.daemon = sentence
            // The live counts of the progress read, beside the providers and problems of the status document.
            let q = progress.counts
            counts = [
                Count(key: "pending", label: "waiting", value: q.pending),
                Count(key: "leased", label: "in progress", value: q.leased),
                Count(key: "done", label: "done", value: q.done),
                Count(key: "review", label: "to review", value: q.review, link: "/review/photo"),
                Count(key: "failed", label: "waiting to retry", value: q.failed),
                Count(key: "dead", label: "failed", value: q.dead),
            ]
            pass = progress.pass.map(Pass.init)
            providers = status.providers.map { Provider($0, now: now) }
            problems = status.problems.map { Problem($0, providers: status.providers) }
            retryAll = status.problems.filter { $0.job != nil }.count > 1 // one photo has its own button
            photos = progress.photos.map(Photo.init)
            hasPhotos = !photos.isEmpty
            failedSeen = "\(q.failed),\(q.dead)"
        }
    }

    struct Count {
        let key, label: String
        let value: Int
        let link: String?
        /// Stored, not computed: templates read stored properties only.
        let isZero: Bool

        init(key: String, label: String, value: Int, link: String? = nil) {
            self.key = key; self.label = label; self.value = value; self.link = link; isZero = value == 0
        }
    }

    /// The progress bar of the current pass.
    struct Pass {
        let finished, total: Int
        let sentence: String

        init(_ pass: QueueProgress.Pass) {
            finished = pass.finished
            total = pass.total
            sentence = Self.sentence(finished: pass.finished, total: pass.total, since: pass.startedAt)
        }

        /// "3 of 7 photos finished — those queued since 10:02:11, when the queue was last empty." (The script
        /// writes the same sentence.)
        static func sentence(finished: Int, total: Int, since: Date) -> String {
            "\(finished) of \(total) photo\(total == 1 ? "" : "s") finished — those queued since \(since.timeOfDay), when the queue was last empty."
        }
    }

    struct Provider {
        let name, model, state, latency: String
        /// Why it is not ok, in one sentence (`shelfd status`'s own for an outage).
        let sentence: String?

        init(_ provider: StatusDocument.Provider, now: Date) {
            name = provider.name
            model = provider.model
            state = provider.state
            latency =
                provider.latencyMs.map { "p50 \(Clock.seconds($0.p50)) · p95 \(Clock.seconds($0.p95))" }
                ?? "no requests yet"
            if let outage = StatusReport.outageSentence(provider, now: now) {
                sentence = outage
            } else if provider.state == "backoff" {
                sentence =
                    "backing off\(provider.backoffUntil.map { " until \($0.timeOfDay)" } ?? "")\(provider.reason.map { ": \($0)" } ?? "")"
            } else {
                sentence = provider.reason
            }
        }
    }

    /// A problem, its reason in words, and what fixes it: a Retry button, or what to do.
    struct Problem {
        let severity, message: String
        let path: String?
        /// A failed photo: `shelfd retry <job>` (the button) puts it back in the queue.
        let job: Int64?
        let action: String?

        init(_ problem: StatusDocument.Problem, providers: [StatusDocument.Provider]) {
            severity = problem.severity
            message = problem.message
            path = problem.path
            job = problem.job
            action = Self.action(problem, providers: providers)
        }

        static func action(_ problem: StatusDocument.Problem, providers: [StatusDocument.Provider]) -> String? {
            if problem.job != nil {
                return problem.severity == "error"
                    ? "Fix what it says if it is the photo's fault, then retry: the photo goes back in the queue with fresh attempts."
                    : "shelfd tries it again by itself; Retry sends it now."
            }
            if problem.path != nil {
                return
                    "Make the file readable, or remove it: shelfd reads it again when it changes or at the next full scan."
            }
            if let provider = providers.first(where: {
                problem.message.hasPrefix("provider: \($0.name)") || problem.message.hasPrefix("\($0.name):")
            }) {
                switch provider.state {
                case "paused":
                    return
                        "Fix what it says (see 'shelfd doctor'), then restart shelfd: a paused provider is asked again when the daemon starts, or after 15 minutes."
                case "backoff":
                    return
                        "Nothing to do: shelfd waits for the provider and goes on by itself; photos are not charged an attempt."
                default:
                    return
                        "Nothing to do if the network or the provider is only briefly away: shelfd probes it and goes on when it answers. Otherwise check the connection and the provider's base_url."
                }
            }
            return nil
        }
    }

    /// A photo on its way, or just finished.
    struct Photo {
        let path, sha256, stage, words, when: String

        init(_ photo: QueueProgress.Photo) {
            path = photo.path
            sha256 = photo.sha256
            stage = photo.stage.rawValue
            words = photo.stage.words
            when = Self.when(photo.stage, since: photo.since, retryAt: photo.retryAt)
        }

        /// "since 10:02:11" for a step, "queued at", "retry at", "at" for a finished photo (the script says the same).
        static func when(_ stage: JobStage, since: Date?, retryAt: Date?) -> String {
            if let retryAt { return "retry at \(retryAt.timeOfDay)" }
            guard let since else { return "" }
            return switch stage {
            case .queued: "queued at \(since.timeOfDay)"
            case .done, .review, .failed: "at \(since.timeOfDay)"
            default: "since \(since.timeOfDay)"
            }
        }
    }

    /// Times as the page shows them.
    enum Clock {
        /// 28100 ms → "28.1 s"; 850 → "850 ms".
        static func seconds(_ ms: Int) -> String {
            ms < 1000 ? "\(ms) ms" : String(format: "%.1f s", Double(ms) / 1000)
        }
    }
}
