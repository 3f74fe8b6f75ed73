import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle
import ShelfCore
import ShelfStore

/// `/events`: the overview's counts, pass and photos as server-sent events, sent when they change. The
/// server reads the database every half second, so it also sees the work of another process (`shelfd run`
/// while `shelfd web` serves the page). `/events?once=1` answers the same document once, as JSON: what the
/// script polls where EventSource fails.
enum LiveProgress {
    static let interval: Duration = .milliseconds(500)
    /// A comment line this often when nothing changed: a client that went away is noticed by the failed write.
    static let keepAlive: Duration = .seconds(15)

    static func register(on router: Router<WebContext>, site: WebSite) {
        router.get("/events") { request, _ in
            if request.uri.queryParameters.get("once") != nil {
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                headers[.cacheControl] = "no-store"
                let json = try JSONStyle.encoder(pretty: false).encode(try ProgressEvent(try site.store.progress()))
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: json)))
            }
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: stream(site: site))
        }
    }

    /// Until the client goes or the server stops (a graceful shutdown ends the stream at the next tick, so
    /// `watch` and `shelfd web` stop at once, not after their grace period).
    static func stream(site: WebSite) -> ResponseBody {
        ResponseBody { writer in
            let encoder = JSONStyle.encoder(pretty: false)
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            var last: ProgressEvent?
            var lastWrite = ContinuousClock.now
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                if let event = try? ProgressEvent(site.store.progress()), event != last {
                    let json = String(decoding: try encoder.encode(event), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "event: progress\ndata: \(json)\n\n"))
                    last = event
                    lastWrite = .now
                } else if ContinuousClock.now - lastWrite >= keepAlive {
                    try await writer.write(ByteBuffer(string: ": nothing new\n\n"))
                    lastWrite = .now
                }
                try? await Task.sleep(for: interval)
            }
            try await writer.finish(nil)
        }
    }
}

/// What `/events` sends: the counts, the pass's progress bar and the photos on their way, with their words as
/// the page shows them.
struct ProgressEvent: Codable, Equatable {
    struct Counts: Codable, Equatable {
        var pending, leased, done, review, failed, dead: Int
    }
    struct Pass: Codable, Equatable {
        var finished, total: Int
        var sentence: String
    }
    struct Photo: Codable, Equatable {
        var job: Int64
        var sha256, path, stage, words, when: String
    }

    var counts: Counts
    /// Nil when the queue is empty.
    var pass: Pass?
    var photos: [Photo]

    init(_ progress: QueueProgress) {
        let q = progress.counts
        counts = Counts(pending: q.pending, leased: q.leased, done: q.done, review: q.review, failed: q.failed, dead: q.dead)
        pass = progress.pass.map {
            Pass(finished: $0.finished, total: $0.total,
                 sentence: OverviewPage.Pass.sentence(finished: $0.finished, total: $0.total, since: $0.startedAt))
        }
        photos = progress.photos.map {
            let shown = OverviewPage.Photo($0)
            return Photo(job: $0.jobID, sha256: $0.sha256, path: $0.path, stage: shown.stage, words: shown.words, when: shown.when)
        }
    }
}
