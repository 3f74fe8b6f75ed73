import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle
import ShelfApp
import ShelfCore
import Synchronization

/// `/events`: the overview's counts, pass and photos as server-sent events, sent when they change. The
/// server reads the database every half second, so it also sees the work of another process (`shelfd run`
/// while `shelfd web` serves the page). `/events?once=1` answers the same document once, as JSON: what the
/// script polls where EventSource fails.
///
/// The progress is computed once a tick for every stream (`ProgressFeed`), and only while someone listens;
/// streams are capped per client address and in all, and the one past a cap is refused with 429 or 503, which
/// the page's script takes as "poll `/events?once=1` instead".
enum LiveProgress {
    static let interval: Duration = .milliseconds(500)
    /// A comment line this often when nothing changed: a client that went away is noticed by the failed write.
    static let keepAlive: Duration = .seconds(15)

    static func register(on router: RouterGroup<WebContext>, feed: ProgressFeed) {
        router.get("/events") { request, context in
            if request.uri.queryParameters.get("once") != nil {
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                headers[.cacheControl] = "no-store"
                return Response(
                    status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: try feed.current())))
            }
            let client = TokenThrottle.client(context.remoteAddress) // as the throttle counts a client
            let slot: ProgressFeed.Slot
            switch feed.join(client: client) {
            case .joined(let joined): slot = joined
            case .refused(let status, let message):
                var headers = HTTPFields()
                headers[.contentType] = "text/plain; charset=utf-8"
                headers[.retryAfter] = "30"
                return Response(
                    status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
            }
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: stream(feed: feed, slot: slot))
        }
    }

    /// Until the client goes or the server stops (a graceful shutdown ends the stream at the next tick, so
    /// `watch` and `shelfd web` stop at once, not after their grace period). The slot is held by the body:
    /// whether or not it ever runs, it is given back when the response is gone.
    static func stream(feed: ProgressFeed, slot: ProgressFeed.Slot) -> ResponseBody {
        ResponseBody { writer in
            defer { withExtendedLifetime(slot) {} }
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            let clock = feed.time.clock
            var seen = 0
            var lastWrite = clock.now
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                if let latest = feed.latest, latest.number != seen, clock.now - latest.readAt < interval * 2 {
                    try await writer.write(ByteBuffer(string: "event: progress\ndata: \(latest.json)\n\n"))
                    seen = latest.number
                    lastWrite = clock.now
                } else if clock.now - lastWrite >= keepAlive {
                    try await writer.write(ByteBuffer(string: ": nothing new\n\n"))
                    lastWrite = clock.now
                }
                try? await feed.time.sleep(for: interval)
            }
            try await writer.finish(nil)
        }
    }
}

/// The progress every `/events` stream sends, read from the store once a tick while at least one stream is
/// open (never while none is), and the count of open streams, per client address and in all. Pages that poll
/// (`/events?once=1`, where a stream was refused) share the same reading: at most one a tick. A `Service` of
/// the web server, so it stops with it.
final class ProgressFeed: Service, Sendable {
    /// A browser holds one stream per open overview: a few tabs on a few devices behind one address.
    static let perClient = 8
    /// Far more than a household's or a shop's screens; each is a connection and a task.
    static let total = 64

    /// The latest progress as the JSON of one event, numbered so that a stream sends each one once.
    struct Snapshot: Sendable {
        var number: Int
        var json: String
        var event: ProgressEvent
        var readAt: SomeClock.Instant
    }

    enum Admission {
        case joined(Slot)
        case refused(HTTPResponse.Status, String)
    }

    /// One open stream's place; given back when the last reference to it goes.
    final class Slot: Sendable {
        let feed: ProgressFeed
        let client: String
        init(feed: ProgressFeed, client: String) { self.feed = feed; self.client = client }
        deinit { feed.leave(client: client) }
    }

    private struct State {
        var streams: [String: Int] = [:]
        var open = 0
        var latest: Snapshot?
    }

    private let state = Mutex(State())
    private let queue: QueueDesk
    /// The clock of the ticks (the daemon's).
    let time: TimeSource
    private let interval: Duration
    let perClient: Int
    let total: Int

    init(
        queue: QueueDesk, time: TimeSource, interval: Duration = LiveProgress.interval,
        perClient: Int = ProgressFeed.perClient, total: Int = ProgressFeed.total
    ) {
        self.queue = queue
        self.time = time
        self.interval = interval
        self.perClient = perClient
        self.total = total
    }

    var latest: Snapshot? { state.withLock { $0.latest } }
    var openStreams: Int { state.withLock { $0.open } }

    func join(client: String) -> Admission {
        let refusal: Admission? = state.withLock { state in
            if state.open >= total {
                return .refused(
                    .serviceUnavailable, "Too many live pages are open (\(total)); this one updates every 2 s instead.")
            }
            if state.streams[client, default: 0] >= perClient {
                return .refused(
                    .tooManyRequests,
                    "This address has \(perClient) live pages open; this one updates every 2 s instead.")
            }
            state.streams[client, default: 0] += 1
            state.open += 1
            return nil
        }
        return refusal ?? .joined(Slot(feed: self, client: client))
    }

    fileprivate func leave(client: String) {
        state.withLock { state in
            state.open -= 1
            let left = state.streams[client, default: 1] - 1
            state.streams[client] = left > 0 ? left : nil
        }
    }

    /// The progress as JSON: the reading of this tick when there is one, else one made now and kept for the
    /// next requests of the tick.
    func current() throws -> String {
        let fresh = state.withLock { state in
            state.latest.flatMap { time.clock.now - $0.readAt < interval ? $0.json : nil }
        }
        return try fresh ?? refresh().json
    }

    /// Reads the progress and keeps it, with a new number when it changed.
    @discardableResult
    private func refresh() throws -> Snapshot {
        let event = try ProgressEvent(queue.progress())
        let json = String(decoding: try JSONStyle.encoder(pretty: false).encode(event), as: UTF8.self)
        return state.withLock { state in
            let number = state.latest.map { $0.event == event ? $0.number : $0.number + 1 } ?? 1
            let snapshot = Snapshot(number: number, json: json, event: event, readAt: time.clock.now)
            state.latest = snapshot
            return snapshot
        }
    }

    /// Reads the progress each tick while a stream is open; idle otherwise.
    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                if self.openStreams > 0 { _ = try? self.refresh() }
                try? await self.time.sleep(for: self.interval)
            }
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
        counts = Counts(
            pending: q.pending, leased: q.leased, done: q.done, review: q.review, failed: q.failed, dead: q.dead)
        pass = progress.pass.map {
            Pass(
                finished: $0.finished, total: $0.total,
                sentence: OverviewPage.Pass.sentence(finished: $0.finished, total: $0.total, since: $0.startedAt))
        }
        photos = progress.photos.map {
            let shown = OverviewPage.Photo($0)
            return Photo(
                job: $0.jobID, sha256: $0.sha256, path: $0.path, stage: shown.stage, words: shown.words,
                when: shown.when)
        }
    }
}
