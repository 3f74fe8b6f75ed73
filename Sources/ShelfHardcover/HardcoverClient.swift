import Foundation
import Logging
import ShelfCore
import ShelfHTTP

/// Hardcover's GraphQL API (hardcover.app; docs.hardcover.app, "Getting Started" and the schema pages): every request
/// is a POST of `{"query", "variables"}` with `authorization: Bearer <token>`. Only what a push needs: who the token
/// belongs to, editions by ISBN-13, the person's books and lists, and the four writes that add to them. Nothing here
/// deletes; `edition_owned` is a toggle on Hardcover, so it is only sent for a book the Owned list lacks.
package struct HardcoverClient: Sendable {
    package let url: String
    private let token: Secret
    /// The client, the log and the time a 429 is waited out on.
    private let link: HTTPLink
    /// Waits for the request's turn in the budget every shelfd process shares (60 a minute, the site's limit).
    private let turn: @Sendable () async throws(HardcoverError) -> Void

    /// A 429 is waited out (its Retry-After, else a minute) and the request sent again, this many times.
    static let throttleRetries = 2

    package init(
        url: String, token: Secret, http: HTTPClient, time: TimeSource, logger: Logger,
        turn: @escaping @Sendable () async throws(HardcoverError) -> Void
    ) {
        self.url = url; self.turn = turn
        link = HTTPLink(http: http, logger: logger, time: time, service: "Hardcover", about: [:])
        // Hardcover's settings page shows the token with its "Bearer " in front; people paste either.
        let value = token.value.trimmingCharacters(in: .whitespacesAndNewlines)
        self.token = Secret(
            value.lowercased().hasPrefix("bearer ")
                ? String(value.dropFirst(7)).trimmingCharacters(in: .whitespaces) : value)
    }

    // MARK: - Reading

    package struct User: Sendable, Equatable, Decodable {
        package var id: Int
        package var username: String
    }

    /// The person the token belongs to (`me` is a list of one).
    package func me() async throws(HardcoverError) -> User {
        struct Answer: Decodable { var me: [User] }
        let answer: Answer = try await send("query Me { me { id username } }", [:])
        guard let user = answer.me.first else {
            throw .tokenRefused("Hardcover knows no user for this token")
        }
        return user
    }

    package struct Edition: Sendable, Equatable, Decodable {
        package var id: Int
        package var isbn13: String?
        package var bookID: Int
        enum CodingKeys: String, CodingKey { case id, isbn13 = "isbn_13", bookID = "book_id" }
    }

    /// The editions with these ISBN-13s (one request for up to `pageSize`).
    package func editions(isbn13 isbns: [String]) async throws(HardcoverError) -> [Edition] {
        struct Answer: Decodable { var editions: [Edition] }
        let answer: Answer = try await send(
            """
            query Editions($isbns: [String!]!) { editions(where: {isbn_13: {_in: $isbns}}) { id isbn_13 book_id } }
            """, ["isbns": isbns])
        return answer.editions
    }

    package struct UserBook: Sendable, Equatable, Decodable {
        package var id: Int
        package var bookID: Int
        package var editionID: Int?
        enum CodingKeys: String, CodingKey { case id, bookID = "book_id", editionID = "edition_id" }
    }

    /// Which of these books the person already has in their Hardcover library, whatever their status.
    package func userBooks(user: Int, books: [Int]) async throws(HardcoverError) -> [UserBook] {
        struct Answer: Decodable { var user_books: [UserBook] }
        let answer: Answer = try await send(
            """
            query UserBooks($user: Int!, $books: [Int!]!) { user_books(where: {user_id: {_eq: $user}, book_id: {_in: $books}}) { id book_id edition_id } }
            """, ["user": user, "books": books])
        return answer.user_books
    }

    /// One of the person's lists and which of these books are on it.
    package struct List: Sendable, Equatable, Decodable {
        package struct Entry: Sendable, Equatable, Decodable {
            package var bookID: Int
            package var editionID: Int?
            enum CodingKeys: String, CodingKey { case bookID = "book_id", editionID = "edition_id" }
        }
        package var id: Int
        package var entries: [Entry]
        enum CodingKeys: String, CodingKey { case id, entries = "list_books" }
    }

    /// The person's list of that name (the Owned list is "Owned"), with those of `books` on it; nil when there is none.
    package func list(named name: String, user: Int, books: [Int]) async throws(HardcoverError) -> List? {
        struct Answer: Decodable { var lists: [List] }
        let answer: Answer = try await send(
            """
            query Lists($user: Int!, $name: String!, $books: [Int!]!) { lists(where: {user_id: {_eq: $user}, name: {_eq: $name}}) { id list_books(where: {book_id: {_in: $books}}) { book_id edition_id } } }
            """, ["user": user, "name": name, "books": books])
        return answer.lists.first
    }

    // MARK: - Writing

    /// Adds the book to the person's library with that edition and reading status (1 want to read, 2 reading,
    /// 3 read). Returns the new user book's id; Hardcover's own refusal (`error`) is thrown as `refused`.
    package func insertUserBook(book: Int, edition: Int, status: Int) async throws(HardcoverError) -> Int {
        struct Result: Decodable { var id: Int?; var error: String? }
        struct Answer: Decodable { var insert_user_book: Result }
        let answer: Answer = try await send(
            """
            mutation InsertUserBook($object: UserBookCreateInput!) { insert_user_book(object: $object) { id error } }
            """, ["object": ["book_id": book, "edition_id": edition, "status_id": status]])
        guard let id = answer.insert_user_book.id else {
            throw .refused("Hardcover did not add book \(book): \(answer.insert_user_book.error ?? "no reason given")")
        }
        return id
    }

    /// Marks the edition owned: Hardcover puts it on the person's Owned list. A toggle: sent only when it is not
    /// there. Returns whether the edition is owned after it.
    package func markOwned(edition: Int) async throws(HardcoverError) -> Bool {
        struct ListBook: Decodable { var id: Int }
        struct Result: Decodable { var id: Int?; var list_book: ListBook? }
        struct Answer: Decodable { var ownership: Result }
        let answer: Answer = try await send(
            """
            mutation EditionOwned($id: Int!) { ownership: edition_owned(id: $id) { id list_book { id book_id edition_id } } }
            """, ["id": edition])
        return answer.ownership.list_book != nil
    }

    /// Makes a list of that name; returns its id.
    package func insertList(named name: String) async throws(HardcoverError) -> Int {
        struct Result: Decodable { var id: Int? }
        struct Answer: Decodable { var insert_list: Result }
        let answer: Answer = try await send(
            """
            mutation InsertList($object: ListInput!) { insert_list(object: $object) { id errors } }
            """, ["object": ["name": name, "privacy_setting_id": 1] as [String: any Sendable]])
        guard let id = answer.insert_list.id else { throw .refused("Hardcover did not make the list «\(name)»") }
        return id
    }

    /// Puts the book, as that edition, on the list.
    package func insertListBook(list: Int, book: Int, edition: Int) async throws(HardcoverError) {
        struct Result: Decodable { var id: Int? }
        struct Answer: Decodable { var insert_list_book: Result }
        let _: Answer = try await send(
            """
            mutation InsertListBook($object: ListBookInput!) { insert_list_book(object: $object) { id } }
            """, ["object": ["list_id": list, "book_id": book, "edition_id": edition]])
    }

    // MARK: - The wire

    private struct Envelope<T: Decodable>: Decodable {
        struct Problem: Decodable {
            struct Extensions: Decodable { var code: String? }
            var message: String?
            var extensions: Extensions?
        }
        var data: T?
        var errors: [Problem]?
    }

    /// Sends one document when its turn comes; a 429 is waited out and sent again (`throttleRetries`).
    private func send<T: Decodable>(_ document: String, _ variables: [String: any Sendable])
        async throws(HardcoverError) -> T
    {
        let body: [UInt8]
        do {
            body = Array(
                try JSONSerialization.data(
                    withJSONObject: ["query": document, "variables": variables] as [String: Any]))
        } catch {
            throw .refused("could not encode a request: \(error)")
        }
        let request = HTTPRequest(
            method: "POST", url: url,
            headers: [
                ("authorization", "Bearer \(token.value)"), ("content-type", "application/json"),
                ("accept", "application/json"),
                ("user-agent", "shelfd/\(ShelfdVersion.current)"),
            ], body: body, timeout: .seconds(35), connectTimeout: .seconds(10))
        let operation =
            document.split(separator: "(").first.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
            ?? ""
        var throttled = 0
        while true {
            try await turn()
            let response: HTTPResponse
            do {
                response = try await link.exchange(request, detail: ["operation": "\(operation)"]).0
            } catch {
                if error.kind == .cancelled { throw .cancelled }
                throw .unavailable("Hardcover could not be reached (\(error.kind.rawValue): \(error.message))")
            }
            switch response.status {
            case 200..<300:
                break
            case 401, 403:
                throw .tokenRefused("Hardcover refused the token (HTTP \(response.status)\(Self.said(response)))")
            case 429:
                let wait =
                    response.header("retry-after").flatMap { QuotaTimes.retryAfter($0, now: link.time.now) } ?? 60
                guard throttled < Self.throttleRetries else {
                    throw .throttled(until: link.time.now.addingTimeInterval(wait))
                }
                throttled += 1
                link.logger.notice(
                    "Hardcover asked shelfd to slow down", metadata: ["wait_s": "\(Int(wait.rounded(.up)))"])
                do { try await link.time.sleep(for: .seconds(wait)) } catch { throw .cancelled }
                continue
            case 500...599, 408:
                throw .unavailable("Hardcover is unavailable (HTTP \(response.status))")
            default:
                throw .refused("Hardcover rejected a request (HTTP \(response.status)\(Self.said(response)))")
            }
            let envelope: Envelope<T>
            do {
                envelope = try JSONDecoder().decode(Envelope<T>.self, from: Data(response.body))
            } catch {
                throw .refused(
                    "Hardcover answered \(operation) with something that is not the answer its schema describes")
            }
            if let problems = envelope.errors, !problems.isEmpty {
                let messages = problems.compactMap(\.message).joined(separator: "; ")
                // Hasura's own codes for a token it cannot verify (expired, revoked).
                if problems.contains(where: {
                    ["invalid-jwt", "invalid-headers", "access-denied"].contains($0.extensions?.code ?? "")
                }) {
                    throw .tokenRefused("Hardcover refused the token (\(messages))")
                }
                throw .refused("Hardcover refused \(operation): \(messages)")
            }
            guard let data = envelope.data else { throw .refused("Hardcover answered \(operation) without data") }
            return data
        }
    }

    /// `: <the error Hardcover gave>` from a JSON body `{"error": "…"}`, short; nothing otherwise.
    private static func said(_ response: HTTPResponse) -> String {
        struct Body: Decodable { var error: String }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(response.body)) else { return "" }
        return ": \(body.error.prefix(200))"
    }
}

/// Why a push stopped. Each says what to do; `code` is `status`'s problem code.
package enum HardcoverError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The token is wrong, expired or revoked: pushing waits for a new one.
    case tokenRefused(String)
    /// Still rate-limited after waiting: asked again from then on.
    case throttled(until: Date)
    /// No connection, a timeout or a server error.
    case unavailable(String)
    /// An answer that refused the request or made no sense.
    case refused(String)
    case cancelled

    package var code: String {
        switch self {
        case .tokenRefused: "hardcover_token"
        case .throttled: "hardcover_throttled"
        case .unavailable: "hardcover_unavailable"
        case .refused: "hardcover_refused"
        case .cancelled: "cancelled"
        }
    }

    package var description: String {
        switch self {
        case .tokenRefused(let why):
            "\(why): make a new token at hardcover.app (Settings → API) and set it as HARDCOVER_TOKEN or the credential hardcover_token"
        case .throttled(let until):
            "Hardcover is rate-limiting shelfd; pushing goes on after \(ISO8601DateFormatter().string(from: until))"
        case .unavailable(let why): "\(why); pushing goes on when it answers"
        case .refused(let why): why
        case .cancelled: "cancelled"
        }
    }
}
