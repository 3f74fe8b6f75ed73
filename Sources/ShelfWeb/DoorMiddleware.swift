import HTTPTypes
import Hummingbird
import Logging

/// The door of the web page, the first middleware of every route group and the router's answer to a request no
/// route takes (docs/web.md, "The web page: who may open it"):
/// - `Host` must name this server (a page on another site that rebinds its name to 127.0.0.1 is refused: 421);
/// - a NUL character anywhere in the URL is refused (400);
/// - what the middleware behind it refuses, and what a route or the router throws, is answered in the group's
///   shape (`AnswerShape`).
struct DoorMiddleware: RouterMiddleware {
    let hosts: HostRule
    /// The group's shape; nil in front of the router's "no such route", which no group answers.
    let shape: AnswerShape?

    func handle(_ request: Request, context: WebContext, next: WebContext.Next) async throws -> Response {
        let shape = shape ?? Self.shape(unrouted: request.uri.path)
        do {
            guard hosts.allows(authority: request.head.authority) else {
                throw Refusal(
                    .misdirectedRequest, "wrong_host",
                    "This server answers to the address it listens on (or localhost) only.")
            }
            if NULCharacter.isIn(request.uri.string) {
                throw Refusal(.badRequest, "nul_character", NULCharacter.message)
            }
            return try await next(request, context)
        } catch let refusal as Refusal {
            return refusal.response(as: shape)
        } catch let error as APIError {
            return error.response()
        } catch let error as any HTTPResponseError where shape == .json {
            // The router's own errors (no such route, a body too large) in the API's shape.
            return APIError(
                error.status, error.status.code == 404 ? "not_found" : "http_\(error.status.code)",
                error.status.reasonPhrase
            ).response()
        } catch let error as any HTTPResponseError {
            return (try? error.response(from: request, context: context)) ?? Response(status: error.status)
        } catch {
            context.logger.error(
                "Web request failed",
                metadata: ["event": "web_error", "path": "\(request.uri.path)", "error": "\(error)"])
            return Refusal(.internalServerError, "internal", "Something went wrong; the daemon's log says what.")
                .response(as: shape)
        }
    }

    /// A request no route takes belongs to no group, so its address alone can say how to answer: in JSON where
    /// the API's group serves (a script's mistyped call, a method the scrape does not take), as text elsewhere.
    static func shape(unrouted path: String) -> AnswerShape {
        path.hasPrefix("/api/") || path == "/metrics" ? .json : .text
    }
}
