import Foundation
import Synchronization

/// A loopback stand-in for Hardcover's GraphQL API (`POST https://api.hardcover.app/v1/graphql`, a Hasura server):
/// a Bearer token, `{"query", "variables"}` in, `{"data": …}` or `{"errors": [{message, extensions: {code}}]}` out,
/// and the HTTP answers its gateway gives (401 for a token it cannot verify, 429 past 60 requests a minute).
/// It answers the documents shelfd's `HardcoverClient` sends, telling them apart by their top-level field and reading
/// arguments from `variables` only. Ids are integers as on Hardcover, and its semantics follow Hardcover's documented
/// API where a careless client would go wrong: `edition_owned` is a toggle (a second call takes the book off the
/// Owned list again), and `insert_user_book` for a book already in the library answers an `error` instead of a new
/// id. Those mistakes are counted (`ownershipRemovals`, `duplicateInserts`, `duplicateListBooks`), so a test can
/// assert the client never made them; so are the requests refused for the rate (`throttled`).
package final class HardcoverEmulator: Sendable {
    /// An edition Hardcover knows: what `editions(where: {isbn_13: …})` finds, and what `edition_owned(id:)` takes.
    package struct Edition: Sendable, Equatable {
        package var id: Int
        /// The book (work) the edition belongs to.
        package var bookID: Int
        package var isbn13: String
        package init(id: Int, bookID: Int, isbn13: String) { self.id = id; self.bookID = bookID; self.isbn13 = isbn13 }
    }

    /// How one request is answered, whatever it asks.
    package enum Reply: Sendable {
        /// As Hardcover would.
        case normal
        /// 429 `{"error":"Throttled"}`, with `Retry-After` when given.
        case throttled(retryAfter: Int?)
        /// That status with an HTML page, as the gateway in front of Hasura answers when it is down.
        case serverError(Int)
        /// 401 `{"error":"Unable to verify token"}`, whatever the token.
        case unauthorized
    }

    package struct Script: Sendable {
        /// The token the `authorization: Bearer …` header must carry.
        package var token: String = "hc-token"
        /// Who the token belongs to (`me`).
        package var userID: Int = 7
        package var username: String = "reader"
        package var editions: [Edition] = []
        /// Requests accepted in any 60 s; Hardcover's limit is 60.
        package var perMinute: Int = 60
        /// Answers to the first requests, in order, before any other handling; then `.normal`.
        package var replies: [Reply] = []

        package init(
            token: String = "hc-token", userID: Int = 7, username: String = "reader", editions: [Edition] = [],
            perMinute: Int = 60, replies: [Reply] = []
        ) {
            self.token = token; self.userID = userID; self.username = username; self.editions = editions
            self.perMinute = perMinute; self.replies = replies
        }
    }

    /// One request as answered.
    package struct LoggedRequest: Sendable, Equatable {
        /// The document's top-level field (`me`, `editions`, `insert_user_book`, …); "" when it has none known.
        package var field: String
        /// The request's `variables`; `.null` when it had none (or was not JSON).
        package var variables: JSONValue
        /// The HTTP status answered.
        package var status: Int
        package init(field: String, variables: JSONValue, status: Int) {
            self.field = field; self.variables = variables; self.status = status
        }
    }

    /// A book in the person's library (`user_books`).
    package struct UserBook: Sendable, Equatable {
        package var id: Int
        package var bookID: Int
        package var editionID: Int?
        /// 1 want to read, 2 reading, 3 read.
        package var statusID: Int
        package init(id: Int, bookID: Int, editionID: Int?, statusID: Int) {
            self.id = id; self.bookID = bookID; self.editionID = editionID; self.statusID = statusID
        }
    }

    /// A book on one of the person's lists (`list_books`).
    package struct ListBook: Sendable, Equatable {
        package var id: Int
        package var bookID: Int
        package var editionID: Int?
        package init(id: Int, bookID: Int, editionID: Int?) {
            self.id = id; self.bookID = bookID; self.editionID = editionID
        }
    }

    private let shared: Shared
    private let server: HTTPServer

    private init(script: Script, now: @escaping @Sendable () -> Date) {
        let shared = Shared(script: script, now: now)
        self.shared = shared
        server = HTTPServer { request in shared.handle(request) }
    }

    /// Starts on 127.0.0.1 with a free port. `now` dates the requests for the rate limit: a test on a manual clock
    /// passes its clock's wall date, so a minute's window passes when the clock is moved.
    package static func start(
        script: Script = .init(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> HardcoverEmulator {
        let emulator = HardcoverEmulator(script: script, now: now)
        try emulator.server.start()
        return emulator
    }

    /// What the client is pointed at: `http://127.0.0.1:PORT/v1/graphql`.
    package var url: String { "\(server.baseURL)/v1/graphql" }
    /// `http://127.0.0.1:PORT`, without the path.
    package var baseURL: String { server.baseURL }

    package func stop() { server.stop() }

    // MARK: - State

    /// Every request so far, in arrival order.
    package var requests: [LoggedRequest] { read { $0.log } }
    /// The person's library, in the order the books were added.
    package var userBooks: [UserBook] { read { $0.userBooks } }
    /// The books on the person's lists of that name, in the order they were added ("Owned" for owned editions).
    package func listBooks(named name: String) -> [ListBook] {
        read { $0.lists.filter { $0.name == name }.flatMap(\.books) }
    }
    /// The person's lists in the order they were made; "Owned" first.
    package var listNames: [String] { read { $0.lists.map(\.name) } }
    /// `insert_user_book` calls for a book already in the library (Hardcover refuses them with an `error`).
    package var duplicateInserts: Int { read { $0.duplicateInserts } }
    /// `edition_owned` calls that took a book off the Owned list (the toggle's second half).
    package var ownershipRemovals: Int { read { $0.ownershipRemovals } }
    /// `insert_list_book` calls for a book already on that list.
    package var duplicateListBooks: Int { read { $0.duplicateListBooks } }
    /// Requests refused with 429 for going past `perMinute` (not the scripted `.throttled` replies).
    package var throttled: Int { read { $0.throttled } }

    /// While true, the right token gets Hasura's `invalid-jwt` error (`JWTExpired`).
    package func set(expired: Bool) { update { $0.expired = expired } }
    /// Replaces the replies still to come.
    package func set(replies: [Reply]) { update { $0.replies = replies } }
    /// The token from now on (a new one made on Hardcover's settings page).
    package func set(token: String) { update { $0.script.token = token } }

    /// A book the person already had on Hardcover before the test.
    package func add(userBook bookID: Int, editionID: Int?, statusID: Int) {
        update { s in
            s.userBooks.append(UserBook(id: s.nextUserBook, bookID: bookID, editionID: editionID, statusID: statusID))
            s.nextUserBook += 1
        }
    }

    /// A book already on the person's Owned list before the test.
    package func markOwned(bookID: Int, editionID: Int?) {
        update { s in
            guard !s.lists[0].books.contains(where: { $0.bookID == bookID }) else { return }
            s.lists[0].books.append(ListBook(id: s.nextListBook, bookID: bookID, editionID: editionID))
            s.nextListBook += 1
        }
    }

    private func read<Value: Sendable>(_ body: (State) -> Value) -> Value { shared.state.withLock { body($0) } }
    private func update(_ body: (inout State) -> Void) { shared.state.withLock { body(&$0) } }

    // MARK: - Handling

    /// The state and the clock, shared with the server's connection threads.
    fileprivate final class Shared: Sendable {
        let state: Mutex<State>
        let now: @Sendable () -> Date
        init(script: Script, now: @escaping @Sendable () -> Date) {
            state = Mutex(State(script: script)); self.now = now
        }

        func handle(_ request: RecordedRequest) -> HTTPServer.Response {
            let call = Call(request), date = now()
            return state.withLock { $0.answer(call, at: date) }
        }
    }

    /// What a request asks, read before taking the lock.
    fileprivate struct Call: Sendable {
        /// Looked for as whole words (`me` is not found in `username`), writes before reads.
        static let fields = [
            "insert_user_book", "edition_owned", "insert_list_book", "insert_list", "user_books",
            "editions", "lists", "me",
        ]
        var method: String
        var path: String
        var authorization: String?
        /// The GraphQL document; nil when the body is not `{"query": "…"}`.
        var document: String?
        var field: String?
        var variables: JSONValue

        init(_ request: RecordedRequest) {
            method = request.method; path = request.path; authorization = request.header("authorization")
            let body = JSONValue.parse(request.body)
            document = body?["query"]?.string
            field = document.flatMap(Self.field(of:))
            variables = body?["variables"] ?? .null
        }

        /// The first of `fields` that is a whole word of the document (so `me` is not found in `username`).
        static func field(of document: String) -> String? {
            let words = Set(document.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
            return fields.first { words.contains($0) }
        }
    }

    fileprivate struct BookList {
        var id: Int
        var name: String
        var books: [ListBook]
    }

    fileprivate struct State {
        var script: Script
        var expired = false
        var replies: [Reply]
        /// When the requests counted against the rate limit were accepted.
        var accepted: [Date] = []
        var log: [LoggedRequest] = []
        var userBooks: [UserBook] = []
        /// The person's lists; the first is "Owned", which every Hardcover account has.
        var lists: [BookList]
        var nextUserBook = 1000, nextList = 51, nextListBook = 5000
        var duplicateInserts = 0, ownershipRemovals = 0, duplicateListBooks = 0, throttled = 0

        init(script: Script) {
            self.script = script
            replies = script.replies
            lists = [BookList(id: 50, name: "Owned", books: [])]
        }

        mutating func answer(_ call: Call, at date: Date) -> HTTPServer.Response {
            let response = respond(call, at: date)
            log.append(LoggedRequest(field: call.field ?? "", variables: call.variables, status: response.status))
            return response
        }

        /// Scripted reply, token, expiry, rate limit, then the document.
        private mutating func respond(_ call: Call, at date: Date) -> HTTPServer.Response {
            if !replies.isEmpty {
                switch replies.removeFirst() {
                case .normal: break
                case .throttled(let retryAfter): return Self.throttledResponse(retryAfter)
                case .serverError(let status):
                    return HTTPServer.Response(
                        status: status, headers: [("Content-Type", "text/html; charset=utf-8")],
                        text: "<html><body><h1>\(status)</h1>Hardcover is having trouble.</body></html>")
                case .unauthorized: return Self.unauthorized
                }
            }
            guard call.authorization == "Bearer \(script.token)" else { return Self.unauthorized }
            if expired { return Self.graphQLError("Could not verify JWT: JWTExpired", code: "invalid-jwt") }
            accepted.removeAll { date.timeIntervalSince($0) >= 60 }
            if accepted.count >= script.perMinute {
                throttled += 1
                let oldest = accepted.min() ?? date
                let wait = oldest.addingTimeInterval(60).timeIntervalSince(date)
                return Self.throttledResponse(max(1, Int(wait.rounded(.up))))
            }
            accepted.append(date)
            guard call.method == "POST" else { return Self.badRequest("method \(call.method) not allowed") }
            guard call.path == "/v1/graphql" else { return Self.badRequest("no such path: \(call.path)") }
            guard call.document != nil else { return Self.badRequest("the body is not a GraphQL request") }
            let v = call.variables
            switch call.field ?? "" {
            case "me":
                return Self.data(["me": [["id": script.userID, "username": script.username] as [String: Any]]])
            case "editions":
                guard let isbns = v["isbns"]?.array?.compactMap(\.string) else { return Self.missing("isbns") }
                let found = script.editions.filter { isbns.contains($0.isbn13) }
                return Self.data([
                    "editions": found.map { e -> [String: Any] in
                        ["id": e.id, "isbn_13": e.isbn13, "book_id": e.bookID]
                    }
                ])
            case "user_books":
                guard let user = v["user"]?.int else { return Self.missing("user") }
                guard let books = v["books"]?.array?.compactMap(\.int) else { return Self.missing("books") }
                let mine = user == script.userID ? userBooks.filter { books.contains($0.bookID) } : []
                return Self.data([
                    "user_books": mine.map { b -> [String: Any] in
                        ["id": b.id, "book_id": b.bookID, "edition_id": Self.orNull(b.editionID)]
                    }
                ])
            case "lists":
                guard let user = v["user"]?.int else { return Self.missing("user") }
                guard let name = v["name"]?.string else { return Self.missing("name") }
                guard let books = v["books"]?.array?.compactMap(\.int) else { return Self.missing("books") }
                let named = user == script.userID ? lists.filter { $0.name == name } : []
                return Self.data([
                    "lists": named.map { list -> [String: Any] in
                        [
                            "id": list.id,
                            "list_books": list.books.filter { books.contains($0.bookID) }.map { b -> [String: Any] in
                                ["book_id": b.bookID, "edition_id": Self.orNull(b.editionID)]
                            },
                        ]
                    }
                ])
            case "insert_user_book": return insertUserBook(v["object"]?.object)
            case "edition_owned": return toggleOwned(v["id"]?.int)
            case "insert_list": return insertList(v["object"]?.object)
            case "insert_list_book": return insertListBook(v["object"]?.object)
            default: return Self.badRequest("no field this emulator knows in the query")
            }
        }

        /// Hardcover refuses a second user book for the same book with an `error`, and adds nothing.
        private mutating func insertUserBook(_ object: [String: JSONValue]?) -> HTTPServer.Response {
            guard let object, let bookID = object["book_id"]?.int else { return Self.missing("object.book_id") }
            func result(_ id: Int?, _ error: String?) -> HTTPServer.Response {
                Self.data(["insert_user_book": ["id": Self.orNull(id), "error": Self.orNull(error)] as [String: Any]])
            }
            if userBooks.contains(where: { $0.bookID == bookID }) {
                duplicateInserts += 1
                return result(nil, "Book already in library")
            }
            guard script.editions.contains(where: { $0.bookID == bookID }) else { return result(nil, "Book not found") }
            let book = UserBook(
                id: nextUserBook, bookID: bookID, editionID: object["edition_id"]?.int,
                statusID: object["status_id"]?.int ?? 1)
            nextUserBook += 1
            userBooks.append(book)
            return result(book.id, nil)
        }

        /// A toggle: puts the edition's book on the Owned list, or takes it off when it is there already.
        private mutating func toggleOwned(_ editionID: Int?) -> HTTPServer.Response {
            guard let editionID else { return Self.missing("id") }
            guard let edition = script.editions.first(where: { $0.id == editionID }) else {
                return Self.graphQLError("edition \(editionID) not found", code: "not-found")
            }
            if lists[0].books.contains(where: { $0.bookID == edition.bookID }) {
                lists[0].books.removeAll { $0.bookID == edition.bookID }
                ownershipRemovals += 1
                return Self.data(["ownership": ["id": NSNull(), "list_book": NSNull()]])
            }
            let book = ListBook(id: nextListBook, bookID: edition.bookID, editionID: edition.id)
            nextListBook += 1
            lists[0].books.append(book)
            let row: [String: Any] = ["id": book.id, "book_id": book.bookID, "edition_id": edition.id]
            return Self.data(["ownership": ["id": book.id, "list_book": row] as [String: Any]])
        }

        private mutating func insertList(_ object: [String: JSONValue]?) -> HTTPServer.Response {
            guard let object, let name = object["name"]?.string else { return Self.missing("object.name") }
            let list = BookList(id: nextList, name: name, books: [])
            nextList += 1
            lists.append(list)
            return Self.data(["insert_list": ["id": list.id, "errors": NSNull()] as [String: Any]])
        }

        /// Only onto the person's own lists (Hasura's permission check); a book already there keeps its one entry.
        private mutating func insertListBook(_ object: [String: JSONValue]?) -> HTTPServer.Response {
            guard let object, let listID = object["list_id"]?.int else { return Self.missing("object.list_id") }
            guard let bookID = object["book_id"]?.int else { return Self.missing("object.book_id") }
            guard let index = lists.firstIndex(where: { $0.id == listID }) else {
                return Self.graphQLError(
                    "Check constraint violation. insert check constraint failed", code: "permission-error")
            }
            if let existing = lists[index].books.first(where: { $0.bookID == bookID }) {
                duplicateListBooks += 1
                return Self.data(["insert_list_book": ["id": existing.id]])
            }
            let book = ListBook(id: nextListBook, bookID: bookID, editionID: object["edition_id"]?.int)
            nextListBook += 1
            lists[index].books.append(book)
            return Self.data(["insert_list_book": ["id": book.id]])
        }

        // MARK: Answers

        static func data(_ fields: [String: Any]) -> HTTPServer.Response { .json(object: ["data": fields]) }

        /// A GraphQL error as Hasura words it: HTTP 200, `errors` and no `data`.
        static func graphQLError(_ message: String, code: String) -> HTTPServer.Response {
            .json(object: [
                "errors": [["message": message, "extensions": ["path": "$", "code": code]] as [String: Any]]
            ])
        }

        static func missing(_ variable: String) -> HTTPServer.Response {
            graphQLError("expecting a value for non-nullable variable: \"\(variable)\"", code: "validation-failed")
        }

        static let unauthorized = HTTPServer.Response.json(object: ["error": "Unable to verify token"], status: 401)

        static func throttledResponse(_ retryAfter: Int?) -> HTTPServer.Response {
            .json(
                object: ["error": "Throttled"], status: 429,
                headers: retryAfter.map { [("Retry-After", String($0))] } ?? [])
        }

        static func badRequest(_ message: String) -> HTTPServer.Response {
            .json(object: ["error": message], status: 400)
        }

        /// The value, or JSON `null`.
        static func orNull<T>(_ value: T?) -> Any {
            if let value { return value }
            return NSNull()
        }
    }
}

/// Starts an emulator on 127.0.0.1, runs `body` with it, and always stops it.
package func withHardcoverEmulator<T>(
    _ script: HardcoverEmulator.Script = .init(),
    now: @escaping @Sendable () -> Date = { Date() },
    _ body: (HardcoverEmulator) async throws -> T
) async throws -> T {
    let emulator = try HardcoverEmulator.start(script: script, now: now)
    defer { emulator.stop() }
    return try await body(emulator)
}
