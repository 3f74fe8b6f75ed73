import Foundation
import Hummingbird
import ShelfApp
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing
@testable import ShelfWeb

/// No request can take the daemon down (issue 18): every route of the web page, sent hostile values in every
/// field it reads, answers without a 5xx, and the runtime goes on reading photos. The routes are listed once, here,
/// and a test holds the list to the router's own, so a new route cannot be added without being sent them. The
/// router answers in this process, so a request that traps stops the tests. (Bytes no client library sends, a
/// malformed request or a `Host` of another server, go to the binary's socket in ShelfdTests.)
@Suite("Hostile requests")
struct HostileRequestTests {
    /// Where a route reads a value; `with` are fields sent beside it so that the route reaches its parsing.
    struct Input: CustomStringConvertible {
        enum Place: String { case path, query, form, json, header, multipart }
        let place: Place
        let name: String
        var with: [String: String] = [:]
        var prefix = ""

        static func path(_ name: String) -> Input { Input(place: .path, name: name) }
        static func query(_ name: String, with: [String: String] = [:]) -> Input {
            Input(place: .query, name: name, with: with)
        }
        static func form(_ name: String, with: [String: String] = [:]) -> Input {
            Input(place: .form, name: name, with: with)
        }
        static func json(_ name: String, with: [String: String] = [:]) -> Input {
            Input(place: .json, name: name, with: with)
        }
        static func header(_ name: String, prefix: String = "") -> Input {
            Input(place: .header, name: name, prefix: prefix)
        }
        /// A field of a multipart form beside one photo; `filename` is the photo part's file name.
        static func multipart(_ name: String) -> Input { Input(place: .multipart, name: name) }

        var description: String { "\(place.rawValue) \(name)" }
    }

    struct Route: CustomStringConvertible {
        let method: String
        /// As the router writes it: `{name}` for a path parameter.
        let path: String
        let inputs: [Input]
        /// Query fields every request of the route carries (`/events?once`: the stream would not end).
        var always: [String: String] = [:]
        var contentType: String?

        init(
            _ method: String, _ path: String, _ inputs: [Input] = [], always: [String: String] = [:],
            contentType: String? = nil
        ) {
            self.method = method; self.path = path; self.inputs = inputs; self.always = always;
            self.contentType = contentType
        }

        var description: String { "\(method) \(path)" }
    }

    /// What the door reads of every request, sent to one page and one form.
    static let door: [Input] = [
        .header("Cookie", prefix: "shelfd_session="), .header("Authorization", prefix: "Bearer "),
        .header("X-CSRF-Token"), .header("Origin"), .header("Sec-Fetch-Site"), .header("Content-Type"),
    ]

