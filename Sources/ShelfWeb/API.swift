import Foundation
import HTTPTypes
import Logging
import Hummingbird
import NIOCore
import ShelfApp
import ShelfConfig
import ShelfCore

/// `/api/v1`: the CLI's JSON documents for scripts, in the CLI's JSON style, and review decisions as POSTs that go
/// through the same `ReviewDesk.decide` as `shelfd review`. Errors are `{"error": {"code", "message"}}`.
enum API {
    static func register(on router: RouterGroup<WebContext>, site: WebSite) {
        let api = router.group("api/v1")

        // `shelfd status --json`.
        api.get("status") { _, _ -> Response in
            try json(site.status())
        }

        // The newest finished photos' result documents (results/…json), newest first; `?limit=` up to 200.
        api.get("results") { request, _ -> Response in
            let limit = min(200, max(1, request.uri.queryParameters.get("limit", as: Int.self) ?? 20))
            return try json(site.desks.results.recent(limit: limit).map(\.document))
        }

        // One photo's result document, as written to results/.
        api.get("results/{sha}") { _, context -> Response in
            let sha = try photoID(context)
            guard let data = try site.desks.results.latest(sha256: sha)?.document else {
                throw APIError(
                    .notFound, "not_found",
                    "No result for photo \(sha) (not catalogued yet, or failed: see /api/v1/status).")
            }
            return jsonResponse(Array(data))
        }

        // `shelfd review list --json`: the open items, oldest first.
        api.get("review") { _, _ -> Response in
            try json(site.desks.review.items().map(site.desks.review.document))
        }

        // `shelfd review show --json ID`.
        api.get("review/{id}") { _, context -> Response in
            let id = try context.parameters.require("id")
            return try json(site.desks.review.document(reviewed { try site.desks.review.item(id) }))
        }

        // A decision, as `shelfd review accept|edit|reject` takes it.
        api.post("review/{id}") { request, context -> Response in
            let id = try context.parameters.require("id")
            let decision = try await decoded(
                DecisionRequest.self, from: request, context: context, usage: DecisionRequest.usage)
            let verdict = try decision.verdict()
            let resolution = try reviewed { try site.desks.review.decide(id, verdict) }
            return try json(DecisionAnswer(resolution, undo: site.desks.review.keepForUndo([resolution])))
        }

        // A decision for many of one photo's items at once, as `shelfd review reject|accept --photo` takes it:
        // without "apply" only what it would decide; with it, exactly the items listed (those shown), undoable.
        api.post("photos/{sha}/review") { request, context -> Response in
            let sha = try photoID(context)
            let bulk = try await decoded(BulkRequest.self, from: request, context: context, usage: BulkRequest.usage)
            let plan = try reviewed {
                try site.desks.review.plan(try bulk.decision(), photo: sha, among: bulk.items.map(Set.init))
            }
            guard bulk.apply == true else { return try json(BulkAnswer(plan, applied: false, undo: nil)) }
            guard bulk.items != nil else {
                throw APIError(
                    .unprocessableContent, "items_needed", "List the \"items\" to decide: those the plan showed.")
            }
            let resolutions = try reviewed { try site.desks.review.apply(plan) }
            site.logger.info(
                "Review decisions for a photo from the web page",
                metadata: ["event": "review_decided", "photo": "\(sha)", "items": "\(resolutions.count)"])
            return try json(BulkAnswer(plan, applied: true, undo: site.desks.review.keepForUndo(resolutions)))
        }

        // Takes back the decisions of the last minute an answer above named by its "undo" token.
        api.post("review/undo") { request, context -> Response in
            let undo = try await decoded(UndoRequest.self, from: request, context: context, usage: UndoRequest.usage)
            do {
                return try json(UndoAnswer(reopened: try site.desks.review.undo(undo.undo)))
            } catch let error as ReviewError {
                throw APIError(.gone, "too_late", error.message)
            }
        }

        // library.json (`shelfd.library/2`).
        api.get("library") { _, _ -> Response in
            jsonResponse(try site.desks.library.document())
        }

        // One work's whole history (library.json keeps it bounded), as `shelfd library show --json` prints it; the
        // key percent-encoded into one path segment, as the library page's links are.
        api.get("library/{work}") { _, context -> Response in
            let key = try context.parameters.require("work").removingPercentEncoding ?? ""
            do { return try json(site.desks.library.work(key)) } catch let error as LibraryError
                where error.code == .notFound
            {
                throw APIError(.notFound, error.code.rawValue, error.message)
            }
        }

        registerShelves(on: api, site: site)
    }

