import Hummingbird

/// Who may go past to a group's routes: a request from this machine, one with the bearer token, or one of a
/// logged-in session (as the middleware before it found them). Beyond loopback a stranger is refused: the API
/// answers 401 with `WWW-Authenticate: Bearer`, a page shows the login (401). The open groups have none.
struct AuthenticatedMiddleware: RouterMiddleware {
    /// What a stranger gets.
    enum Otherwise: Sendable {
        /// The API's 401.
        case unauthorized
        /// The login page, with a word on how to log in.
        case loginPage(WebSite)
    }

    let otherwise: Otherwise

    func handle(_ request: Request, context: WebContext, next: WebContext.Next) async throws -> Response {
        if context.hasBearerToken || context.isFromLoopback || context.loggedIn {
            return try await next(request, context)
        }
        switch otherwise {
        case .unauthorized:
            throw Refusal(
                .unauthorized, "unauthorized", "Send 'Authorization: Bearer <web_token>', or log in on the page.",
                headers: [.wwwAuthenticate: "Bearer"])
        case .loginPage(let site):
            return LoginPages.page(
                site: site, context: context, status: .unauthorized,
                notice: "Log in with the token, or open a link from 'shelfd web --print-login-url'.")
        }
    }
}
