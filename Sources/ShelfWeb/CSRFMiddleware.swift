import HTTPTypes
import Hummingbird
import ShelfApp

/// A POST, PUT, PATCH or DELETE needs the session's CSRF token, which only this page has (403), or the bearer
/// token. Every group has it but the login's, whose form has no session yet: the token it posts is its proof.
struct CSRFMiddleware: RouterMiddleware {
    static let header = HTTPField.Name("X-CSRF-Token")!

    func handle(_ request: Request, context: WebContext, next: WebContext.Next) async throws -> Response {
        guard request.method.changesState && !context.hasBearerToken else { return try await next(request, context) }
        var request = request
        let sent: String?
        do { sent = try await Self.sent(&request) } catch {
            throw Refusal(.badRequest, "bad_body", "The request's body could not be read.")
        }
        guard let session = context.session, let sent, BearerTokenMiddleware.constantTimeEquals(sent, session.csrf)
        else {
            throw Refusal(
                .forbidden, "csrf", "The form is out of date or came from elsewhere: reload the page and try again.")
        }
        return try await next(request, context)
    }

    /// The form field the token comes in.
    private struct Field: Decodable {
        var csrf: String?
    }

    /// The CSRF token the request carries, read before the body it guards: the header or the query's `csrf`
    /// (scripts, the page's uploads), else the form's `csrf` field: in a small URL-encoded form (Hummingbird's
    /// decoder), and in a multipart form (photos) only as its first field, so that no photo is read before the
    /// request is known to be allowed. The body read here stays in the request for the route.
    static func sent(_ request: inout Request) async throws -> String? {
        if let header = request.headers[Self.header] { return header }
        if let query = request.uri.queryParameters.get("csrf") { return query }
        let type = request.headers[.contentType]?.lowercased() ?? ""
        if type.hasPrefix("application/x-www-form-urlencoded") {
            let body = try await request.collectBody(upTo: 64 * 1024)
            return (try? URLEncodedFormDecoder().decode(Field.self, from: String(buffer: body)))?.csrf
        }
        if type.hasPrefix("multipart/form-data"),
            let boundary = MultipartStream.boundary(of: request.headers[.contentType] ?? "")
        {
            return try await request.firstMultipartField("csrf", boundary: boundary)
        }
        return nil
    }
}
