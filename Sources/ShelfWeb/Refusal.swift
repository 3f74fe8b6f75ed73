import HTTPTypes
import Hummingbird
import NIOCore

/// How a route group answers what it refuses and what fails: the API and the scrape in the API's JSON
/// (`{"error": {"code", "message"}}`, which scripts read), the pages and the open routes as plain text.
enum AnswerShape: Sendable {
    case json
    case text
}

/// A request the door or an access middleware turns away. It is thrown, so that the middleware need not know its
/// group: the group's door answers it in the group's shape (`DoorMiddleware`).
struct Refusal: Error {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    /// Added to the answer, whatever its shape (the API's 401 says `WWW-Authenticate: Bearer`).
    let headers: HTTPFields

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status; self.code = code; self.message = message; self.headers = headers
    }

    func response(as shape: AnswerShape) -> Response {
        var response: Response
        switch shape {
        case .json:
            response = APIError(status, code, message).response()
        case .text:
            var text = HTTPFields()
            text[.contentType] = "text/plain; charset=utf-8"
            response = Response(
                status: status, headers: text, body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
        }
        response.headers.append(contentsOf: headers)
        return response
    }
}
