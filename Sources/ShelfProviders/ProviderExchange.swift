package import Logging
internal import ShelfCore
package import ShelfHTTP

extension HTTPClient {
    /// One request to a provider, logged (at debug) with status, sizes and duration only: never headers,
    /// bodies or keys. Returns the answer and how long it took; transport failures are thrown as they are.
    package func exchange(_ request: HTTPRequest, provider: String, model: String,
                          logger: Logger) async throws(HTTPError) -> (HTTPResponse, Duration) {
        let started = ContinuousClock.now
        do {
            let response = try await send(request)
            let latency = started.duration(to: .now)
            logger.debug("Provider answered", metadata: [
                "provider": "\(provider)", "model": "\(model)", "http.status": "\(response.status)",
                "http.request.bytes": "\(request.body.count)", "http.response.bytes": "\(response.body.count)",
                "duration_ms": "\(latency.milliseconds)",
            ])
            return (response, latency)
        } catch {
            logger.debug("Provider request failed", metadata: [
                "provider": "\(provider)", "http.error": "\(error.kind.rawValue)", "http.request.bytes": "\(request.body.count)"])
            throw error
        }
    }
}
