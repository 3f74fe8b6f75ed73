import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ShelfApp
import ShelfConfig
import ShelfCore
import Synchronization

/// The door of the web page, in front of every request, matched to a route or not (docs/web.md, "The web page: who
/// may open it"):
/// - `Host` must name this server (a page on another site that rebinds its name to 127.0.0.1 is refused: 421);
/// - a NUL character anywhere in the URL is refused (400);
/// - an error a route or the router throws is answered in the API's JSON under `/api/` and `/metrics`, as text
///   elsewhere;
/// - every response carries the Content-Security-Policy and its two companions.
/// Who may go past it is each route group's own middleware (`AccessMiddleware`).
struct SecurityMiddleware: RouterMiddleware {
    typealias Context = WebContext

    let hosts: HostRule

    func handle(
        _ request: Request, context: WebContext,
        next: (Request, WebContext) async throws -> Response
    ) async throws -> Response {
        var response = await guarded(request, context: context, next: next)
        Self.addHeaders(&response)
        return response
    }

    private func guarded(
        _ request: Request, context: WebContext,
        next: (Request, WebContext) async throws -> Response
    ) async -> Response {
        let path = request.uri.path
        guard hosts.allows(authority: request.head.authority) else {
            return Self.refusal(
                .misdirectedRequest, "wrong_host",
                "This server answers to the address it listens on (or localhost) only.", api: Self.isAPI(path))
        }
        if NULCharacter.isIn(request.uri.string) {
            return Self.refusal(.badRequest, "nul_character", NULCharacter.message, api: Self.isAPI(path))
        }
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return error.response()
        } catch let error as any HTTPResponseError where Self.isAPI(path) {
            // The router's own errors (no such route, a body too large) in the API's shape.
            return APIError(
                error.status, error.status.code == 404 ? "not_found" : "http_\(error.status.code)",
                error.status.reasonPhrase
            ).response()
        } catch let error as any HTTPResponseError {
            return (try? error.response(from: request, context: context)) ?? Response(status: error.status)
        } catch {
            context.logger.error(
                "Web request failed", metadata: ["event": "web_error", "path": "\(path)", "error": "\(error)"])
            return Self.refusal(
                .internalServerError, "internal", "Something went wrong; the daemon's log says what.",
                api: Self.isAPI(path))
        }
    }

    /// Where an error is answered as the API answers: the API and the scrape.
    static func isAPI(_ path: String) -> Bool { path.hasPrefix("/api/") || path == "/metrics" }

    // MARK: Rules

    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!

    static let fetchDestination = HTTPField.Name("Sec-Fetch-Dest")!

    /// A page a browser opens (a GET of a page, not the live feed, a picture or a download; where the browser says
    /// what it fetches, a document): only these make a session, which is a write to the database. Another site's
    /// page can make this browser fetch pictures or the feed from here as often as it likes (without the cookie,
    /// which is `SameSite=Strict`); none of that makes a session.
    static func wantsSession(_ request: Request) -> Bool {
        let path = request.uri.path
        guard request.method == .get, !isAPI(path), !path.hasPrefix("/static/"), path != "/healthz",
            !path.hasPrefix("/login/"),
            path != "/events", !path.hasPrefix("/exports/"),
            !["/image", "/thumb", "/crop"].contains(where: { path.hasSuffix($0) })
        else { return false }
        return request.headers[fetchDestination].map { $0.lowercased() == "document" } ?? true
    }

    static func changesState(_ method: HTTPRequest.Method) -> Bool {
        method == .post || method == .put || method == .patch || method == .delete
    }

    static let fetchSite = HTTPField.Name("Sec-Fetch-Site")!

    /// A state change must not come from another site's page. The browser says where a request comes from in
    /// `Sec-Fetch-Site` (sent to HTTPS and localhost only) and `Origin`. Under `Referrer-Policy: no-referrer` a
    /// form's POST says `Origin: null`, even from this page, and over plain HTTP to a LAN address without
    /// `Sec-Fetch-Site`: that says nothing either way, and the CSRF token, which only this page has, decides.
    static func comesFromThisSite(_ request: Request, hosts: HostRule) -> Bool {
        if let site = request.headers[fetchSite]?.lowercased(), site != "same-origin" && site != "none" { return false }
        guard let origin = request.headers[.origin], origin != "null" else { return true }
        return hosts.isSameOrigin(origin, authority: request.head.authority)
    }

    /// The token of `Authorization: Bearer <token>`, when one is sent.
    static func bearerSent(_ request: Request) -> String? {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else { return nil }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    static func tokenMatches(_ sent: String?, _ token: String?) -> Bool {
        guard let sent, let token else { return false }
        return constantTimeEquals(sent, token)
    }

    /// Compares every byte, so the time taken says nothing of how much of a guess was right.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The CSRF token the request carries, read before the body it guards: the header or the query's `csrf`
    /// (scripts, the page's uploads), else the form's `csrf` field: anywhere in a small URL-encoded form, and in
    /// a multipart form (photos) only as its first field, so that no photo is read before the request is known
    /// to be allowed. The body read here stays in the request for the route.
    static func csrfSent(_ request: inout Request) async throws -> String? {
        if let header = request.headers[Self.csrfHeader] { return header }
        if let query = request.uri.queryParameters.get("csrf") { return query }
        let type = request.headers[.contentType]?.lowercased() ?? ""
        if type.hasPrefix("application/x-www-form-urlencoded") {
            let body = try await request.collectBody(upTo: 64 * 1024)
            return FormFields.urlEncoded(String(buffer: body))["csrf"]
        }
        if type.hasPrefix("multipart/form-data"),
            let boundary = FormFields.boundary(of: request.headers[.contentType] ?? "")
        {
            return try await request.firstMultipartField("csrf", boundary: boundary)
        }
        return nil
    }

    // MARK: Responses

    static let contentSecurityPolicy =
        "default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self'; "
        + "object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    static func addHeaders(_ response: inout Response) {
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
    }

    /// A refusal as the API answers (`{"error": {"code", "message"}}`), or as plain text.
    static func refusal(_ status: HTTPResponse.Status, _ code: String, _ message: String, api: Bool) -> Response {
        if api { return APIError(status, code, message).response() }
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}

