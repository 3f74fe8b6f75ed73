import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ShelfConfig
import ShelfCore
import ShelfApp
import ShelfStore

/// Logging in from beyond loopback: with the token in a form (`POST /login`), or with a one-time link that
/// `shelfd web --print-login-url` prints on the machine (`/login/<code>`). Either way a session cookie follows,
/// until `POST /logout` (with the session's CSRF token, as every POST) or a new `web_token` ends it.
enum LoginPages {
    static func register(on router: Router<WebContext>, site: WebSite) {
        router.get("login") { _, context -> Response in
            page(site: site, context: context, status: .ok)
        }

        router.post("login") { request, context -> Response in
            var request = request
            let sent = try await request.form(LoginForm.self, context: context)?.token ?? ""
            let client = TokenThrottle.client(context.remoteAddress)
            if TokenThrottle.shared.isBlocked(client) {
                return page(site: site, context: context, status: .tooManyRequests, error: TokenThrottle.message)
            }
            guard SecurityMiddleware.tokenMatches(sent, site.secrets.webToken?.value) else {
                TokenThrottle.shared.recordFailure(client)
                site.logger.warning("Web login refused", metadata: ["event": "web_login_refused", "from": "\(context.remoteAddress?.ipAddress ?? "?")"])
                return page(site: site, context: context, status: .unauthorized, error: "That is not the token.")
            }
            return try loggedIn(site: site, context: context, by: "token")
        }

        router.get("login/{code}") { _, context -> Response in
            let code = try context.parameters.require("code")
            guard code.count == 64, code.allSatisfy(\.isHexDigit),
                  try site.sessions.redeemLoginCode(Session.key(code, token: site.secrets.webToken?.value)) else {
                return page(site: site, context: context, status: .unauthorized,
                            error: "This login link was used already or has expired: run 'shelfd web --print-login-url' again.")
            }
            return try loggedIn(site: site, context: context, by: "link")
        }

        // The door has checked the session's CSRF token: another site cannot log a browser out.
        router.post("logout") { request, context -> Response in
            if let cookie = request.cookies[Session.cookieName]?.value {
                try site.sessions.end(id: Session.key(cookie, token: site.secrets.webToken?.value))
            }
            site.logger.notice("Web logout", metadata: ["event": "web_logout", "from": "\(context.remoteAddress?.ipAddress ?? "?")"])
            var response = Response(status: .seeOther, headers: [.location: "/login"])
            response.setCookie(Session.cleared)
            return response
        }
    }

    /// A new logged-in session, and on to the overview.
    static func loggedIn(site: WebSite, context: WebContext, by: String) throws -> Response {
        let (_, cookie) = try Session.create(in: site.sessions, loggedIn: true, token: site.secrets.webToken?.value)
        site.logger.notice("Web login", metadata: ["event": "web_login", "by": "\(by)", "from": "\(context.remoteAddress?.ipAddress ?? "?")"])
        var response = Response(status: .seeOther, headers: [.location: "/"])
        response.setCookie(cookie)
        return response
    }

    /// `notice`: why the page is shown; `error`: what went wrong.
    static func page(site: WebSite, context: WebContext, status: HTTPResponse.Status, notice: String? = nil,
                     error: String? = nil) -> Response {
        site.templates.page("login", title: "Log in", Login(notice: notice, error: error, tokenSet: site.secrets.webToken != nil),
                            context: context, status: status)
    }

    struct Login {
        let notice: String?
        let error: String?
        let tokenSet: Bool
    }
}

/// `shelfd web --print-login-url`: a link that logs one browser in, once, within ten minutes, under the token
/// set now. Only the code's hash is stored.
package enum LoginLink {
    package static let lifetime: TimeInterval = 10 * 60

    package static func make(config: Configuration, secrets: Secrets, store: Store) throws -> String {
        let code = Session.randomToken()
        try store.webSessions.addLoginCode(Session.key(code, token: secrets.webToken?.value), expiresAt: Date().addingTimeInterval(lifetime))
        return baseURL(config: config, store: store) + "login/" + code
    }

    /// The running server's address, else the configured one; an address that means "every interface" becomes
    /// one a phone can reach (this machine's first non-loopback IPv4 address).
    static func baseURL(config: Configuration, store: Store) -> String {
        var address: ListenAddress? = config.web.address
        if let running = (try? StatusReport.webAddress(store)) ?? nil,
           let parsed = ListenAddress(String(running.dropFirst("http://".count).prefix { $0 != "/" })) {
            address = parsed
        }
        guard var address else { return "http://127.0.0.1:8787/" }
        if ["0.0.0.0", "::", ""].contains(address.host) { address.host = firstNetworkAddress() ?? "127.0.0.1" }
        return "http://\(address)/"
    }

    static func firstNetworkAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0
            else { continue }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !text.hasPrefix("127.") { return text }
        }
        return nil
    }
}

/// The login form: the token typed on the page.
private struct LoginForm: Decodable {
    var token: String?
}
