import Foundation
import ShelfCore

/// A loopback stand-in for openlibrary.org's read API: `search.json` (title/author/q, `fields`, `limit`),
/// `/isbn/{isbn}.json` (a 302 to the edition, as the real one answers), `/books/…`, `/works/…` and
/// `/authors/….json`, with their real shapes. It can rate-limit (429 with Retry-After), fail (5xx),
/// refuse clients without a contact in their User-Agent (403), and logs every request.
package final class OpenLibraryEmulator: BookServiceEmulator {
    package struct Author: Sendable {
        /// `OL26320A`.
        package var id: String
        package var name: String
        package init(id: String, name: String) { self.id = id; self.name = name }
    }

    /// A work with one edition.
    package struct Book: Sendable {
        /// `OL893415W`.
        package var work: String
        /// `OL7353617M`.
        package var edition: String
        package var title: String
        package var subtitle: String?
        package var authors: [Author]
        /// As OpenLibrary lists them: ISBN-13 and ISBN-10 forms, any order.
        package var isbns: [String]
        package var firstPublishYear: Int?
        /// The edition's `publish_date`, free text ("June 1, 1990").
        package var publishDate: String?
        /// The edition names no authors, only its work does (common among imported records).
        package var authorsOnlyOnWork: Bool

        package init(
            work: String, edition: String, title: String, subtitle: String? = nil, authors: [Author],
            isbns: [String] = [], firstPublishYear: Int? = nil, publishDate: String? = nil,
            authorsOnlyOnWork: Bool = false
        ) {
            self.work = work; self.edition = edition; self.title = title; self.subtitle = subtitle
            self.authors = authors; self.isbns = isbns; self.firstPublishYear = firstPublishYear
            self.publishDate = publishDate; self.authorsOnlyOnWork = authorsOnlyOnWork
        }
    }

    /// How one request is answered.
    package enum Reply: Sendable {
        /// From the books, as the real service would.
        case normal
        /// 429 with the body nginx sends, and `Retry-After` when given.
        case rateLimited(retryAfter: Int?)
        /// 500, 502, 503 or 504 with an HTML page.
        case serverError(Int)
        /// 403, as for a client OpenLibrary will not serve.
        case forbidden
        /// 200 with an HTML page instead of JSON (a maintenance page).
        case garbage
    }

    package struct Script: ScriptedReplies {
        package var books: [Book]
        /// Answers to the first requests, in order; after them, `then`.
        package var replies: [Reply]
        package var then: Reply
        /// A User-Agent without a `(contact)` gets 403, as OpenLibrary's bot policy allows.
        package var refuseAnonymous: Bool

        package init(
            books: [Book] = OpenLibraryEmulator.sampleBooks, replies: [Reply] = [], then: Reply = .normal,
            refuseAnonymous: Bool = false
        ) {
            self.books = books; self.replies = replies; self.then = then; self.refuseAnonymous = refuseAnonymous
        }
    }

    /// A few works shaped like their real records (valid ISBNs; one names its authors only on the work).
    package static let sampleBooks: [Book] = [
        Book(
            work: "OL893415W", edition: "OL7353617M", title: "Dune",
            authors: [Author(id: "OL79034A", name: "Frank Herbert")],
            isbns: ["9780441172719", "0441172717", "9780340960196", "0340960191"], firstPublishYear: 1965,
            publishDate: "September 1, 1990"),
        Book(
            work: "OL27448W", edition: "OL26331930M", title: "The Lord of the Rings",
            authors: [Author(id: "OL26320A", name: "J.R.R. Tolkien")], isbns: ["9780618640157", "0618640150"],
            firstPublishYear: 1954, publishDate: "2005", authorsOnlyOnWork: true),
        Book(
            work: "OL262758W", edition: "OL24382006M", title: "The Hobbit", subtitle: "or There and Back Again",
            authors: [Author(id: "OL26320A", name: "J.R.R. Tolkien")], isbns: ["9780547928227", "054792822X"],
            firstPublishYear: 1937, publishDate: "2012"),
        Book(
            work: "OL453936W", edition: "OL7826547M", title: "Good Omens",
            authors: [Author(id: "OL25712A", name: "Terry Pratchett"), Author(id: "OL23919A", name: "Neil Gaiman")],
            isbns: ["9780060853976", "0060853972"], firstPublishYear: 1990, publishDate: "November 28, 2006"),
    ]

    package typealias State = RepliesInOrder<Script>
    package let host: ScriptedServer<State>

    package init(host: ScriptedServer<State>) { self.host = host }

    // MARK: - Handling

    /// Answers a request with the reply it is due; `baseURL` (the emulator's) is what
    /// `[enrich] openlibrary_base_url` should be.
    package static func respond(_ request: RecordedRequest, script: Script, reply: Reply, baseURL: String)
        -> HTTPServer.Response
    {
        switch reply {
        case .normal: break
        case .rateLimited(let retryAfter):
            return .json(
                object: [
                    "status": 429,
                    "message": "Too Many Requests. Consider using https://openlibrary.org/developers/dumps.",
                ],
                status: 429, headers: retryAfter.map { [("Retry-After", String($0))] } ?? [])
        case .serverError(let status):
            return html(
                status,
                "<html><body><h1>\(status)</h1>The server is temporarily unable to service your request.</body></html>")
        case .forbidden:
            return html(403, "<html><body><h1>403 Forbidden</h1></body></html>")
        case .garbage:
            return html(200, "<!DOCTYPE html><html><body>Open Library is down for maintenance.</body></html>")
        }
        let agent = request.header("user-agent") ?? ""
        if script.refuseAnonymous && !(agent.contains("(") && agent.contains(")")) {
            return html(403, "<html><body><h1>403 Forbidden</h1></body></html>")
        }
        guard request.method == "GET" else { return notFound(request.path) }

        let path = request.path
        if path == "/search.json" { return search(request.query, books: script.books) }
        if let raw = segment(path, "/isbn/") {
            guard let isbn = ISBN(raw), let book = script.books.first(where: { $0.isbns.contains { ISBN($0) == isbn } })
            else {
                return notFound(path)
            }
            return HTTPServer.Response(
                status: 302, headers: [("Location", "\(baseURL)/books/\(book.edition).json")],
                text: "")
        }
        if let id = segment(path, "/books/"), let book = script.books.first(where: { $0.edition == id }) {
            return .json(object: edition(book))
        }
        if let id = segment(path, "/works/"), let book = script.books.first(where: { $0.work == id }) {
            return .json(object: work(book))
        }
        if let id = segment(path, "/authors/"),
            let author = script.books.flatMap(\.authors).first(where: { $0.id == id })
        {
            return .json(object: [
                "key": "/authors/\(author.id)", "name": author.name, "personal_name": author.name,
                "type": ["key": "/type/author"], "revision": 12,
            ])
        }
        return notFound(path)
    }

    /// `/isbn/0441172717.json` with prefix `/isbn/` → `0441172717`.
    private static func segment(_ path: String, _ prefix: String) -> String? {
        guard path.hasPrefix(prefix), path.hasSuffix(".json") else { return nil }
        let value = path.dropFirst(prefix.count).dropLast(".json".count)
        return value.isEmpty || value.contains("/") ? nil : String(value)
    }

    /// Every word of `title` in the title or subtitle, of `author` in an author's name, of `q` anywhere.
    private static func search(_ query: [String: String], books: [Book]) -> HTTPServer.Response {
        let title = searchWords(query["title"] ?? ""), author = searchWords(query["author"] ?? "")
        let q = searchWords(query["q"] ?? "")
        guard !(title.isEmpty && author.isEmpty && q.isEmpty) else {
            return .json(object: ["error": "No query given"], status: 422)
        }
        let limit = Int(query["limit"] ?? "") ?? 100
        let matches = books.filter { book in
            let titleWords = searchWords(book.title + " " + (book.subtitle ?? ""))
            let authorWords = searchWords(book.authors.map(\.name).joined(separator: " "))
            return title.isSubset(of: titleWords) && author.isSubset(of: authorWords)
                && q.isSubset(of: titleWords.union(authorWords))
        }
        let fields = query["fields"].map { Set($0.split(separator: ",").map(String.init)) }
        let docs = matches.prefix(limit).map { book in
            var doc: [String: Any] = [
                "key": "/works/\(book.work)", "type": "work", "title": book.title,
                "author_name": book.authors.map(\.name), "author_key": book.authors.map(\.id),
                "edition_count": 1, "edition_key": [book.edition], "language": ["eng"],
            ]
            if let subtitle = book.subtitle { doc["subtitle"] = subtitle }
            if !book.isbns.isEmpty { doc["isbn"] = book.isbns }
            if let year = book.firstPublishYear { doc["first_publish_year"] = year }
            if let fields, !fields.contains("*") { doc = doc.filter { fields.contains($0.key) } }
            return doc
        }
        return .json(object: [
            "numFound": matches.count, "start": 0, "numFoundExact": true, "num_found": matches.count,
            "documentation_url": "https://openlibrary.org/dev/docs/api/search", "q": query["q"] ?? "",
            "offset": NSNull(),
            "docs": docs,
        ])
    }

    private static func edition(_ book: Book) -> [String: Any] {
        var edition: [String: Any] = [
            "key": "/books/\(book.edition)", "title": book.title, "works": [["key": "/works/\(book.work)"]],
            "type": ["key": "/type/edition"], "revision": 14,
            "latest_revision": 14, "created": ["type": "/type/datetime", "value": "2008-04-01T03:28:50.625462"],
        ]
        if let subtitle = book.subtitle { edition["subtitle"] = subtitle }
        if !book.authorsOnlyOnWork { edition["authors"] = book.authors.map { ["key": "/authors/\($0.id)"] } }
        let isbn13 = book.isbns.filter { $0.count == 13 }, isbn10 = book.isbns.filter { $0.count == 10 }
        if !isbn13.isEmpty { edition["isbn_13"] = isbn13 }
        if !isbn10.isEmpty { edition["isbn_10"] = isbn10 }
        if let date = book.publishDate { edition["publish_date"] = date }
        return edition
    }

    private static func work(_ book: Book) -> [String: Any] {
        [
            "key": "/works/\(book.work)", "title": book.title, "type": ["key": "/type/work"],
            "authors": book.authors.map {
                ["author": ["key": "/authors/\($0.id)"], "type": ["key": "/type/author_role"]]
            },
            "revision": 20,
        ]
    }

    private static func notFound(_ path: String) -> HTTPServer.Response {
        let key = path.hasSuffix(".json") ? String(path.dropLast(".json".count)) : path
        return .json(object: ["error": "notfound", "key": key], status: 404)
    }

    private static func html(_ status: Int, _ body: String) -> HTTPServer.Response {
        HTTPServer.Response(status: status, headers: [("Content-Type", "text/html; charset=utf-8")], text: body)
    }
}

/// Starts an emulator on 127.0.0.1, runs `body` with it, and always stops it.
package func withOpenLibraryEmulator<T>(
    _ script: OpenLibraryEmulator.Script = .init(),
    _ body: (OpenLibraryEmulator) async throws -> T
) async throws -> T {
    try await OpenLibraryEmulator.with(script, body)
}