    /// Every route of the web page and the API, with every value each reads from a request.
    static let routes: [Route] = [
        Route("GET", "/", [.query("requeued"), .query("refused"), .query("refused", with: ["requeued": "1"])] + door),
        Route("POST", "/retry", [.form("job")] + door, contentType: "application/x-www-form-urlencoded"),
        Route("GET", "/events", [.query("once")], always: ["once": "1"]),
        Route("GET", "/healthz"),
        Route("GET", "/metrics"),
        Route("GET", "/static/shelfd.css"),
        Route("GET", "/static/shelfd.js"),
        Route("GET", "/login"),
        Route("POST", "/login", [.form("token")], contentType: "application/x-www-form-urlencoded"),
        Route("GET", "/login/{code}", [.path("code")]),
        Route("POST", "/logout", [.header("Cookie", prefix: "shelfd_session=")]),
        Route("GET", "/api/v1/status"),
        Route("GET", "/api/v1/results", [.query("limit")]),
        Route("GET", "/api/v1/results/{sha}", [.path("sha")]),
        Route("GET", "/api/v1/review"),
        Route("GET", "/api/v1/review/{id}", [.path("id")]),
        Route(
            "POST", "/api/v1/review/{id}",
            [
                .path("id"), .json("decision"), .json("candidate", with: ["decision": "\"candidate\""]),
                .json("title", with: ["decision": "\"edit\""]), .json("author", with: ["decision": "\"edit\""]),
                .json("isbn", with: ["decision": "\"edit\""]),
            ], contentType: "application/json"),
        Route(
            "POST", "/api/v1/photos/{sha}/review",
            [
                .path("sha"), .json("bulk"), .json("items", with: ["bulk": "\"not_books\""]),
                .json("below", with: ["bulk": "\"not_books\""]),
                .json("apply", with: ["bulk": "\"first_candidates\""]),
            ], contentType: "application/json"),
        Route("POST", "/api/v1/review/undo", [.json("undo")], contentType: "application/json"),
        Route("GET", "/api/v1/library"),
        Route("GET", "/api/v1/library/{work}", [.path("work")]),
        Route("GET", "/review"),
        Route("GET", "/review/photo"),
        Route("GET", "/review/{id}", [.path("id")]),
        Route("GET", "/review/{id}/crop", [.path("id")]),
        Route(
            "POST", "/review/{id}",
            [
                .path("id"), .form("action"), .form("number", with: ["action": "candidate"]),
                .form("title", with: ["action": "edit"]), .form("author", with: ["action": "edit"]),
                .form("isbn", with: ["action": "edit"]), .form("back", with: ["action": "reject"]),
            ],
            contentType: "application/x-www-form-urlencoded"),
        Route("GET", "/photos", [.query("page")]),
        Route("GET", "/photos/{sha}", [.path("sha"), .query("rescan")]),
        Route("GET", "/photos/{sha}/review", [.path("sha"), .query("of")]),
        Route("GET", "/photos/{sha}/image", [.path("sha"), .header("If-None-Match")]),
        Route("GET", "/photos/{sha}/thumb", [.path("sha"), .header("If-None-Match")]),
        Route(
            "POST", "/photos/{sha}/rescan", [.path("sha"), .form("provider")],
            contentType: "application/x-www-form-urlencoded"),
        Route(
            "GET", "/library",
            [
                .query("page"), .query("sort"), .query("q"), .query("done"),
                .query("page", with: ["sort": "title", "q": "dune"]),
            ]),
        Route("GET", "/library/{work}", [.path("work"), .query("merge"), .query("done")]),
        Route(
            "POST", "/library/{work}/edit", [.path("work"), .form("title"), .form("author"), .form("isbn")],
            contentType: "application/x-www-form-urlencoded"),
        Route(
            "POST", "/library/merge", [.form("from"), .form("into"), .form("into", with: ["from": "x"])],
            contentType: "application/x-www-form-urlencoded"),
        Route("GET", "/exports/{format}", [.path("format")]),
        Route("GET", "/shelves", [.query("done")]),
        Route("GET", "/shelves/{name}", [.path("name"), .query("done")]),
        Route(
            "POST", "/shelves/{name}/answer",
            [
                .path("name"), .form("work"), .form("answer", with: ["work": "x"]),
                .form("lent_to", with: ["answer": "lent"]),
            ],
            contentType: "application/x-www-form-urlencoded"),
        Route("POST", "/shelves/{name}/close", [.path("name")]),
        Route("GET", "/library/{work}/crop", [.path("work"), .header("If-None-Match")]),
        Route("GET", "/api/v1/shelves"),
        Route("GET", "/api/v1/shelves/{name}", [.path("name")]),
        Route("GET", "/upload"),
        Route(
            "POST", "/upload",
            [
                .query("shelf"), .query("name"), .header("Content-Type", prefix: "multipart/form-data; boundary="),
                .multipart("shelf"), .multipart("filename"),
            ], contentType: "application/octet-stream"),
        // Last: it removes the work the routes above were sent.
        Route("POST", "/library/{work}/remove", [.path("work")]),
    ]

    /// Values as they appear in a URL or a form (percent-encoded where they would otherwise break the request
    /// line): numbers past Int and PostgreSQL's bigint, negative, zero, not numbers, empty, very long, broken
    /// percent-encoding and UTF-8, a climb out of the folders, markup.
    static let values: [String] = [
        "4611686018427387904", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-1", "0",
        "99999999999999999999999999999", "1e400", "NaN", "abc", "", "%20", "+", String(repeating: "9", count: 4000),
        String(repeating: "%C3%A9", count: 1500), "%ff%fe", "%C3%28", "%ED%A0%80", "%zz", "%", "%00", "a%0D%0Ab",
        "..%2F..%2F..%2Fetc%2Fpasswd", "%3Cscript%3E", "1,2,3,-4,99999999999999999999",
    ]

    /// The same as JSON values, for the API's bodies.
    static let jsonValues: [String] = [
        "4611686018427387904", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-1", "0", "1e400",
        "1.5",
        "\"\"", "\"abc\"", "null", "[]", "{}", "true", #""\ud800""#, #""a\u0000b""#,
        "\"" + String(repeating: "x", count: 4000) + "\"",
    ]

