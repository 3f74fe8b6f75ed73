import Foundation
import Logging
import ShelfCore
import ShelfMatching
import ShelfHTTP

/// What OpenLibrary and Google Books share: the request spacing, the gate that keeps a
/// rate-limited or refusing service from being asked, and GET requests logged without their query
/// (Google's key travels in it).
struct RemoteService: Sendable {
    let source: String
    /// The client, the log and the time (the date a pause is counted from).
    let link: HTTPLink
    let limiter: RateLimiter
    let gate: SourceGate
    let userAgent: String
    let timeout: Duration
    /// How long a source that is down (5xx, no connection, garbage) is left alone.
    let unavailablePause: TimeInterval

    init(
        source: String, http: HTTPClient, limiter: RateLimiter, logger: Logger, userAgent: String,
        timeout: Duration, unavailablePause: TimeInterval, time: TimeSource
    ) {
        self.source = source; self.limiter = limiter; gate = SourceGate(source: source); self.userAgent = userAgent
        self.timeout = timeout; self.unavailablePause = unavailablePause
        link = HTTPLink(http: http, logger: logger, time: time, service: "Book source", about: ["source": "\(source)"])
    }

    /// Sends one GET once the gate is open and the limiter allows; any status is returned. A transfer
    /// that fails closes the gate for `unavailablePause`.
    func get(_ url: String) async throws(LookupError) -> HTTPResponse {
        try gate.admit(now: link.time.now)
        do {
            try await limiter.waitForTurn()
        } catch {
            throw LookupError.unavailable("cancelled")
        }
        try gate.admit(now: link.time.now) // another lookup may have closed it while this one waited
        let request = HTTPRequest(
            url: url, headers: [("User-Agent", userAgent), ("Accept", "application/json")],
            timeout: timeout, connectTimeout: .seconds(5))
        do {
            return try await link.exchange(request, detail: ["http.path": "\(Self.pathOf(url))"]).0
        } catch {
            if error.kind == .cancelled { throw LookupError.unavailable("cancelled") }
            throw unavailable("\(displayName) could not be reached (\(error.kind.rawValue): \(error.message)).")
        }
    }

    /// Closes the gate briefly and returns the error: the service is down or answered nonsense.
    func unavailable(_ message: String) -> LookupError {
        close(.unavailable(message), .unavailable, until: link.time.now.addingTimeInterval(unavailablePause), message)
    }

    /// Closes the gate until `until` (nil: until the configuration changes), says so once in the log,
    /// and returns the error every lookup throws meanwhile.
    func close(_ error: LookupError, _ state: SourceHealth.State, until: Date?, _ message: String) -> LookupError {
        let wasOpen = gate.health.state == .ok
        gate.close(error, state: state, until: until, message: message)
        if wasOpen {
            link.logger.warning(
                "Book source paused",
                metadata: [
                    "source": "\(source)", "state": "\(state.rawValue)",
                    "until": "\(until.map { "\($0)" } ?? "configuration change")",
                    "reason": "\(message)",
                ])
        }
        return error
    }

    /// A 429 (or the like) that is not a daily quota: paused for the answer's Retry-After, else for a
    /// minute that doubles with each one in a row.
    func rateLimited(_ response: HTTPResponse, said: String = "") -> LookupError {
        let now = link.time.now
        let delay =
            response.header("retry-after").flatMap { QuotaTimes.retryAfter($0, now: now) }
            ?? gate.nextRateLimitBackoff()
        let until = now.addingTimeInterval(delay)
        return close(
            .rateLimited(until: until), .rateLimited, until: until,
            "\(displayName) is rate-limiting shelfd (HTTP \(response.status)\(said)); it is asked again in \(Int(delay.rounded(.up))) s."
        )
    }

    /// Any other answer that is not the data: 408 and 5xx pause the source briefly; another 4xx is about
    /// this one request, not the service, so nothing is paused.
    func failed(_ status: Int, said: String = "") -> LookupError {
        if status == 408 || (500...599).contains(status) {
            return unavailable("\(displayName) is unavailable (HTTP \(status)\(said)).")
        }
        return .unavailable(
            "\(displayName) rejected the request (HTTP \(status)\(said)); check [enrich] \(source)_base_url.")
    }

