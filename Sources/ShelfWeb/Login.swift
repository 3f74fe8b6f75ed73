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

/// Logging in from beyond loopback: with the token in a form (`POST /login`), or with a one-time link that
/// `shelfd web --print-login-url` prints on the machine (`/login/<code>`). Either way a session cookie follows,
/// until `POST /logout` (with the session's CSRF token, as every POST) or a new `web_token` ends it.
enum LoginPages {
    /// The login on `login` and its links on `open` (anyone may reach them), the logout on `pages` (a session and
    /// its CSRF token).
    static func register(
        login: RouterGroup<WebContext>, open: RouterGroup<WebContext>, pages: RouterGroup<WebContext>, site: WebSite
    ) {
        login.get("login") { _, context -> Response in
            page(site: site, context: context, status: .ok)
        }

        login.post("login") { request, context -> Response in
            var request = request
            let sent = try await request.form(LoginForm.self, context: context)?.token ?? ""
            let client = TokenThrottle.client(context.remoteAddress)
            if site.throttle.isBlocked(client) {
                return page(site: site, context: context, status: .tooManyRequests, error: TokenThrottle.message)
            }
            guard BearerTokenMiddleware.matches(sent, site.secrets.webToken?.value) else {
                site.throttle.recordFailure(client)
                site.logger.warning(
                    "Web login refused",
                    metadata: ["event": "web_login_refused", "from": "\(context.remoteAddress?.ipAddress ?? "?")"])
                return page(site: site, context: context, status: .unauthorized, error: "That is not the token.")
            }
            return try loggedIn(site: site, context: context, by: "token")
        }

        open.get("login/{code}") { _, context -> Response in
            let code = try context.parameters.require("code")
            guard code.count == 64, code.allSatisfy(\.isHexDigit),
                try site.desks.sessions.redeem(code: code)
            else {
                return page(
                    site: site, context: context, status: .unauthorized,
                    error: "This login link was used already or has expired: run 'shelfd web --print-login-url' again.")
            }
            return try loggedIn(site: site, context: context, by: "link")
        }

        // The pages' `CSRFMiddleware` has checked the session's CSRF token: another site cannot log a browser out.
        pages.post("logout") { request, context -> Response in
            if let cookie = request.cookies[Session.cookieName]?.value {
                try site.desks.sessions.end(id: cookie)
            }
            site.logger.notice(
                "Web logout", metadata: ["event": "web_logout", "from": "\(context.remoteAddress?.ipAddress ?? "?")"])
            var response = Response(status: .seeOther, headers: [.location: "/login"])
            response.setCookie(Session.cleared)
            return response
        }
    }

    /// A new logged-in session, and on to the overview.
    static func loggedIn(site: WebSite, context: WebContext, by: String) throws -> Response {
        let (_, cookie) = try Session.create(in: site.desks.sessions, loggedIn: true)
        site.logger.notice(
            "Web login",
            metadata: ["event": "web_login", "by": "\(by)", "from": "\(context.remoteAddress?.ipAddress ?? "?")"])
        var response = Response(status: .seeOther, headers: [.location: "/"])
        response.setCookie(cookie)
        return response
    }

    /// `notice`: why the page is shown; `error`: what went wrong.
    static func page(
        site: WebSite, context: WebContext, status: HTTPResponse.Status, notice: String? = nil,
        error: String? = nil
    ) -> Response {
        site.templates.page(
            "login", title: "Log in", Login(notice: notice, error: error, tokenSet: site.secrets.webToken != nil),
            context: context, status: status)
    }

    struct Login {
        let notice, error: String?
        let tokenSet: Bool
    }
}

/// The login form: the token typed on the page.
private struct LoginForm: Decodable {
    var token: String?
}
