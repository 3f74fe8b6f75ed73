import Foundation
import Logging
import ShelfCore
import ShelfMatching
import ShelfHTTP

/// openlibrary.org: `search.json` for a spine, `/isbn/{isbn}.json` for a checked ISBN. Records are
/// works (`/works/OL…W`). OpenLibrary asks every client to name itself and a contact in the
/// User-Agent, and allows such clients 3 requests a second (1 without a contact); 429s are honoured.
package struct OpenLibrarySource: RemoteBookSource {
    package let name = "openlibrary"
    private let baseURL: String
    private let identified: Bool
    private let service: RemoteService

    /// The fields asked of `search.json`; `isbn` is every edition's, so a record can carry one.
    static let searchFields = "key,title,subtitle,author_name,isbn,first_publish_year"

    /// - Parameters:
    ///   - baseURL: `[enrich] openlibrary_base_url`, without a trailing path (`https://openlibrary.org`).
    ///   - contact: `[enrich] contact`, an email or URL for the User-Agent; without one OpenLibrary allows
    ///     a third of the rate, and may refuse shelfd altogether.
    ///   - time: the clock requests are spaced on, and the date a paused source is asked again from.
    ///   - limiter: a test's own spacing; else 3 requests a second with a contact, 1 without, on `time`'s clock. A
    ///     process makes its sources once (`Runtime.makeSources`), so the whole process keeps to it.
    package init(
        baseURL: String, contact: String, http: HTTPClient, logger: Logger, time: TimeSource,
        limiter: RateLimiter? = nil, timeout: Duration = .seconds(15), unavailablePause: TimeInterval = 30
    ) {
        self.baseURL = baseURL.withoutTrailingSlashes
        identified = !contact.trimmingCharacters(in: .whitespaces).isEmpty
        service = RemoteService(
            source: name, http: http,
            limiter: limiter ?? RateLimiter(requestsPerMinute: identified ? 180 : 60, burst: 1, clock: time.clock),
            logger: logger,
            userAgent: RemoteService.userAgent(contact: contact), timeout: timeout,
            unavailablePause: unavailablePause, time: time)
    }

    package var health: SourceHealth { service.gate.health }

    // MARK: Lookups

    package func candidates(for query: SpineQuery, limit: Int) async throws(LookupError) -> [CatalogueRecord] {
        var parameters: [(String, String)]
        switch query.remoteRequest {
        case .structured(let title, let surname, _):
            parameters = [("title", title)]
            if !surname.isEmpty { parameters.append(("author", surname)) }
        case .text(let text, _):
            parameters = [("q", text)]
        case .nothing:
            return []
        }
        parameters += [("fields", Self.searchFields), ("limit", String(min(max(limit, 1), 100)))]
        let response = try await service.get("\(baseURL)/search.json?\(RemoteService.query(parameters))")
        guard response.status == 200 else { throw classify(response) }
        let answer = try service.decode(SearchAnswer.self, from: response)
        service.gate.succeeded()
        return answer.docs.prefix(limit).compactMap { $0.record(preferring: query.isbn) }
    }

    /// The edition the ISBN names (following OpenLibrary's redirect to `/books/OL…M.json`), its title,
    /// and its first author's name: the edition's author, else the work's. Three requests (the redirect,
    /// the edition, the author), four when only the work names the author; the cache keeps them to one time.
    package func record(isbn: ISBN) async throws(LookupError) -> CatalogueRecord? {
        guard let edition = try await fetch(Edition.self, "/isbn/\(isbn.isbn13).json") else { return nil }
        var author: String?
        if let key = edition.authors?.first?.key {
            author = try await fetch(Author.self, "\(key).json")?.displayName
        } else if let workKey = edition.works?.first?.key,
            let key = try await fetch(Work.self, "\(workKey).json")?.authors?.first?.authorKey
        {
            author = try await fetch(Author.self, "\(key).json")?.displayName
        }
        guard let title = edition.title, !title.isEmpty else { return nil }
        return CatalogueRecord(
            source: name, key: edition.works?.first?.key ?? edition.key ?? "/isbn/\(isbn.isbn13)",
            title: CatalogueRecord.displayTitle(title, subtitle: edition.subtitle), author: author,
            isbn13: isbn.isbn13, isbn10: isbn.isbn10, year: CatalogueRecord.year(in: edition.publishDate))
    }

    /// GETs a JSON document by path, following up to three redirects; nil on 404.
    private func fetch<T: Decodable>(_ type: T.Type, _ path: String) async throws(LookupError) -> T? {
        var url = path.hasPrefix("/") ? baseURL + path : "\(baseURL)/\(path)"
        for _ in 0..<4 {
            let response = try await service.get(url)
            switch response.status {
            case 200:
                let value = try service.decode(type, from: response)
                service.gate.succeeded()
                return value
            case 404:
                service.gate.succeeded()
                return nil
            case 301, 302, 303, 307, 308:
                guard let location = response.header("location"), !location.isEmpty else {
                    throw service.unavailable("OpenLibrary redirected (HTTP \(response.status)) without saying where.")
                }
                url = location.hasPrefix("/") ? baseURL + location : location
            default:
                throw classify(response)
            }
        }
        throw service.unavailable("OpenLibrary redirected more than three times for \(path).")
    }

    /// Any answer but 200, 404 and a redirect.
    private func classify(_ response: HTTPResponse) -> LookupError {
        switch response.status {
        case 429:
            return service.rateLimited(response)
        case 401, 403:
            let message =
                identified
                ? "OpenLibrary refused shelfd's requests (HTTP \(response.status)) although they name [enrich] contact; "
                    + "it is not asked again until shelfd restarts. Check the contact, or remove openlibrary from [enrich] sources."
                : "OpenLibrary refused shelfd's requests (HTTP \(response.status)). Set [enrich] contact in shelfd.toml to "
                    + "an email address or URL, which OpenLibrary asks of every client, then restart shelfd."
            return service.close(.refused(message), .refused, until: nil, message)
        default:
            return service.failed(response.status)
        }
    }

    // MARK: Wire format

    /// `search.json`: `{"numFound", "start", "docs": [...]}`, each doc holding only the fields asked for.
    private struct SearchAnswer: Decodable {
        var docs: [Doc]
    }

    private struct Doc: Decodable {
        var key: String?
        var title: String?
        var subtitle: String?
        var authorName: [String]?
        var isbn: [String]?
        var firstPublishYear: Int?

        enum CodingKeys: String, CodingKey {
            case key, title, subtitle, isbn
            case authorName = "author_name", firstPublishYear = "first_publish_year"
        }

        /// The work as a record; its ISBN is the spine's own when the work has that edition, else
        /// the first valid one listed.
        func record(preferring hint: ISBN?) -> CatalogueRecord? {
            guard let key, let title, !title.isEmpty else { return nil }
            let isbns = isbn ?? []
            let chosen =
                hint.flatMap { hint in isbns.contains { ISBN($0) == hint } ? hint : nil }
                ?? isbns.lazy.compactMap { ISBN($0) }.first
            return CatalogueRecord(
                source: "openlibrary", key: key, title: CatalogueRecord.displayTitle(title, subtitle: subtitle),
                author: CatalogueRecord.joinedAuthors(authorName), isbn13: chosen?.isbn13,
                isbn10: chosen?.isbn10, year: firstPublishYear)
        }
    }

    private struct Reference: Decodable { var key: String }

    /// `/books/OL…M.json`.
    private struct Edition: Decodable {
        var key: String?
        var title: String?
        var subtitle: String?
        var authors: [Reference]?
        var works: [Reference]?
        var publishDate: String?

        enum CodingKeys: String, CodingKey {
            case key, title, subtitle, authors, works
            case publishDate = "publish_date"
        }
    }

    /// `/works/OL…W.json`: authors are roles, `{"author": {"key": …}, "type": …}`.
    private struct Work: Decodable {
        struct Role: Decodable {
            var author: Reference?
            var key: String? // a few old records list the author directly
            var authorKey: String? { author?.key ?? key }
        }
        var authors: [Role]?
    }

    /// `/authors/OL…A.json`.
    private struct Author: Decodable {
        var name: String?
        var personalName: String?

        enum CodingKeys: String, CodingKey {
            case name
            case personalName = "personal_name"
        }

        var displayName: String? { name ?? personalName }
    }
}