    /// The shelves (`shelfd shelf list --json`) and one shelf (`shelfd shelf show --json`), its name percent-encoded into
    /// one path segment (`den%2Ftop`), as the shelf pages' links are.
    static func registerShelves(on api: RouterGroup<WebContext>, site: WebSite) {
        api.get("shelves") { _, _ -> Response in
            try json(site.desks.shelves.list())
        }
        api.get("shelves/{name}") { _, context -> Response in
            let name = try context.parameters.require("name").removingPercentEncoding ?? ""
            do { return try json(site.desks.shelves.show(name)) } catch let error as LibraryError
                where error.code == .notFound
            {
                throw APIError(.notFound, error.code.rawValue, error.message)
            }
        }
    }

    /// A photo's id: its 64-hex SHA-256, nothing else.
    static func photoID(_ context: WebContext) throws -> String {
        let sha = try context.parameters.require("sha").lowercased()
        guard sha.count == 64, sha.allSatisfy(\.isHexDigit) else {
            throw APIError(.notFound, "not_found", "A photo is named by its SHA-256 (64 hex digits).")
        }
        return sha
    }

    /// A JSON body, or 400 with how to write it.
    static func decoded<T: Decodable>(_ type: T.Type, from request: Request, context: WebContext, usage: String)
        async throws -> T
    {
        var request = request
        let body = try await request.collectBody(upTo: context.maxUploadSize)
        do { return try JSONDecoder().decode(T.self, from: Data(Array(buffer: body))) } catch {
            throw APIError(.badRequest, "bad_request", usage)
        }
    }

