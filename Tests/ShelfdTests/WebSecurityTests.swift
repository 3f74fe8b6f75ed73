import Foundation
import ShelfCore
import ShelfHTTP
import ShelfRuntimeTesting
import Testing

/// The page's door (issue 12, "Security") where only a socket shows it: tokens and sessions from an address beyond
/// loopback, the login link `shelfd web` prints, `Host`, raw paths, and no token anywhere it could leak. (Sessions,
/// CSRF and `Origin` through the router are tested in-process, in ShelfWebTests.)
@Suite("The web page's security", .serialized)
struct WebSecurityTests {
    static let token = "tok-\(UUID().uuidString)-secret"
    static let policy =
        "default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self'; object-src 'none'; "
        + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    /// This machine's first address that is not loopback, so a request really comes from beyond it.
    static func networkAddress() -> String? { HostAddresses.beyondLoopback }

    @Test(
        "Beyond loopback: 401 without the token, 200 with it, a login link that works once, and the token nowhere",
        .timeLimit(.minutes(2)))
    func beyondLoopbackNeedsTheToken() async throws {
        let shelf = try ShelfRoot(overrides: ["web": ["listen": "\"0.0.0.0:0\""]])
        shelf.environment["WEB_TOKEN"] = Self.token
        let server = try shelf.startWeb()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGKILL) : 0 }
        let port = RawHTTP(url: try await shelf.webURL()).port
        let address = try #require(
            Self.networkAddress(), "this machine has no address beyond loopback")
        let remote = RawHTTP(host: address, port: port)
        var answers: [RawHTTP.Answer] = []

        let page = try remote.send("GET", "/")
        answers.append(page)
        #expect(page.status == 401)
        #expect(page.body.contains("name=\"token\""), "the 401 page offers the login form")
        #expect(page.cookies.isEmpty, "no session for a stranger")
        let api = try remote.send("GET", "/api/v1/status")
        answers.append(api)
        #expect(api.status == 401 && api.body.contains("\"unauthorized\""))
        #expect(try remote.send("GET", "/healthz").status == 200, "a supervisor's check needs no token")

        let withToken = try remote.send("GET", "/api/v1/status", headers: [("Authorization", "Bearer \(Self.token)")])
        answers.append(withToken)
        #expect(withToken.status == 200)
        #expect(
            try JSONStyle.decoder().decode(StatusDocument.self, from: Data(withToken.body.utf8)).schema
                == "shelfd.status/1")

        // The login form: the token in a POST, a session cookie back.
        #expect(try remote.send("GET", "/", headers: [("Cookie", try Self.logIn(remote))]).status == 200)

        // The one-time link: printed on the machine, good once.
        let printed = try await shelf.shelfd("web", "--print-login-url")
        #expect(printed.status == 0, "\(printed.stderr)")
        let link = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(link.hasPrefix("http://") && link.contains(":\(port)/login/"), "\(link)")
        let path = "/login/" + (link.components(separatedBy: "/login/").last ?? "")
        let login = try remote.send("GET", path)
        #expect(login.status == 303 && login.header("location") == "/")
        let home = try remote.send("GET", "/", headers: [("Cookie", try #require(login.cookiePair))])
        answers.append(home)
        #expect(home.status == 200 && home.body.contains("<h1>Overview</h1>"))
        #expect(try remote.send("GET", path).status == 401, "a login link works once")

        #expect(try await server.stop() == 0)
        for answer in answers {
            #expect(!answer.body.contains(Self.token) && !answer.headers.values.contains { $0.contains(Self.token) })
        }
        #expect(!server.logText.contains(Self.token), "the token is in the log")
        #expect(server.logText.contains("web_login"), "logins are logged (without the token)")
    }

    static let formType = ("Content-Type", "application/x-www-form-urlencoded")

    /// `shelfd web` on every address with `token`: the loopback client, and one from this machine's network address.
    static func startBeyondLoopback(_ shelf: ShelfRoot, token: String) async throws -> (
        server: Daemon, local: RawHTTP, remote: RawHTTP
    ) {
        shelf.environment["WEB_TOKEN"] = token
        let server = try shelf.startWeb()
        let port = RawHTTP(url: try await shelf.webURL()).port
        let address = try #require(
            Self.networkAddress(), "this machine has no address beyond loopback")
        return (server, RawHTTP(host: "127.0.0.1", port: port), RawHTTP(host: address, port: port))
    }

    /// Logs in with the token in the form; the session cookie (`name=value`).
    static func logIn(_ client: RawHTTP) throws -> String {
        let login = try client.send("POST", "/login", headers: [formType], body: "token=\(token)")
        return try #require(login.cookiePair, "no session after logging in: \(login.status)")
    }

    @Test(
        "Guessing the token is cut off for the guesser: after ten wrong tokens in a minute even its right one gets 429; another client, and a session, go on",
        .timeLimit(.minutes(2)))
    func guessingIsThrottled() async throws {
        let shelf = try ShelfRoot(overrides: ["web": ["listen": "\"0.0.0.0:0\""]])
        let (server, local, guesser) = try await Self.startBeyondLoopback(shelf, token: Self.token)
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGKILL) : 0 }
        let cookie = try Self.logIn(local)
        for guess in 0..<10 {
            #expect(
                try guesser.send("GET", "/api/v1/status", headers: [("Authorization", "Bearer guess-\(guess)")]).status
                    == 401)
        }
        let right = try guesser.send("GET", "/api/v1/status", headers: [("Authorization", "Bearer \(Self.token)")])
        #expect(right.status == 429 && right.body.contains("too_many_wrong_tokens"), "\(right.status)")
        let form = try guesser.send("POST", "/login", headers: [Self.formType], body: "token=\(Self.token)")
        #expect(form.status == 429 && form.cookies.isEmpty)

        // Another client is not locked out by the guesser: its token and its login go through.
        let other = try local.send("GET", "/api/v1/status", headers: [("Authorization", "Bearer \(Self.token)")])
        #expect(other.status == 200, "\(other.status) \(other.body)")
        #expect(try local.send("POST", "/login", headers: [Self.formType], body: "token=\(Self.token)").status == 303)
        #expect(
            try guesser.send("GET", "/", headers: [("Cookie", cookie)]).status == 200, "a logged-in session goes on")
        #expect(try await server.stop() == 0)
        #expect(!server.logText.contains(Self.token))
    }

    @Test("A web_token shorter than 32 characters is refused at start, by web and by watch, saying how to make one")
    func shortTokenIsRefused() async throws {
        let shelf = try ShelfRoot()
        let short = "short-\(UUID().uuidString.prefix(8))"
        shelf.environment["WEB_TOKEN"] = short
        for command in ["web", "watch"] {
            let result = try await shelf.shelfd([command], timeout: .seconds(30))
            #expect(result.status == 1, "\(command) started with a short token")
            #expect(
                result.stderr.contains("at least 32") && result.stderr.contains("openssl rand -hex 32"),
                "\(command): \(result.stderr)")
            #expect(!result.stderr.contains(short), "the token is shown")
        }
        let doctor = try await shelf.shelfd("doctor")
        #expect(doctor.stdout.contains("openssl rand -hex 32") && doctor.status == 1, "\(doctor.stdout)")
    }

    @Test(
        "Only a page a browser opens makes a session: the live feed, pictures, downloads and another site's <img> make none",
        .timeLimit(.minutes(2)))
    func onlyPagesMakeSessions() async throws {
        let shelf = try ShelfRoot()
        let server = try shelf.startWeb()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGKILL) : 0 }
        let local = RawHTTP(url: try await shelf.webURL())
        let page = try local.send("GET", "/")
        #expect(page.cookiePair != nil, "a script's page still gets the session its forms need")
        #expect(!page.body.contains(#"action="/logout""#), "on loopback there is nothing to log out of")
        #expect(try local.send("GET", "/library", headers: [("Sec-Fetch-Dest", "document")]).cookiePair != nil)
        let image = try local.send("GET", "/", headers: [("Sec-Fetch-Dest", "image")])
        #expect(image.status == 200 && image.cookies.isEmpty, "an <img> pointed at the page from another site")
        for path in [
            "/events?once=1", "/exports/goodreads", "/photos/\(String(repeating: "a", count: 64))/thumb",
            "/photos/\(String(repeating: "a", count: 64))/image",
        ] {
            let answer = try local.send("GET", path)
            #expect(answer.status < 500 && answer.cookies.isEmpty, "\(path): \(answer.status) \(answer.cookies)")
        }
        #expect(try await server.stop() == 0)
    }

    @Test("A Host that is not this server's is refused (DNS rebinding); localhost and the address are served")
    func wrongHostIsRefused() async throws {
        let shelf = try ShelfRoot()
        let server = try shelf.startWeb()
        let http = RawHTTP(url: try await shelf.webURL())
        let refused = try http.send("GET", "/", hostHeader: "evil.example:\(http.port)")
        #expect(refused.status == 421)
        #expect(refused.header("content-security-policy") == Self.policy, "the refusal carries the policy too")
        #expect(refused.header("x-content-type-options") == "nosniff")
        #expect(try http.send("GET", "/api/v1/status", hostHeader: "evil.example").status == 421)
        #expect(try http.send("GET", "/", hostHeader: "127.0.0.1:\(http.port == 1 ? 2 : http.port - 1)").status == 421)
        #expect(try http.send("GET", "/", hostHeader: "localhost:\(http.port)").status == 200)
        #expect(try http.send("GET", "/", hostHeader: "127.0.0.1:\(http.port)").status == 200)
        #expect(try await server.stop() == 0)
    }

    @Test(
        "Paths that climb out of shelfd's folders get 404 and nothing of the file",
        arguments: [
            "/photos/../../etc/passwd", "/photos/%2e%2e%2fetc%2fpasswd", "/photos/..%2f..%2f..%2fetc%2fpasswd/image",
            "/photos/%2e%2e%2f%2e%2e%2fetc%2fpasswd/thumb", "/static/../../../../etc/passwd",
            "/static/..%2f..%2fetc%2fpasswd",
            "/review/..%2f..%2fetc%2fpasswd/crop", "/api/v1/results/..%2f..%2f..%2fetc%2fpasswd",
            "/exports/..%2f..%2fetc%2fpasswd",
            "/photos/0000000000000000000000000000000000000000000000000000000000000000/image",
        ])
    func climbingPathsFindNothing(path: String) async throws {
        let shelf = try ShelfRoot()
        let server = try shelf.startWeb()
        let answer = try RawHTTP(url: try await shelf.webURL()).send("GET", path)
        #expect(answer.status == 404, "\(path): \(answer.status)")
        #expect(!answer.body.contains("root:"), "\(path) gave the file")
        #expect(try await server.stop() == 0)
    }
}
