import Foundation
internal import Logging
internal import ShelfCore
internal import ShelfHTTP

extension HTTPLink {
    /// A provider's link: each request logged under the provider and its model.
    init(provider: String, model: String, http: HTTPClient, logger: Logger, time: TimeSource) {
        self.init(
            http: http, logger: logger, time: time, service: "Provider",
            about: ["provider": "\(provider)", "model": "\(model)"])
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
