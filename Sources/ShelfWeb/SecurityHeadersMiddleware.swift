import HTTPTypes
import Hummingbird

/// Every answer's policy, on the router: Hummingbird's `ContentSecurityMiddleware` (the Content-Security-Policy
/// and `nosniff`), and `Referrer-Policy: no-referrer`, so that no address of this page leaves with a link.
/// The door in front of each group answers whatever is thrown, so every answer passes back through here.
struct SecurityHeadersMiddleware: RouterMiddleware {
    /// Only this page's own script, styles and pictures; no plugin, no frame around it, forms posted here only.
    static let policy: ContentSecurityPolicy = [
        .defaultSrc(.self), .imgSrc(.self, "data:"), .scriptSrc(.self), .styleSrc(.self), .objectSrc(.none),
        .frameAncestors(.none), .baseURI(.none), .formAction(.self),
    ]

    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    private let contentSecurity = ContentSecurityMiddleware<WebContext>(contentSecurityPolicy: Self.policy)

    func handle(_ request: Request, context: WebContext, next: WebContext.Next) async throws -> Response {
        var response = try await contentSecurity.handle(request, context: context, next: next)
        response.headers[Self.referrerPolicy] = "no-referrer"
        return response
    }
}
