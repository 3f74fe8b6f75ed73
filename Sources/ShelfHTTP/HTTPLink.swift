import Logging
import ShelfCore

/// How shelfd reaches a remote service: the client, the log its requests go to, and the time its answers are dated and
/// timed by. Every request is logged here, at debug, with its status, sizes and duration, or the kind of its failure:
/// never its headers, body or query, where keys travel. The providers, the book sources and Hardcover each hold one,
/// so what shelfd logs of a request is decided once.
package struct HTTPLink: Sendable {
    package let http: HTTPClient
    package let logger: Logger
    /// The date a quota's reset or a pause is counted from, and the clock a request's duration is measured on.
    package let time: TimeSource
    /// What answers, as the log says it: "Provider", "Book source", "Hardcover".
    package let service: String
    /// Who is asked, on every line logged: a provider and its model, a book source.
    package let about: Logger.Metadata

    package init(http: HTTPClient, logger: Logger, time: TimeSource, service: String, about: Logger.Metadata) {
        self.http = http; self.logger = logger; self.time = time; self.service = service; self.about = about
    }

    /// One request, logged with `detail` besides (a book source's path, Hardcover's operation). Returns the answer,
    /// whatever its status, and how long it took; transport failures are thrown as they are.
    package func exchange(_ request: HTTPRequest, detail: Logger.Metadata = [:]) async throws(HTTPError) -> (
        HTTPResponse, Duration
    ) {
        let started = time.clock.now
        var metadata = about.merging(detail) { _, new in new }
        metadata["http.request.bytes"] = "\(request.body.count)"
        do {
            let response = try await http.send(request)
            let latency = started.duration(to: time.clock.now)
            metadata["http.status"] = "\(response.status)"
            metadata["http.response.bytes"] = "\(response.body.count)"
            metadata["duration_ms"] = "\(latency.milliseconds)"
            logger.debug("\(service) answered", metadata: metadata)
            return (response, latency)
        } catch {
            metadata["http.error"] = "\(error.kind.rawValue)"
            logger.debug("\(service) request failed", metadata: metadata)
            throw error
        }
    }
}