/// Who may go past the door to a group of routes, added to each group in `WebServer.router`:
/// - beyond loopback, a request needs a logged-in session or `Authorization: Bearer <web_token>`; wrong tokens are
///   throttled per client (`TokenThrottle`). The API refuses without them (401, JSON), a page shows the login (401),
///   and the open routes (the login itself, the stylesheet and script, the supervisor's check) let anyone in;
/// - a POST, PUT, PATCH or DELETE needs an `Origin`, when sent, that is this server (403), and the session's CSRF
///   token (header `X-CSRF-Token`, query or form field `csrf`, a photo form's first field) or the bearer token; the
///   login form, which has no session yet, carries the token as its proof instead;
/// - a browser on this machine gets a session without logging in, which carries the CSRF token of its forms.
/// Sessions live in the database (hashed): they outlive a restart, and the login codes that
/// `shelfd web --print-login-url` writes reach whichever process serves the page. Both are keyed to the token
/// they were made under (`SessionDesk`): a new `web_token` ends every session and link.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = WebContext

    /// What a group does with a request that is not let in.
    enum Group {
        /// The login, the static files, `/healthz`: anyone.
        case open
        /// `/api/v1` and `/metrics`: 401 with `WWW-Authenticate: Bearer`, errors as JSON.
        case api
        /// The pages: the login page.
        case pages
    }

    let site: WebSite
    let hosts: HostRule
    let group: Group

    func handle(
        _ request: Request, context: WebContext,
        next: (Request, WebContext) async throws -> Response
    ) async throws -> Response {
        var request = request
        var context = context
        let api = group == .api
        let sentToken = SecurityMiddleware.bearerSent(request)
        let client = TokenThrottle.client(context.remoteAddress)
        if sentToken != nil && site.throttle.isBlocked(client) {
            return SecurityMiddleware.refusal(
                .tooManyRequests, "too_many_wrong_tokens", TokenThrottle.message, api: api)
        }
        let bearer = SecurityMiddleware.tokenMatches(sentToken, site.secrets.webToken?.value)
        if sentToken != nil && !bearer { site.throttle.recordFailure(client) }
        let cookie = request.cookies[Session.cookieName]?.value
        var session = cookie.flatMap { try? site.desks.sessions.session(id: $0) }
        if let current = session, !current.loggedIn, !context.isFromLoopback { session = nil }
        let authenticated = bearer || context.isFromLoopback || session?.loggedIn == true

        if !authenticated {
            switch group {
            case .open:
                break
            case .api:
                var response = SecurityMiddleware.refusal(
                    .unauthorized, "unauthorized",
                    "Send 'Authorization: Bearer <web_token>', or log in on the page.", api: true)
                response.headers[.wwwAuthenticate] = "Bearer"
                return response
            case .pages:
                return LoginPages.page(
                    site: site, context: context, status: .unauthorized,
                    notice: "Log in with the token, or open a link from 'shelfd web --print-login-url'.")
            }
        }

        if SecurityMiddleware.changesState(request.method) {
            if !SecurityMiddleware.comesFromThisSite(request, hosts: hosts) {
                return SecurityMiddleware.refusal(
                    .forbidden, "cross_origin", "A request from another site cannot change anything here.", api: api)
            }
            // The login form has no session yet: the token it carries is its proof.
            if !bearer && !(group == .open && request.uri.path == "/login") {
                let sent: String?
                do { sent = try await SecurityMiddleware.csrfSent(&request) } catch {
                    return SecurityMiddleware.refusal(
                        .badRequest, "bad_body", "The request's body could not be read.", api: api)
                }
                guard let session, let sent, SecurityMiddleware.constantTimeEquals(sent, session.csrf) else {
                    return SecurityMiddleware.refusal(
                        .forbidden, "csrf",
                        "The form is out of date or came from elsewhere: reload the page and try again.", api: api)
                }
            }
        }

        // A browser on this machine gets a session without logging in: it carries the CSRF token of its forms.
        var created: Cookie?
        if session == nil && !bearer && context.isFromLoopback && SecurityMiddleware.wantsSession(request) {
            if let new = try? Session.create(in: site.desks.sessions, loggedIn: false) {
                session = new.session
                created = new.cookie
            }
        }
        context.csrfToken = session?.csrf ?? ""
        context.loggedIn = session?.loggedIn == true

        var response = try await next(request, context)
        if let created { response.setCookie(created) }
        return response
    }
}

