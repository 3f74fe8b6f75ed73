import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import ShelfApp
import ShelfConfig
import ShelfCore
import Synchronization

/// The web server: the pages, the API for scripts and /metrics on `[web] listen`. A `Service`, so `watch`
/// runs it in its ServiceGroup and it stops with the daemon; `shelfd web` runs it alone.
package struct WebServer: Service {
    package let site: WebSite
    let address: ListenAddress
    /// In `watch` a port that cannot be had turns the page off, not the daemon: photos are still processed.
    let isCompanion: Bool

    package init(site: WebSite, address: ListenAddress, isCompanion: Bool) {
        self.site = site
        self.address = address
        self.isCompanion = isCompanion
    }

    /// Writes what the last decisions changed of library.json and the exports, before the process goes.
    package func flushFiles() { site.desks.flushFiles() }

    package func run() async throws {
        let site = site
        let address = address
        let port = BoundPort(address.port)
        let hosts = HostRule(listenHost: address.host, port: port)
        let feed = ProgressFeed(queue: site.desks.queue, time: site.desks.time)
        let connections = ConnectionLimit(Self.raiseFileLimit())
        var app = Application(
            router: Self.router(site: site, hosts: hosts, feed: feed),
            // A connection with no request in flight is closed after the idle time (an open `/events` stream or
            // an upload is a request in flight), and past the limit a new one is closed at once, so a crowd of
            // idle sockets can neither pile up nor take the descriptors the pipeline needs.
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [connections.handler()],
                    idleTimeout: Self.idleTimeout)),
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { channel in
                // The port actually bound (`:0` picks one), for `Host` checks, `status`, `doctor` and the log.
                port.set(channel.localAddress?.port ?? address.port)
                let url = Self.url(address, port: port.value)
                site.desks.presence.announce(url: url)
                site.logger.notice("Web page", metadata: ["event": "web_listening", "url": "\(url)"])
            },
            // One event-loop thread: a household's or a shop's few browsers and scripts keep it far from busy
            // (see scripts/bench-web.sh), and the idle daemon keeps one thread's stack and timers fewer.
            eventLoopGroupProvider: .shared(Self.eventLoop),
            logger: Logger(label: "shelfd.web"))
        app.addServices(feed, QuietRelease(connections: connections, desks: site.desks))
        site.desks.presence.forgetDeadServer()
        defer { site.desks.presence.withdraw(url: Self.url(address, port: port.value)) }
        do {
            try await app.run()
        } catch  where isCompanion && !Task.isCancelled {
            site.logger.error(
                "The web page is off: cannot listen on \(address) (\(error)); photos are still processed. Free the port or change [web] listen.",
                metadata: ["event": "web_failed"])
            try? await gracefulShutdown() // a service that returns would end the daemon
        }
    }

    private static let eventLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// How long a connection may sit without a request before it is closed: a browser reopens one at once.
    static let idleTimeout: TimeAmount = .seconds(30)

    /// Raises the soft limit of open files to the hard one (many systems start services at 1024) and returns how
    /// many connections the server keeps open: the limit less a reserve for the database, photos, the watcher
    /// and the files for people.
    static func raiseFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 512 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // The daemon's own files (a batch's photos, the database, the watcher, curl's sockets) need far fewer
        // than 256; under a limit too small for that reserve, half is kept for them.
        let files = Int(min(limit.rlim_cur, 1 << 20)), reserve = 256
        return min(files > 2 * reserve ? files - reserve : files / 2, 65_536)
    }

    static func url(_ address: ListenAddress, port: Int) -> String {
        var bound = address
        bound.port = port
        return "http://\(bound)/"
    }

    /// Every answer carries the security headers (`SecurityHeadersMiddleware`, on the router). Each route is in a
    /// group, and each group has a middleware a job, in this order: the door (Host, NUL, answers in the group's
    /// shape), the throttle, the bearer token, the session, who may go past (`AuthenticatedMiddleware`, not in the
    /// open groups), the same origin, and CSRF (not at the login, whose token is its proof).
    static func router(site: WebSite, hosts: HostRule, feed: ProgressFeed) -> Router<WebContext> {
        let router = Router(context: WebContext.self)
        router.add(middleware: SecurityHeadersMiddleware())
        func group(
            _ shape: AnswerShape, otherwise: AuthenticatedMiddleware.Otherwise?, makesSessions: Bool = false,
            checksCSRF: Bool = true
        ) -> RouterGroup<WebContext> {
            let group = router.group()
                .add(middleware: DoorMiddleware(hosts: hosts, shape: shape))
                .add(middleware: ThrottleMiddleware(throttle: site.throttle))
                .add(middleware: BearerTokenMiddleware(site: site))
                .add(middleware: SessionMiddleware(sessions: site.desks.sessions, makesSessions: makesSessions))
            if let otherwise { group.add(middleware: AuthenticatedMiddleware(otherwise: otherwise)) }
            group.add(middleware: SameOriginMiddleware(hosts: hosts))
            if checksCSRF { group.add(middleware: CSRFMiddleware()) }
            return group
        }
        // Anyone: the stylesheet and script, the supervisor's check, a login link.
        let open = group(.text, otherwise: nil)
        // Anyone: the login page, where a browser on this machine gets its session too.
        let login = group(.text, otherwise: nil, makesSessions: true, checksCSRF: false)
        // `/api/v1` and `/metrics`, for scripts.
        let api = group(.json, otherwise: .unauthorized)
        let pages = group(.text, otherwise: .loginPage(site), makesSessions: true)
        // What a page fetches: pictures, downloads, the live feed. Another site's page can have a browser fetch
        // them, so they make no session.
        let fetched = group(.text, otherwise: .loginPage(site))
        StaticFiles.register(on: open)
        Metrics.register(open: open, api: api, site: site)
        LoginPages.register(login: login, open: open, pages: pages, site: site)
        API.register(on: api, site: site)
        OverviewPage.register(on: pages, site: site)
        LiveProgress.register(on: fetched, feed: feed)
        PhotoReviewPage.register(on: pages, site: site)
        ReviewPages.register(on: pages, fetched: fetched, site: site)
        PhotoPages.register(on: pages, fetched: fetched, site: site)
        LibraryPages.register(on: pages, fetched: fetched, site: site)
        UploadPage.register(on: pages, site: site)
        ShelfPages.register(on: pages, fetched: fetched, site: site)
        // Router middleware reaches only the routes added after it, and the answer when no route matches: this
        // door is that answer's alone.
        router.add(middleware: DoorMiddleware(hosts: hosts, shape: nil))
        return router
    }
}

