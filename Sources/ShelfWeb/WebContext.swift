import Hummingbird
import NIOCore
import ShelfApp

/// What a handler knows of the request beyond the request itself: who sent it (loopback or not).
package struct WebContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The peer; nil when the channel no longer knows it.
    package let remoteAddress: SocketAddress?
    /// True when the request carries the right `Authorization: Bearer` token (`BearerTokenMiddleware`).
    package var hasBearerToken = false
    /// The session the request's cookie names, or the one just made for it (`SessionMiddleware`).
    package var session: WebSession?

    /// The session's CSRF token: every form carries it (hidden field `csrf`) and every script's POST sends it
    /// (header `X-CSRF-Token`, read from `<meta name="csrf-token">`).
    package var csrfToken: String { session?.csrf ?? "" }
    /// True for a session logged in with the token or a login link: the pages then offer "Log out".
    package var loggedIn: Bool { session?.loggedIn == true }

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// Bodies are read by the routes that take them, each with its own limit (`[web] max_upload_mb` for photos).
    package var maxUploadSize: Int { 64 * 1024 }

    /// True for a request from this machine.
    package var isFromLoopback: Bool {
        guard let ip = remoteAddress?.ipAddress else { return false }
        return ip.hasPrefix("127.") || ip == "::1" || ip.hasPrefix("::ffff:127.")
    }
}

extension WebContext {
    /// What a middleware calls to pass the request on, to the next middleware or the route.
    typealias Next = (Request, WebContext) async throws -> Response
}

/// A page number from a query (`?page=`): 1 when absent or not a number, and never past `maxPage`, so that
/// the offset (page − 1) × page size stays far inside Int and PostgreSQL's bigint whatever the request says (a
/// page past the last shows that it is past the last).
enum PageNumber {
    static let maxPage = 1_000_000

    static func parse(_ text: String?) -> Int {
        min(maxPage, max(1, text.flatMap { Int($0) } ?? 1))
    }
}

/// A NUL character is no part of any text shelfd takes (a title, a search, a key), and PostgreSQL refuses it in
/// text: a request that carries one, raw or as `%00`, is refused (400) before it reaches the store.
enum NULCharacter {
    static let message = "A NUL character (%00) is not text shelfd takes: send the value without it."

    static func isIn(_ text: some StringProtocol) -> Bool { text.contains("%00") || text.contains("\0") }

    /// The refusal a route throws for a body that carries one (the door checks the URL itself).
    static func refuse(_ text: some StringProtocol) throws {
        if isIn(text) { throw HTTPError(.badRequest, message: message) }
    }
}

extension Request {
    /// A posted `application/x-www-form-urlencoded` form decoded into `Form`, nil when it does not decode
    /// (fields it does not name are ignored: the `csrf` field is `CSRFMiddleware`'s). A body past the
    /// context's small limit is refused (413), one with a NUL character 400.
    mutating func form<Form: Decodable>(_ type: Form.Type, context: WebContext) async throws -> Form? {
        let text = String(buffer: try await collectBody(upTo: context.maxUploadSize))
        try NULCharacter.refuse(text)
        return try? URLEncodedFormDecoder().decode(Form.self, from: text)
    }
}
