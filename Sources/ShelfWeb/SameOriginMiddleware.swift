import HTTPTypes
import Hummingbird

/// A POST, PUT, PATCH or DELETE must not come from another site's page (403). The browser says where a request
/// comes from in `Sec-Fetch-Site` (sent to HTTPS and localhost only) and `Origin`. Under `Referrer-Policy:
/// no-referrer` a form's POST says `Origin: null`, even from this page, and over plain HTTP to a LAN address
/// without `Sec-Fetch-Site`: that says nothing either way, and the CSRF token, which only this page has, decides
/// (`CSRFMiddleware`).
struct SameOriginMiddleware: RouterMiddleware {
    let hosts: HostRule

    static let fetchSite = HTTPField.Name("Sec-Fetch-Site")!

    func handle(_ request: Request, context: WebContext, next: WebContext.Next) async throws -> Response {
        if request.method.changesState && !Self.comesFromThisSite(request, hosts: hosts) {
            throw Refusal(.forbidden, "cross_origin", "A request from another site cannot change anything here.")
        }
        return try await next(request, context)
    }

    static func comesFromThisSite(_ request: Request, hosts: HostRule) -> Bool {
        if let site = request.headers[fetchSite]?.lowercased(), site != "same-origin" && site != "none" { return false }
        guard let origin = request.headers[.origin], origin != "null" else { return true }
        return hosts.isSameOrigin(origin, authority: request.head.authority)
    }
}

extension HTTPRequest.Method {
    /// A method that may change something: what the same-origin and CSRF checks guard.
    var changesState: Bool { self == .post || self == .put || self == .patch || self == .delete }
}
