import Foundation
internal import Logging
internal import ShelfCore
internal import ShelfHTTP

/// How a provider reaches its server: the client, the log its requests go to, and the time its answers are dated
/// and timed by. One value a provider holds, instead of three it passes along with every request.
struct ProviderLink: Sendable {
    /// The provider and model each request is logged under.
    let provider: String
    let model: String
    let http: HTTPClient
    let logger: Logger
    /// The date a quota's reset or a Retry-After is counted from, and the clock a request's latency is measured on.
    let time: TimeSource

    /// One request, logged (at debug) with status, sizes and duration only: never headers, bodies or keys. Returns
    /// the answer and how long it took; transport failures are thrown as they are.
    func exchange(_ request: HTTPRequest) async throws(HTTPError) -> (HTTPResponse, Duration) {
        let started = time.clock.now
        do {
            let response = try await http.send(request)
            let latency = started.duration(to: time.clock.now)
            logger.debug(
                "Provider answered",
                metadata: [
                    "provider": "\(provider)", "model": "\(model)", "http.status": "\(response.status)",
                    "http.request.bytes": "\(request.body.count)", "http.response.bytes": "\(response.body.count)",
                    "duration_ms": "\(latency.milliseconds)",
                ])
            return (response, latency)
        } catch {
            logger.debug(
                "Provider request failed",
                metadata: [
                    "provider": "\(provider)", "http.error": "\(error.kind.rawValue)",
                    "http.request.bytes": "\(request.body.count)",
                ])
            throw error
        }
    }

    /// A request whose only good answer is 200: the answer as received, else the provider's own reading of the
    /// failure (`networkError` for no answer, `classify` for any other status, at the time it came).
    func answer(
        _ request: HTTPRequest, networkError: (HTTPError) -> PhotoError,
        classify: (HTTPResponse, _ now: Date) -> PhotoError
    ) async throws(PhotoError) -> RawResponse {
        let response: HTTPResponse, latency: Duration
        do {
            (response, latency) = try await exchange(request)
        } catch {
            throw networkError(error)
        }
        guard response.status == 200 else { throw classify(response, time.now) }
        return RawResponse(body: response.body, receivedAt: time.now, latency: latency)
    }
}

/// What a provider's server said, for an error message: ", text" on one line, shortened to 300 characters,
/// with each secret replaced should a server ever echo one; "" when it said nothing.
func serverText(_ text: String, redacting secrets: [String]) -> String {
    guard !text.isEmpty else { return "" }
    var clean = redacting(secrets, in: text).replacingOccurrences(of: "\n", with: " ")
    if clean.count > 300 { clean = String(clean.prefix(300)) + "…" }
    return ", " + clean
}

/// The text with each non-empty secret replaced by `<redacted>`.
func redacting(_ secrets: [String], in text: String) -> String {
    secrets.filter { !$0.isEmpty }.reduce(text) { $0.replacingOccurrences(of: $1, with: "<redacted>") }
}

/// Seconds for a person: "30", "2.5".
func formatSeconds(_ seconds: TimeInterval) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
}