    /// Runs a review call, turning its errors into the API's.
    static func reviewed<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as ReviewError {
            switch error.code {
            case .notFound: throw APIError(.notFound, error.code.rawValue, error.message)
            case .ambiguous: throw APIError(.conflict, error.code.rawValue, error.message)
            case .noSuchCandidate: throw APIError(.unprocessableContent, error.code.rawValue, error.message)
            }
        }
    }

    /// The CLI's JSON style (`printJSON`): pretty, sorted keys, ISO 8601 dates, a final newline.
    static func json(_ value: some Encodable) throws -> Response {
        jsonResponse(Array(try JSONStyle.encoder().encode(value)) + Array("\n".utf8))
    }

    static func jsonResponse(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// The body of `POST /api/v1/review/{id}`.
struct DecisionRequest: Decodable {
    var decision: String
    var candidate: Int?
    var title: String?
    var author: String?
    var isbn: String?

    static let usage =
        #"Send JSON: {"decision": "accept"}, {"decision": "candidate", "candidate": N}, "#
        + #"{"decision": "edit", "title": …, "author": …, "isbn": …} or {"decision": "reject"}."#

    /// The same checks as `shelfd review accept|edit`, answered with 422 and what to fix.
    func verdict() throws -> ReviewVerdict {
        if [title, author, isbn].contains(where: { $0.map(NULCharacter.isIn) ?? false }) {
            throw APIError(.unprocessableContent, "nul_character", NULCharacter.message)
        }
        switch decision {
        case "accept": return .accept
        case "reject": return .reject
        case "candidate", "pick":
            guard let candidate, candidate >= 1 else {
                throw APIError(
                    .unprocessableContent, "bad_candidate",
                    "\"candidate\" counts from 1, as the review document lists them.")
            }
            return .pick(candidate)
        case "edit":
            let title = title?.trimmingCharacters(in: .whitespaces),
                author = author?.trimmingCharacters(in: .whitespaces)
            if title == nil && author == nil && isbn == nil {
                throw APIError(
                    .unprocessableContent, "nothing_to_change",
                    "Nothing to change: give \"title\", \"author\" or \"isbn\".")
            }
            if let title, title.isEmpty {
                throw APIError(.unprocessableContent, "empty_title", "The title cannot be empty.")
            }
            var checked: ISBN?
            if let isbn, !isbn.trimmingCharacters(in: .whitespaces).isEmpty {
                guard let valid = ISBN(isbn) else {
                    throw APIError(
                        .unprocessableContent, "invalid_isbn",
                        "'\(isbn)' is not a valid ISBN: its checksum fails. Check the digits on the book's back.")
                }
                checked = valid
            }
            return .edit(title: title, author: author, isbn: checked)
        default:
            throw APIError(.unprocessableContent, "bad_decision", Self.usage)
        }
    }
}

/// What a decision did: the book as it now is in the library (absent when rejected), and the token that takes it
/// back for a minute (`POST /api/v1/review/undo`).
struct DecisionAnswer: Encodable {
    var id: String
    var photoSHA256: String
    var detail: String
    var book: Book?
    var undo: String
    enum CodingKeys: String, CodingKey { case id, detail, book, undo, photoSHA256 = "photo_sha256" }
    init(_ resolution: ReviewResolution, undo: String) {
        id = resolution.id; photoSHA256 = resolution.photoSHA256; detail = resolution.detail; book = resolution.book
        self.undo = undo
    }
}

/// The body of `POST /api/v1/photos/{sha}/review`.
struct BulkRequest: Decodable {
    /// `not_books` or `first_candidates`.
    var bulk: String
    /// Only these items; absent: every open item of the photo the decision fits.
    var items: [String]?
    /// `not_books`: only items with no candidate and a confidence below this.
    var below: Double?
    var apply: Bool?

    static let usage =
        #"Send JSON: {"bulk": "not_books" | "first_candidates", "items": [ids], "below": 0.5, "apply": true}; "#
        + #"without "apply" the answer is what it would decide."#

    func decision() throws -> ReviewDesk.Bulk {
        switch bulk {
        case "not_books":
            if let below, !(0...1).contains(below) {
                throw APIError(.unprocessableContent, "bad_threshold", "\"below\" is a confidence from 0 to 1.")
            }
            return .notBooks(unmatchedBelow: below)
        case "first_candidates": return .firstCandidates
        default: throw APIError(.unprocessableContent, "bad_decision", Self.usage)
        }
    }
}

/// What a bulk decision decides (or decided), item by item in the order the spines stand.
struct BulkAnswer: Encodable {
    struct Item: Encodable { var id: String; var title: String; var decision: String }
    var applied: Bool
    var items: [Item]
    var undo: String?
    init(_ plan: [ReviewDesk.Planned], applied: Bool, undo: String?) {
        self.applied = applied; self.undo = undo
        items = plan.map { planned in
            let decision =
                switch planned.verdict {
                case .reject: "not a book"
                case .pick(let n): "candidate \(n): \(planned.item.candidates[n - 1].record.title)"
                case .accept, .edit: "accepted"
                }
            return Item(id: planned.item.id, title: planned.item.book.title, decision: decision)
        }
    }
}

/// The body of `POST /api/v1/review/undo`.
struct UndoRequest: Decodable {
    var undo: String
    static let usage = #"Send JSON: {"undo": token}, the token a decision's answer gave."#
}

/// The items open again.
struct UndoAnswer: Encodable { var reopened: [String] }

/// An API error: `{"error": {"code": …, "message": …}}` with its status.
struct APIError: HTTPResponseError {
    let status: HTTPResponse.Status
    let code: String
    let message: String

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status; self.code = code; self.message = message
    }

    func response(from request: Request, context: some RequestContext) throws -> Response { response() }

    func response() -> Response {
        struct Envelope: Encodable { struct Body: Encodable { let code: String, message: String }; let error: Body }
        let bytes =
            (try? JSONStyle.encoder().encode(Envelope(error: .init(code: code, message: message)))).map { Array($0) }
            ?? []
        return API.jsonResponse(bytes + Array("\n".utf8), status: status)
    }
}