    /// Decodes a 200 answer; anything else closes the gate briefly.
    func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse) throws(LookupError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(response.body))
        } catch {
            throw unavailable(
                "\(displayName) answered HTTP \(response.status) with something that is not the JSON it documents.")
        }
    }

    var displayName: String {
        source == "googlebooks" ? "Google Books" : source == "openlibrary" ? "OpenLibrary" : source
    }

    /// `scheme://host/path?query` → `/path`.
    static func pathOf(_ url: String) -> String {
        let withoutQuery = url.prefix { $0 != "?" }
        guard let scheme = withoutQuery.range(of: "://") else { return String(withoutQuery) }
        let rest = withoutQuery[scheme.upperBound...]
        return rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
    }

    /// `a=1&b=two+words`: unreserved characters (and `:`, `,`) as they are, spaces as `+`, the rest escaped.
    static func query(_ pairs: [(String, String)]) -> String {
        pairs.map { "\($0.0)=\(escape($0.1))" }.joined(separator: "&")
    }

    private static let kept = CharacterSet(
        charactersIn:
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:, ")

    private static func escape(_ value: String) -> String {
        (value.addingPercentEncoding(withAllowedCharacters: kept) ?? "").replacingOccurrences(of: " ", with: "+")
    }

    /// The User-Agent OpenLibrary asks for: the application, its version and a way to reach its user.
    static func userAgent(contact: String) -> String {
        let contact = contact.trimmingCharacters(in: .whitespacesAndNewlines)
        return "shelfd/\(ShelfdVersion.current)" + (contact.isEmpty ? "" : " (\(contact))")
    }
}

extension SpineQuery {
    /// The question a remote source is asked, normalised: what the sources send and the cache's key.
    /// A structured reading asks for the title (without subtitle, article or brackets) and the author's
    /// surname; free text is folded. Empty when the spine gave nothing to ask about.
    var remoteRequest: RemoteRequest {
        let title = title.map(TextNormalization.title) ?? ""
        if !title.isEmpty {
            return .structured(title: title, surname: TextNormalization.surname(author), isbn: isbn)
        }
        let text = TextNormalization.fold(text)
        return text.isEmpty ? .nothing : .text(text, isbn: isbn)
    }
}

enum RemoteRequest: Hashable {
    case structured(title: String, surname: String, isbn: ISBN?)
    case text(String, isbn: ISBN?)
    case nothing

    /// `title:…|author:…`, `text:…`, each with `|isbn:…` when the spine showed one (it picks the edition).
    var cacheKey: String? {
        switch self {
        case .structured(let title, let surname, let isbn): "title:\(title)|author:\(surname)" + Self.suffix(isbn)
        case .text(let text, let isbn): "text:\(text)" + Self.suffix(isbn)
        case .nothing: nil
        }
    }

    private static func suffix(_ isbn: ISBN?) -> String { isbn.map { "|isbn:\($0.isbn13)" } ?? "" }
}

extension CatalogueRecord {
    /// Title and subtitle as a catalogue shows them: "Dune: Deluxe Edition".
    static func displayTitle(_ title: String, subtitle: String?) -> String {
        guard let subtitle = subtitle?.trimmingCharacters(in: .whitespaces), !subtitle.isEmpty else { return title }
        return "\(title): \(subtitle)"
    }

    /// Several authors in one field, in a form `TextNormalization.surname` reads as the first one's.
    static func joinedAuthors(_ names: [String]?) -> String? {
        let names = (names ?? []).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return names.isEmpty ? nil : names.joined(separator: " & ")
    }

    /// The first plausible year in a publication date ("1965", "June 1, 1990", "2005-11-15").
    static func year(in date: String?) -> Int? {
        guard let date, let range = date.range(of: #"(1[5-9]|20)[0-9]{2}"#, options: .regularExpression) else {
            return nil
        }
        return Int(date[range])
    }
}