/// The cookie that carries a session (`SessionDesk`): only the session's id, never readable by a script.
enum Session {
    static let cookieName = "shelfd_session"

    /// A new session and the cookie for it.
    static func create(in sessions: SessionDesk, loggedIn: Bool) throws -> (session: WebSession, cookie: Cookie) {
        let (id, session) = try sessions.open(loggedIn: loggedIn)
        // Not Secure: the page is served over plain HTTP (a Secure cookie would never come back).
        let cookie = Cookie(
            name: cookieName, value: id, maxAge: Int(SessionDesk.lifetime(loggedIn: loggedIn)), path: "/",
            secure: false, httpOnly: true, sameSite: .strict)
        return (session, cookie)
    }

    /// The cookie that makes a browser forget its session (logging out).
    static let cleared = Cookie(
        name: cookieName, value: "", maxAge: 0, path: "/", secure: false, httpOnly: true, sameSite: .strict)
}

/// Which `Host` a request may name: this server's own address, loopback names, and beyond loopback this
/// machine's name, or any IP address when it listens on every address. A name that merely resolves here (DNS
/// rebinding) is refused.
struct HostRule: Sendable {
    let listenHost: String
    let port: BoundPort
    /// This machine's names (`gethostname`), accepted when listening on every address.
    let machineNames: Set<String>

    init(listenHost: String, port: BoundPort, machineNames: Set<String> = HostRule.currentMachineNames()) {
        self.listenHost = listenHost.lowercased()
        self.port = port
        self.machineNames = machineNames
    }

    var listensEverywhere: Bool { ["0.0.0.0", "::", "*", ""].contains(listenHost) }

    func allows(authority: String?) -> Bool {
        guard let authority, let (host, hostPort) = Self.split(authority) else { return false }
        guard (hostPort ?? 80) == port.value else { return false }
        if host == "localhost" || host == listenHost || Self.isLoopbackIP(host) { return true }
        // Beyond loopback a phone may also name the machine (`shelf-pc.local`).
        if listenHost == "localhost" || Self.isLoopbackIP(listenHost) { return false }
        return machineNames.contains(host) || (listensEverywhere && Self.isIPLiteral(host))
    }

    /// `Origin` is `http://` and the authority the request named (already checked by `allows`).
    func isSameOrigin(_ origin: String, authority: String?) -> Bool {
        guard let authority, origin.lowercased().hasPrefix("http://"),
            let sent = Self.split(String(origin.dropFirst("http://".count))), let named = Self.split(authority)
        else { return false }
        return sent.host == named.host && (sent.port ?? 80) == (named.port ?? 80)
    }

    /// `host[:port]` or `[v6][:port]`, lower-cased, without a trailing dot.
    static func split(_ authority: String) -> (host: String, port: Int?)? {
        let text = authority.lowercased()
        var host: Substring, port: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty { guard rest.hasPrefix(":") else { return nil }; port = rest.dropFirst() }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        } else {
            host = text[...]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        guard !host.isEmpty else { return nil }
        if let port {
            guard let number = Int(port), (1...65_535).contains(number) else { return nil }
            return (String(host), number)
        }
        return (String(host), nil)
    }

