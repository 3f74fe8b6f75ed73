import Hummingbird

/// A client that sent too many wrong tokens lately (`TokenThrottle`) is refused any bearer token (429) until the
/// window has passed, the right one too: a guess that came right would otherwise say so. A request without a
/// token, a logged-in session's, goes on.
struct ThrottleMiddleware: RouterMiddleware {
    let throttle: TokenThrottle

    func handle(_ request: Request, context: WebContext, next: WebContext.Next) async throws -> Response {
        let client = TokenThrottle.client(context.remoteAddress)
        if BearerTokenMiddleware.sent(request) != nil && throttle.isBlocked(client) {
            throw Refusal(.tooManyRequests, "too_many_wrong_tokens", TokenThrottle.message)
        }
        return try await next(request, context)
    }
}
