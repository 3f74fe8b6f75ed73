import Foundation
import ShelfCore

/// A loopback stand-in for the Google Books API's `GET /books/v1/volumes`: `q` with `intitle:`,
/// `inauthor:` and `isbn:`, `maxResults` (0…40), an optional `key`, volume resources in their real
/// shape, and errors in Google's envelope (`{"error": {"code", "message", "errors": [{"reason"}],
/// "status", "details"}}`): a bad key, the per-minute and per-day quotas, a disabled API, 5xx.
package final class GoogleBooksEmulator: BookServiceEmulator {
    package struct Volume: Sendable {
        /// `zyTCAlFPjgYC`.
        package var id: String
        package var title: String
        package var subtitle: String?
        package var authors: [String]
        /// `2005`, `2005-11`, `2005-11-15`.
        package var publishedDate: String?
        package var isbn13: String?
        package var isbn10: String?

        package init(
            id: String, title: String, subtitle: String? = nil, authors: [String], publishedDate: String? = nil,
            isbn13: String? = nil, isbn10: String? = nil
        ) {
            self.id = id; self.title = title; self.subtitle = subtitle; self.authors = authors
            self.publishedDate = publishedDate; self.isbn13 = isbn13; self.isbn10 = isbn10
        }
    }

    /// How one request is answered.
    package enum Reply: Sendable {
        /// From the volumes, as the real service would.
        case normal
        /// 429 "Queries per minute" (reason `rateLimitExceeded`), with `Retry-After` when given.
        case rateLimited(retryAfter: Int?)
        /// 429 "Queries per day" (reason `rateLimitExceeded`, ErrorInfo `quota_limit: defaultPerDayPerProject`).
        case dailyQuotaExceeded
        /// The older form of the same: 403 with reason `dailyLimitExceeded`.
        case dailyLimitExceeded403
        /// 403 `accessNotConfigured`: the Books API is not enabled for the key's project.
        case accessNotConfigured
        /// 500 `backendError`, 503 and the like.
        case serverError(Int)
    }

    package struct Script: ScriptedReplies {
        package var volumes: [Volume]
        /// The key that works; any other `key=` gets 400 API_KEY_INVALID. Nil: every key is wrong.
        package var apiKey: String?
        /// Answers to the first requests, in order; after them, `then`.
        package var replies: [Reply]
        package var then: Reply

        package init(
            volumes: [Volume] = GoogleBooksEmulator.sampleVolumes, apiKey: String? = GoogleBooksEmulator.defaultKey,
            replies: [Reply] = [], then: Reply = .normal
        ) {
            self.volumes = volumes; self.apiKey = apiKey; self.replies = replies; self.then = then
        }
    }

    package static let defaultKey = "AIzaSy-books-emulator-key"

    package static let sampleVolumes: [Volume] = [
        Volume(
            id: "B1hSG45JCX4C", title: "Dune", authors: ["Frank Herbert"], publishedDate: "1990-09-01",
            isbn13: "9780441172719", isbn10: "0441172717"),
        Volume(
            id: "pD6arNyKyi8C", title: "The Hobbit", subtitle: "Or, There and Back Again", authors: ["J.R.R. Tolkien"],
            publishedDate: "2012-09-18", isbn13: "9780547928227", isbn10: "054792822X"),
        Volume(
            id: "ABCkAQAAMAAJ", title: "Good Omens", authors: ["Terry Pratchett", "Neil Gaiman"], publishedDate: "1990"),
    ]

    package typealias State = RepliesInOrder<Script>
    package let host: ScriptedServer<State>

    package init(host: ScriptedServer<State>) { self.host = host }

    // MARK: - Handling

    /// Answers a request with the reply it is due; `baseURL` (the emulator's) is what
    /// `[enrich] googlebooks_base_url` should be.
    package static func respond(_ request: RecordedRequest, script: Script, reply: Reply, baseURL: String)
        -> HTTPServer.Response
    {
        guard request.method == "GET", request.path == "/books/v1/volumes" else {
            return error(404, "NOT_FOUND", "Not Found", reason: "notFound")
        }
        let query = request.query
        if let key = query["key"], key != script.apiKey {
            return error(
                400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", reason: "badRequest",
                details: [errorInfo("API_KEY_INVALID", metadata: ["service": "books.googleapis.com"])])
        }
        switch reply {
        case .normal: break
        case .rateLimited(let retryAfter):
            var response = quota("Queries per minute per user", limit: "defaultPerMinutePerUser")
            if let retryAfter { response.headers.append(("Retry-After", String(retryAfter))) }
            return response
        case .dailyQuotaExceeded:
            return quota("Queries per day", limit: "defaultPerDayPerProject")
        case .dailyLimitExceeded403:
            return error(
                403, "PERMISSION_DENIED", "Daily Limit Exceeded", reason: "dailyLimitExceeded", domain: "usageLimits")
        case .accessNotConfigured:
            return error(
                403, "PERMISSION_DENIED",
                "Books API has not been used in project 424242424242 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/books.googleapis.com/overview?project=424242424242 then retry.",
                reason: "accessNotConfigured", domain: "usageLimits",
                details: [
                    errorInfo(
                        "SERVICE_DISABLED",
                        metadata: ["service": "books.googleapis.com", "consumer": "projects/424242424242"])
                ])
        case .serverError(let status):
            return error(status, status == 503 ? "UNAVAILABLE" : "INTERNAL", "Backend Error", reason: "backendError")
        }

        guard let q = query["q"], !q.trimmingCharacters(in: .whitespaces).isEmpty else {
            return error(400, "INVALID_ARGUMENT", "Missing query.", reason: "required")
        }
        let maxResults = Int(query["maxResults"] ?? "") ?? 10
        guard (0...40).contains(maxResults) else {
            return error(
                400, "INVALID_ARGUMENT", "Invalid value at 'max_results' (TYPE_UINT32), \"\(maxResults)\"",
                reason: "invalid")
        }
        let matches = script.volumes.filter { Self.matches($0, q) }
        var answer: [String: Any] = ["kind": "books#volumes", "totalItems": matches.count]
        if !matches.isEmpty { answer["items"] = matches.prefix(maxResults).map { resource($0, baseURL: baseURL) } }
        return .json(object: answer)
    }

    /// Every term must match: `intitle:` in the title or subtitle, `inauthor:` in an author, `isbn:`
    /// an identifier, a bare word anywhere.
    private static func matches(_ volume: Volume, _ q: String) -> Bool {
        let title = searchWords(volume.title + " " + (volume.subtitle ?? ""))
        let authors = searchWords(volume.authors.joined(separator: " "))
        for term in q.split(separator: " ") {
            let term = String(term)
            if term.hasPrefix("isbn:") {
                let wanted = ISBN(String(term.dropFirst(5)))
                guard let wanted, [volume.isbn13, volume.isbn10].contains(where: { $0.flatMap(ISBN.init) == wanted })
                else {
                    return false
                }
            } else if term.hasPrefix("intitle:") {
                guard searchWords(String(term.dropFirst(8))).isSubset(of: title) else { return false }
            } else if term.hasPrefix("inauthor:") {
                guard searchWords(String(term.dropFirst(9))).isSubset(of: authors) else { return false }
            } else if !searchWords(term).isSubset(of: title.union(authors)) {
                return false
            }
        }
        return true
    }

    private static func resource(_ volume: Volume, baseURL: String) -> [String: Any] {
        var identifiers: [[String: String]] = []
        if let isbn10 = volume.isbn10 { identifiers.append(["type": "ISBN_10", "identifier": isbn10]) }
        if let isbn13 = volume.isbn13 { identifiers.append(["type": "ISBN_13", "identifier": isbn13]) }
        if identifiers.isEmpty { identifiers = [["type": "OTHER", "identifier": "UOM:39015017645338"]] }
        var info: [String: Any] = [
            "title": volume.title, "authors": volume.authors, "industryIdentifiers": identifiers,
            "readingModes": ["text": false, "image": false], "printType": "BOOK", "maturityRating": "NOT_MATURE",
            "language": "en", "previewLink": "http://books.google.com/books?id=\(volume.id)&hl=&source=gbs_api",
            "infoLink": "http://books.google.com/books?id=\(volume.id)&hl=&source=gbs_api",
            "canonicalVolumeLink": "https://books.google.com/books/about/?id=\(volume.id)",
        ]
        if let subtitle = volume.subtitle { info["subtitle"] = subtitle }
        if let date = volume.publishedDate { info["publishedDate"] = date }
        return [
            "kind": "books#volume", "id": volume.id, "etag": "x\(volume.id.prefix(8))",
            "selfLink": "\(baseURL)/books/v1/volumes/\(volume.id)", "volumeInfo": info,
            "saleInfo": ["country": "US", "saleability": "NOT_FOR_SALE", "isEbook": false],
            "accessInfo": [
                "country": "US", "viewability": "NO_PAGES", "embeddable": false, "publicDomain": false,
                "textToSpeechPermission": "ALLOWED", "accessViewStatus": "NONE", "quoteSharingAllowed": false,
            ],
        ]
    }

    /// The 429 Google sends when a quota is spent.
    private static func quota(_ limitName: String, limit: String) -> HTTPServer.Response {
        error(
            429, "RESOURCE_EXHAUSTED",
            "Quota exceeded for quota metric 'Queries' and limit '\(limitName)' of service 'books.googleapis.com' for consumer 'project_number:424242424242'.",
            reason: "rateLimitExceeded",
            details: [
                errorInfo(
                    "RATE_LIMIT_EXCEEDED",
                    metadata: [
                        "service": "books.googleapis.com", "consumer": "projects/424242424242",
                        "quota_metric": "books.googleapis.com/default", "quota_limit": limit,
                        "quota_limit_value": "1000",
                    ])
            ])
    }

    private static func errorInfo(_ reason: String, metadata: [String: String]) -> [String: Any] {
        [
            "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com",
            "metadata": metadata,
        ]
    }

    private static func error(
        _ status: Int, _ rpcStatus: String, _ message: String, reason: String, domain: String = "global",
        details: [[String: Any]]? = nil
    ) -> HTTPServer.Response {
        var body: [String: Any] = [
            "code": status, "message": message, "status": rpcStatus,
            "errors": [["message": message, "domain": domain, "reason": reason]],
        ]
        if let details { body["details"] = details }
        return .json(object: ["error": body], status: status)
    }
}

/// Starts an emulator on 127.0.0.1, runs `body` with it, and always stops it.
package func withGoogleBooksEmulator<T>(
    _ script: GoogleBooksEmulator.Script = .init(),
    _ body: (GoogleBooksEmulator) async throws -> T
) async throws -> T {
    try await GoogleBooksEmulator.with(script, body)
}