    static func isIPLiteral(_ host: String) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 16) // room for an in6_addr (or an in_addr)
        return inet_pton(AF_INET, host, &bytes) == 1 || inet_pton(AF_INET6, host, &bytes) == 1
    }

    static func isLoopbackIP(_ host: String) -> Bool {
        (host.hasPrefix("127.") && isIPLiteral(host)) || host == "::1"
    }

    static func currentMachineNames() -> Set<String> {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return [] }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        guard !name.isEmpty else { return [] }
        let short = name.split(separator: ".").first.map(String.init) ?? name
        return [name, short, short + ".local"]
    }
}

/// Wrong tokens, in the bearer header or the login form, counted per client: after `perClient` in a minute
/// from one address, that client's tokens are refused (429) until the minute has passed, so a token cannot be
/// guessed at network speed, and one client's guesses lock no one else out. An IPv6 client counts by its /64,
/// which one machine usually holds whole. Past `ceiling` wrong tokens in a minute from every client together,
/// every token is refused: many addresses guessing at once are slowed too. The table holds at most `maxClients`
/// addresses (the stalest go first), so guesses from many addresses cannot fill the memory. Sessions already
/// logged in go on working. Each web server has its own, counting on the daemon's date (`Desks.time`).
final class TokenThrottle: Sendable {
    static let message = "Too many wrong tokens in the last minute: wait a minute, then try again."

    private struct Failures {
        /// Each client's wrong tokens in the window, oldest first (at most `perClient`).
        var clients: [String: [Date]] = [:]
        /// Everyone's, oldest first (at most `ceiling`).
        var all: [Date] = []

        /// Drops what happened before `start`; returns the client's failures since.
        mutating func forget(before start: Date, of client: String) -> [Date] {
            all.removeFirst(all.prefix { $0 < start }.count)
            let mine = clients[client]?.filter { $0 >= start } ?? []
            clients[client] = mine.isEmpty ? nil : mine
            return mine
        }
    }

    private let failures = Mutex(Failures())
    let time: TimeSource
    let perClient: Int
    let ceiling: Int
    let maxClients: Int
    let window: TimeInterval

    init(
        time: TimeSource, perClient: Int = 10, ceiling: Int = 1_000, maxClients: Int = 4_096, window: TimeInterval = 60
    ) {
        self.time = time; self.window = window
        self.perClient = perClient; self.ceiling = ceiling; self.maxClients = maxClients
    }

    func isBlocked(_ client: String) -> Bool {
        let now = time.now
        return failures.withLock { state in
            let mine = state.forget(before: now - window, of: client)
            return mine.count >= perClient || state.all.count >= ceiling
        }
    }

    func recordFailure(_ client: String) {
        let now = time.now
        failures.withLock { state in
            var mine = state.forget(before: now - window, of: client)
            if state.all.count < ceiling { state.all.append(now) }
            if mine.isEmpty && state.clients.count >= maxClients {
                state.clients = state.clients.filter { ($0.value.last ?? .distantPast) >= now - window }
                if state.clients.count >= maxClients,
                    let stalest = state.clients.min(by: {
                        ($0.value.last ?? .distantPast) < ($1.value.last ?? .distantPast)
                    })
                {
                    state.clients[stalest.key] = nil
                }
            }
            if mine.count < perClient { mine.append(now) }
            state.clients[client] = mine
        }
    }

    /// How many clients the table holds now.
    var clientCount: Int { failures.withLock { $0.clients.count } }

    /// The client a request counts against, for wrong tokens and for `/events` streams alike: its IP address, an
    /// IPv6 one by its first 64 bits (which one machine usually holds whole).
    static func client(_ address: SocketAddress?) -> String {
        guard let ip = address?.ipAddress else { return "unknown" }
        if ip.hasPrefix("::ffff:"), ip.contains(".") { return String(ip.dropFirst("::ffff:".count)) }
        var bytes = [UInt8](repeating: 0, count: 16) // an in6_addr
        guard ip.contains(":"), inet_pton(AF_INET6, ip, &bytes) == 1 else { return ip }
        return bytes.prefix(8).map { String(format: "%02x", $0) }.joined() + "::/64"
    }
}

/// The port the server listens on, known once it is bound (`:0` lets the system pick one).
final class BoundPort: Sendable {
    private let port: Mutex<Int>
    init(_ port: Int) { self.port = Mutex(port) }
    var value: Int { port.withLock { $0 } }
    func set(_ value: Int) { port.withLock { $0 = value } }
}

/// The few form fields the access middleware reads itself (the CSRF token); routes decode their own forms.
enum FormFields {
    static func urlEncoded(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            guard let name = parts.first else { continue }
            let key = decode(name)
            if fields[key] == nil { fields[key] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return fields
    }

    static func boundary(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }
}
