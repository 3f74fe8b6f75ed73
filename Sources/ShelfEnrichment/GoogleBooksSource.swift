import Foundation
import Logging
import ShelfCore
import ShelfMatching
import ShelfHTTP

/// Google Books `volumes`: `q=intitle:… inauthor:…` for a spine, `q=isbn:…` for a checked ISBN.
/// Records are volumes (key: the volume id). The key is optional; without one Google shares a small
/// daily quota among anonymous callers. A spent daily quota pauses the source until midnight Pacific.
package struct GoogleBooksSource: RemoteBookSource {
    package let name = "googlebooks"
    private let baseURL: String
    private let apiKey: Secret?
    private let service: RemoteService

    /// - Parameters:
    ///   - baseURL: `[enrich] googlebooks_base_url` (`https://www.googleapis.com`); `/books/v1` is added.
    ///   - apiKey: `GOOGLE_BOOKS_API_KEY` (or the `google_books_api_key` credential), when there is one.
    ///   - time: the clock requests are spaced on, and the date a paused source is asked again from.
    ///   - limiter: a test's own spacing; else a request a second, two at once, on `time`'s clock (Google counts
    ///     per project, or per address without a key; a process makes its sources once, `Runtime.makeSources`).
    package init(
        baseURL: String, apiKey: Secret?, http: HTTPClient, logger: Logger, time: TimeSource,
        limiter: RateLimiter? = nil, timeout: Duration = .seconds(15), unavailablePause: TimeInterval = 30
    ) {
        self.baseURL = baseURL.withoutTrailingSlashes
        self.apiKey = apiKey.flatMap { $0.value.isEmpty ? nil : $0 }
        service = RemoteService(
            source: name, http: http,
            limiter: limiter ?? RateLimiter(requestsPerMinute: 60, burst: 2, clock: time.clock),
            logger: logger,
            userAgent: RemoteService.userAgent(contact: ""), timeout: timeout,
            unavailablePause: unavailablePause, time: time)
    }

    package var health: SourceHealth { service.gate.health }

    // MARK: Lookups

    package func candidates(for query: SpineQuery, limit: Int) async throws(LookupError) -> [CatalogueRecord] {
        let q: String
        switch query.remoteRequest {
        case .structured(let title, let surname, _):
            q = "intitle:\(title)" + (surname.isEmpty ? "" : " inauthor:\(surname)")
        case .text(let text, _):
            q = text
        case .nothing:
            return []
        }
        let volumes = try await search(q, maxResults: min(max(limit, 1), 40))
        return volumes.prefix(limit).compactMap(\.record)
    }

    /// The volume whose identifiers hold the ISBN (Google sometimes lists near misses after it).
    package func record(isbn: ISBN) async throws(LookupError) -> CatalogueRecord? {
        let volumes = try await search("isbn:\(isbn.isbn13)", maxResults: 5).compactMap(\.record)
        return volumes.first { $0.isbn13 == isbn.isbn13 } ?? volumes.first
    }

    private func search(_ q: String, maxResults: Int) async throws(LookupError) -> [Volume] {
        var parameters = [("q", q), ("maxResults", String(maxResults)), ("printType", "books")]
        if let apiKey { parameters.append(("key", apiKey.value)) }
        let response = try await service.get("\(baseURL)/books/v1/volumes?\(RemoteService.query(parameters))")
        guard response.status == 200 else { throw classify(response) }
        let answer = try service.decode(VolumesAnswer.self, from: response)
        service.gate.succeeded()
        return answer.items ?? []
    }

    /// Google's error envelope, `{"error": {"code", "message", "errors": [{"reason"}], "status", "details"}}`.
    private func classify(_ response: HTTPResponse) -> LookupError {
        let now = service.link.time.now
        let error = (try? JSONDecoder().decode(ErrorEnvelope.self, from: Data(response.body)))?.error
        let reasons = Set((error?.errors ?? []).compactMap(\.reason) + (error?.details ?? []).compactMap(\.reason))
        let quotaLimits = (error?.details ?? []).compactMap { $0.metadata?["quota_limit"] }
        let said = serverMessage(error?.message)
        let status = response.status

        let rateLimited =
            status == 429
            || (status == 403
                && !reasons.isDisjoint(with: [
                    "dailyLimitExceeded", "rateLimitExceeded", "userRateLimitExceeded",
                    "quotaExceeded", "RATE_LIMIT_EXCEEDED",
                ]))
        if rateLimited {
            let daily =
                reasons.contains("dailyLimitExceeded")
                || (error?.message ?? "").range(of: "per day", options: .caseInsensitive) != nil
                || quotaLimits.contains { $0.contains("PerDay") }
            if daily {
                let until = QuotaTimes.nextPacificMidnight(after: now)
                let advice =
                    apiKey == nil
                    ? "Set GOOGLE_BOOKS_API_KEY to a key of your own (its quota is not shared) to go on sooner."
                    : "Ask for a higher quota in the Google Cloud console to go on sooner."
                return service.close(
                    .rateLimited(until: until), .rateLimited, until: until,
                    "Google Books' daily quota is used up (HTTP \(status)\(said)); it is asked again after midnight Pacific time. \(advice)"
                )
            }
            return service.rateLimited(response, said: said)
        }
        let badKey =
            !reasons.isDisjoint(with: ["keyInvalid", "API_KEY_INVALID", "keyExpired", "API_KEY_EXPIRED"])
            || (error?.message ?? "").contains("API key")
        switch status {
        case 400 where badKey, 401, 403:
            let message =
                badKey || status == 401
                ? "Google Books rejected the API key (HTTP \(status)\(said)). Set GOOGLE_BOOKS_API_KEY (or the "
                    + "google_books_api_key credential) to a valid key, or unset it to use the shared quota; then restart shelfd."
                : "Google Books refused shelfd's requests (HTTP \(status)\(said)). Enable the Books API for the key's "
                    + "project and lift any IP or referrer restriction on the key, then restart shelfd."
            return service.close(.refused(message), .refused, until: nil, message)
        default:
            return service.failed(status, said: said)
        }
    }

    /// ", message" from Google, shortened, with the key scrubbed should it ever appear.
    private func serverMessage(_ message: String?) -> String {
        guard var text = message, !text.isEmpty else { return "" }
        if let apiKey { text = text.replacingOccurrences(of: apiKey.value, with: "<redacted>") }
        if text.count > 200 { text = String(text.prefix(200)) + "…" }
        return ": " + text.replacingOccurrences(of: "\n", with: " ")
    }

    // MARK: Wire format

    /// `{"kind": "books#volumes", "totalItems": n, "items": [...]}`; no `items` when nothing matched.
    private struct VolumesAnswer: Decodable {
        var items: [Volume]?
    }

    private struct Volume: Decodable {
        struct Info: Decodable {
            struct Identifier: Decodable { var type: String?, identifier: String? }
            var title: String?
            var subtitle: String?
            var authors: [String]?
            var publishedDate: String?
            var industryIdentifiers: [Identifier]?
        }
        var id: String?
        var volumeInfo: Info?

        var record: CatalogueRecord? {
            guard let id, let info = volumeInfo, let title = info.title, !title.isEmpty else { return nil }
            let identifiers = info.industryIdentifiers ?? []
            // ISBN_13 first; OTHER ("UOM:39015…") and ISSN are not ISBNs.
            let isbn = ["ISBN_13", "ISBN_10"].lazy.compactMap { type in
                identifiers.first { $0.type == type }?.identifier.flatMap(ISBN.init)
            }.first
            return CatalogueRecord(
                source: "googlebooks", key: id, title: CatalogueRecord.displayTitle(title, subtitle: info.subtitle),
                author: CatalogueRecord.joinedAuthors(info.authors), isbn13: isbn?.isbn13,
                isbn10: isbn?.isbn10, year: CatalogueRecord.year(in: info.publishedDate))
        }
    }

    private struct ErrorEnvelope: Decodable {
        struct Body: Decodable {
            struct Item: Decodable { var reason: String? }
            struct Detail: Decodable {
                var reason: String?
                var metadata: [String: String]?
            }
            var code: Int?
            var message: String?
            var status: String?
            var errors: [Item]?
            var details: [Detail]?
        }
        var error: Body
    }
}
