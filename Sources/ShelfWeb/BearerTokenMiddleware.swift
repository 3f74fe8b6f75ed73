import Foundation
import Hummingbird
import ShelfConfig
import ShelfCore

/// `Authorization: Bearer <web_token>`, a script's way in: the right token marks the request as the token's
/// (`WebContext.hasBearerToken`), which lets it in from anywhere and stands for the CSRF token; a wrong one counts
/// against its client (`TokenThrottle`). It decides nothing itself: `AuthenticatedMiddleware` does.
struct BearerTokenMiddleware: RouterMiddleware {
    let site: WebSite

    func handle(_ request: Request, context: WebContext, next: WebContext.Next) async throws -> Response {
        guard let sent = Self.sent(request) else { return try await next(request, context) }
        var context = context
        if Self.matches(sent, site.secrets.webToken?.value) {
            context.hasBearerToken = true
        } else {
            site.throttle.recordFailure(TokenThrottle.client(context.remoteAddress))
        }
        return try await next(request, context)
    }

    /// The token of `Authorization: Bearer <token>`, when one is sent.
    static func sent(_ request: Request) -> String? {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else { return nil }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    /// The bearer header's or the login form's token against `web_token` (none set: nothing matches).
    static func matches(_ sent: String?, _ token: String?) -> Bool {
        guard let sent, let token else { return false }
        return constantTimeEquals(sent, token)
    }

    /// Compares every byte, so the time taken says nothing of how much of a guess was right.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