extension WebServer {
    /// The server `[web]` asks for, or nil when it is turned off. Refuses an address beyond loopback
    /// without the secret `web_token` (the page can change the library and take uploads), and a token too short.
    /// `watch` and `shelfd web` call it as they start, so it first deals with the uploads a stopped server left
    /// half done (`IncomingPhoto.tidyLeftovers`), whether or not the page is on now.
    /// `desks`: over the daemon's database and its writer of the files for people (`shelfd web` alone: its own).
    package static func forDaemon(
        config: Configuration, secrets: Secrets, desks: Desks, logger: Logger,
        isCompanion: Bool = true
    ) throws -> WebServer? {
        IncomingPhoto.tidyLeftovers(
            incoming: URL(fileURLWithPath: config.paths.incoming), logger: logger, now: desks.time.now)
        guard config.web.enabled, !config.web.listen.isEmpty else { return nil }
        guard let address = config.web.address else {
            throw WebError.badAddress(config.web.listen)
        }
        if !address.isLoopback && secrets.webToken == nil {
            throw WebError.tokenRequired(address)
        }
        if let problem = secrets.webTokenProblem { throw WebError.weakToken(problem) }
        return WebServer(
            site: try WebSite(config: config, secrets: secrets, desks: desks, logger: logger), address: address,
            isCompanion: isCompanion)
    }
}

/// Why the web server does not start, with what to do.
package enum WebError: Error, CustomStringConvertible {
    case badAddress(String)
    case tokenRequired(ListenAddress)
    case weakToken(String)

    package var description: String {
        switch self {
        case .badAddress(let text):
            "[web] listen = \"\(text)\" is not host:port; write e.g. \"127.0.0.1:8787\", or \"\" to turn the web page off."
        case .tokenRequired(let address):
            "The web page would listen on \(address), beyond this machine, without a token. Set the secret web_token "
                + "(environment variable WEB_TOKEN or a systemd credential) and log in with 'shelfd web --print-login-url', "
                + "or listen on 127.0.0.1."
        case .weakToken(let problem):
            problem
        }
    }
}

/// At most `limit` open connections: one past it is closed as soon as it is accepted, which frees its
/// descriptor again (NIO's accept backs off by itself when the process has none left).
final class ConnectionLimit: Sendable {
    let limit: Int
    private let open = Atomic<Int>(0)
    /// Reads from clients so far (requests and their bodies; an open `/events` stream reads nothing): whether the
    /// server was busy lately.
    private let reads = Atomic<Int>(0)
    var activity: Int { reads.load(ordering: .relaxed) }

    init(_ limit: Int) { self.limit = max(1, limit) }

    var count: Int { open.load(ordering: .relaxed) }

    /// The handler each new connection gets.
    func handler() -> any RemovableChannelHandler { Counter(limit: self) }

    private final class Counter: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Any
        let limit: ConnectionLimit
        private var counted = false

        init(limit: ConnectionLimit) { self.limit = limit }

        func handlerAdded(context: ChannelHandlerContext) {
            counted = true
            let now = limit.open.wrappingAdd(1, ordering: .relaxed).newValue
            if now > limit.limit { context.close(promise: nil) }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            if counted { limit.open.wrappingSubtract(1, ordering: .relaxed); counted = false }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            limit.reads.wrappingAdd(1, ordering: .relaxed)
            context.fireChannelRead(data)
        }
    }
}

/// After a burst of requests (a script polling `/api/v1/status`, a person paging through the library), once no
/// request has come for a tick or two, the memory the burst took goes back: SQLite's page cache and malloc's free
/// pages (`IdleMemory`), as the scheduler gives back a batch's when the queue goes idle.
struct QuietRelease: Service {
    let connections: ConnectionLimit
    let desks: Desks
    static let tick: Duration = .seconds(5)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var seen = connections.activity, busy = false
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.tick)
                let now = connections.activity
                if now != seen {
                    busy = true
                } else if busy {
                    busy = false
                    desks.releaseMemory()
                }
                seen = now
            }
        }
    }
}
