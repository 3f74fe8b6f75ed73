import HTTPTypes
import Hummingbird
import ShelfApp

/// The session the request's cookie names, in `WebContext.session`, where the pages find its CSRF token. A
/// session not logged in counts on loopback only. Sessions live in the database (hashed): they outlive a restart,
/// and the login codes that `shelfd web --print-login-url` writes reach whichever process serves the page. Both
/// are keyed to the token they were made under (`SessionDesk`): a new `web_token` ends every session and link.
///
/// In a group of pages a browser opens (`makesSessions`), a browser on this machine gets a session without logging
/// in, for the CSRF token of its forms. Making one is a write to the database, so only a page does: another site's
/// page can make this browser fetch pictures or the feed from here as often as it likes (without the cookie, which
/// is `SameSite=Strict`), and those are in a group that makes none.
struct SessionMiddleware: RouterMiddleware {
    let sessions: SessionDesk
    let makesSessions: Bool

    static let fetchDestination = HTTPField.Name("Sec-Fetch-Dest")!

    func handle(_ request: Request, context: WebContext, next: WebContext.Next) async throws -> Response {
        var context = context
        let cookie = request.cookies[Session.cookieName]?.value
        context.session = cookie.flatMap { try? sessions.session(id: $0) }
        if let current = context.session, !current.loggedIn, !context.isFromLoopback { context.session = nil }
        var created: Cookie?
        if makesSessions && context.session == nil && !context.hasBearerToken && context.isFromLoopback
            && Self.opensPage(request), let new = try? Session.create(in: sessions, loggedIn: false)
        {
            context.session = new.session
            created = new.cookie
        }
        var response = try await next(request, context)
        if let created { response.setCookie(created) }
        return response
    }

    /// A GET the browser opens as the page itself: where it says what it fetches (`Sec-Fetch-Dest`), a document.
    static func opensPage(_ request: Request) -> Bool {
        guard request.method == .get else { return false }
        return request.headers[fetchDestination].map { $0.lowercased() == "document" } ?? true
    }
}