    /// `%XX` as the byte it names, whatever it makes of UTF-8; everything else as its UTF-8.
    static func decodedBytes(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = [], rest = Substring(text)
        while let first = rest.first {
            if first == "%", rest.count >= 3, let byte = UInt8(rest.dropFirst().prefix(2), radix: 16) {
                bytes.append(byte); rest = rest.dropFirst(3)
            } else {
                bytes += Array(String(first).utf8); rest = rest.dropFirst()
            }
        }
        return bytes
    }

    /// One request: what it is, for the failure message.
    struct Sent {
        var what: String
        var path: String
        var headers: [(String, String)]
        var body: [UInt8]
    }

    /// The requests a route is sent: once as is, then once per input and value (and each query field repeated).
    static func requests(for route: Route, samples: [String: String], cookie: String, csrf: String, upload: [UInt8])
        -> [Sent]
    {
        func encode(_ fields: [(String, String)]) -> String { fields.map { "\($0.0)=\($0.1)" }.joined(separator: "&") }
        func path(replacing name: String? = nil, with value: String = "") -> String {
            var path = route.path
            for (key, sample) in samples {
                path = path.replacingOccurrences(of: "{\(key)}", with: key == name ? value : sample)
            }
            return path
        }
        func request(
            _ what: String, path: String, query: [(String, String)] = [], form: [(String, String)] = [],
            json: [(String, String)]? = nil, rawJSON: [UInt8]? = nil, header: (String, String)? = nil,
            multipart: (String, String)? = nil
        ) -> Sent {
            let fields = route.always.filter { key, _ in !query.contains { $0.0 == key } }.sorted { $0.key < $1.key }
                .map { ($0.key, $0.value) }
            let query = fields + query
            var headers: [(String, String)] = [("Cookie", cookie), ("X-CSRF-Token", csrf)]
            if let type = route.contentType { headers.append(("Content-Type", type)) }
            if let (name, value) = header {
                headers.removeAll { $0.0.lowercased() == name.lowercased() }
                headers.append((name, value))
            }
            var body: [UInt8] = []
            if !form.isEmpty { body = Array(encode(form).utf8) }
            if let json { body = Array(("{" + json.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}").utf8) }
            if let rawJSON { body = rawJSON }
            if route.path == "/upload" && route.method == "POST" { body = upload }
            if let (name, value) = multipart {
                // A form's fields are not percent-encoded: the value's bytes as they decode (a NUL, 0xFF, CR LF).
                let raw = Self.decodedBytes(value), boundary = "hostile-boundary"
                let shelf = name == "shelf" ? raw : Array("den".utf8),
                    filename = name == "filename" ? raw : Array("IMG_1.jpg".utf8)
                body =
                    Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"shelf\"\r\n\r\n".utf8) + shelf
                    + Array("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"photos\"; filename=\"".utf8)
                    + filename
                    + Array("\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8) + upload
                    + Array("\r\n--\(boundary)--\r\n".utf8)
                headers.removeAll { $0.0 == "Content-Type" }
                headers.append(("Content-Type", "multipart/form-data; boundary=\(boundary)"))
            }
            return Sent(
                what: "\(route) \(what)", path: path + (query.isEmpty ? "" : "?" + encode(query)), headers: headers,
                body: body)
        }

        var sent = [request("as is", path: path())]
        for input in route.inputs {
            let with = input.with.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            switch input.place {
            case .path:
                sent += values.map {
                    request("\(input) = \($0.prefix(40))", path: path(replacing: input.name, with: $0))
                }
            case .query:
                sent += values.map {
                    request("\(input) = \($0.prefix(40))", path: path(), query: with + [(input.name, $0)])
                }
                sent.append(
                    request(
                        "\(input) repeated", path: path(),
                        query: with + [(input.name, "1"), (input.name, "4611686018427387904"), (input.name, "-1")]))
            case .form:
                sent += values.map {
                    request("\(input) = \($0.prefix(40))", path: path(), form: with + [(input.name, $0)])
                }
                sent.append(
                    request(
                        "\(input) repeated", path: path(),
                        form: with + [(input.name, "-1"), (input.name, "4611686018427387904")]))
            case .json:
                sent += jsonValues.map {
                    request("\(input) = \($0.prefix(40))", path: path(), json: with + [(input.name, $0)])
                }
                let broken = Array("{\"\(input.name)\": \"".utf8) + [0xC3, 0x28, 0xFF] + Array("\"}".utf8)
                sent.append(request("\(input) invalid UTF-8", path: path(), rawJSON: broken))
                sent.append(
                    request(
                        "\(input) cut short", path: path(),
                        rawJSON: Array("{\"\(input.name)\": 4611686018427387904".utf8)))
            case .header:
                sent += values.map {
                    request("\(input) = \($0.prefix(40))", path: path(), header: (input.name, input.prefix + $0))
                }
            case .multipart:
                sent += values.map { request("\(input) = \($0.prefix(40))", path: path(), multipart: (input.name, $0)) }
            }
        }
        return sent
    }

    @Test(
        "Every route is sent every hostile value: no 5xx, and a photo dropped afterwards is read",
        .timeLimit(.minutes(8)), arguments: ["sqlite", "postgresql"])
    func hostileValuesHarmNothing(store: String) async throws {
        guard store == "postgresql" else { return try await sendHostileRequests(overrides: [:]) }
        // PostgreSQL refuses what SQLite takes (a NUL in text, an OFFSET past bigint): the same requests on it.
        try await withPostgres { server in
            try await sendHostileRequests(overrides: [
                "store": ["url": "\"\(server.url(database: try server.createDatabase()))\""]
            ])
        }
    }

    func sendHostileRequests(overrides: [String: [String: String]]) async throws {
        let misread = GeminiEmulator.Book(
            title: "Dune Mesiah", author: "Frank Herbert", confidence: 0.35, box2D: [120, 300, 880, 340])
        try await withGeminiEmulator(.always(.books([dune, misread]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: overrides)
            try root.importCatalogue(sampleCatalogue)
            try root.drop(JPEGFactory.shelf(seed: 90), as: "den/IMG_90.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            let item = try #require(try site.desks.review.items().first { $0.book.title == "Dune Mesiah" })
            site.desks.flushFiles()
            let work = try #require(try root.library().books.first?.work)
            let samples = [
                "sha": item.photo.sha256, "id": item.id, "format": "goodreads",
                "code": String(repeating: "ab", count: 32),
                "work": work.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? work, "name": "den",
            ]
            let upload = JPEGFactory.shelf(seed: 91)

            let count = try await site.web(loggedIn: false) { http in
                var count = 0
                for route in Self.routes {
                    // A session of its own for each route: the one before may have logged out.
                    let (id, session) = try site.desks.sessions.open(loggedIn: true)
                    let sent = Self.requests(
                        for: route, samples: samples, cookie: "shelfd_session=\(id)", csrf: session.csrf,
                        upload: upload)
                    for request in sent {
                        count += 1
                        let answer = try await http.send(
                            route.method, request.path, headers: request.headers, bytes: request.body)
                        #expect(answer.status < 500, "\(request.what): \(answer.status) \(answer.body.prefix(200))")
                    }
                }
                return count
            }
            print("hostile requests sent: \(count) to \(Self.routes.count) routes")

            // The door refuses every hostile Host (the router's requests all name localhost: its rule is asked).
            let hosts = HostRule(listenHost: "127.0.0.1", port: BoundPort(80))
            for value in Self.values { #expect(!hosts.allows(authority: value), "Host: \(value.prefix(40))") }

            // The runtime still does its work.
            try root.drop(JPEGFactory.shelf(seed: 92), as: "after/IMG_92.jpg")
            try await site.run()
            #expect(try root.resultDocuments().contains { $0.photo.path.hasSuffix("IMG_92.jpg") })
        }
    }

    @Test("The list above holds every route the web server has, and only those")
    func everyRouteIsListed() async throws {
        let site = try InProcessSite(try ShelfRoot())
        let router = WebServer.router(
            site: site.site, hosts: HostRule(listenHost: "127.0.0.1", port: BoundPort(0)),
            feed: ProgressFeed(queue: site.desks.queue, time: site.desks.time))
        let served = Set(router.routes.map { "\($0.method) \($0.path)" })
        let listed = Set(Self.routes.map(\.description))
        #expect(
            served.subtracting(listed).isEmpty,
            "routes no hostile request reaches: add them to HostileRequestTests.routes")
        #expect(listed.subtracting(served).isEmpty, "listed routes the server does not have")
        #expect(Self.routes.count == listed.count, "a route listed twice")
    }
}
