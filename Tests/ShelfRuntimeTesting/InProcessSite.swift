import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon
import ShelfTesting
import Synchronization
@testable import ShelfWeb

/// shelfd's web page and API in the test's own process, over a `ShelfRoot`'s configuration as `watch` sets them up:
/// the daemon's runtime (`shelfd run` is `run()`), the desks over its store and its writer of the files for people,
/// and the site's router, which answers each request directly (HummingbirdTesting's `.router`): no socket, no
/// process. The door itself (a `Host` header, raw bytes, a crowd of connections), the login in a browser and the
/// server's life with the daemon are the binary's, tested in ShelfdTests.
package final class InProcessSite: Sendable {
    package let root: ShelfRoot
    package let config: Configuration
    package let secrets: Secrets
    package let runtime: Runtime
    package let desks: Desks
    package let site: WebSite

    /// `time`: the clock the daemon's machinery and the pages read (the system's unless a test moves one).
    /// `refreshLookups`: the book sources are asked again, not their cached answers (`--refresh`).
    package init(_ root: ShelfRoot, time: TimeSource = .system, refreshLookups: Bool = false) throws {
        self.root = root
        // The router's requests come from no address, so never from loopback: the client logs in with the token.
        if root.environment["WEB_TOKEN"] == nil { root.environment["WEB_TOKEN"] = "in-process-\(UUID().uuidString)" }
        (config, secrets) = try root.configuration()
        let logger = Logger(label: "shelfd") { _ in SwiftLogNoOpLogHandler() }
        runtime = try Runtime.start(
            config: config, secrets: secrets, logger: logger, refreshLookups: refreshLookups, time: time)
        desks = Desks(
            config: config, secrets: secrets, store: runtime.store, logger: logger, files: runtime.files,
            time: runtime.time)
        site = try WebSite(config: config, secrets: secrets, desks: desks, logger: logger)
    }

    /// `shelfd run`: queues what incoming/ holds and reads it, in this process.
    @discardableResult
    package func run() async throws -> OneShot.Report {
        try await OneShot(runtime: runtime, logger: site.logger).run()
    }

    /// `shelfd rescan PHOTO…`: reads these photos again (paths, or the start of a hash), in this process.
    @discardableResult
    package func rescan(_ photos: [String]) async throws -> OneShot.Report {
        try await OneShot(runtime: runtime, logger: site.logger).rescan(photos: photos).0
    }

    /// `pass` (`run` or `rescan` of a site on `clock`) while the clock turns until it ends, as its waits need: what it
    /// reported, and how long it took on the clock.
    @discardableResult
    package static func onTheClock(
        _ clock: ManualClock, limit: Duration = .seconds(3600),
        _ pass: @escaping @Sendable () async throws -> OneShot.Report
    ) async throws -> (report: OneShot.Report, took: Duration) {
        let ended = Mutex<Result<OneShot.Report, any Error>?>(nil)
        let task = Task {
            do {
                let report = try await pass()
                ended.withLock { $0 = .success(report) }
            } catch {
                ended.withLock { $0 = .failure(error) }
            }
        }
        let took = try await clock.run(until: "the pass ends", limit: limit) { ended.withLock { $0 != nil } }
        await task.value
        return (try ended.withLock { $0! }.get(), took)
    }

    /// The router answers the requests `body` sends, from a browser logged in with the token (its session cookie
    /// goes with every request) unless `loggedIn` is false. Requests name the host `localhost` on port 80, which the
    /// site takes as its own address.
    package func web<T: Sendable>(loggedIn: Bool = true, _ body: @Sendable (WebClient) async throws -> T)
        async throws -> T
    {
        let hosts = HostRule(listenHost: "127.0.0.1", port: BoundPort(80))
        let feed = ProgressFeed(queue: desks.queue, time: desks.time)
        let app = Application(router: WebServer.router(site: site, hosts: hosts, feed: feed))
        defer { desks.flushFiles() }
        guard let token = secrets.webToken?.value else { throw WebClientError("the site has no web_token") }
        return try await app.test(.router) { client in
            let browser = WebClient(client: client)
            guard loggedIn else { return try await body(browser) }
            let login = try await browser.send(
                "POST", "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: "token=\(formEncoded(token))")
            guard let cookie = login.cookiePair else {
                throw WebClientError("the login gave no session: \(login.status)")
            }
            return try await body(browser.with(cookie: cookie))
        }
    }
}

extension ShelfRoot {
    /// The configuration and secrets shelfd reads in this root, as a command started here would.
    package func configuration() throws -> (Configuration, Secrets) {
        let (config, _) = try Configuration.load(explicitPath: configFile.path, environment: environment)
        return (config, Secrets.load(environment: environment))
    }

    /// `shelfd catalogue import` of a CSV list, in this process: before the site starts, as a person imports a list
    /// before the daemon reads photos against it.
    package func importCatalogue(_ csv: String) throws {
        let file = base.appendingPathComponent("list-\(UUID().uuidString.prefix(6)).csv")
        try csv.write(to: file, atomically: true, encoding: .utf8)
        let (config, _) = try configuration()
        _ = try CatalogueDesk(store: try StoreAccess.catalogue(config: config, shared: nil)).importFile(file.path)
    }
}

/// A client of the site's router, with the answers' shape the tests of the binary's sockets read (`WebAnswer`).
package struct WebClient: Sendable {
    let client: any TestClientProtocol
    /// The session's cookie, sent with every request that names no cookie of its own.
    var cookie: String?

    init(client: any TestClientProtocol) { self.client = client }

    func with(cookie: String) -> WebClient {
        var client = self
        client.cookie = cookie
        return client
    }

    package func send(_ method: String = "GET", _ path: String, headers: [(String, String)] = [], body: String = "")
        async throws -> WebAnswer
    {
        try await send(method, path, headers: headers, bytes: Array(body.utf8))
    }

    /// A body of any bytes, not UTF-8 only.
    package func send(_ method: String = "GET", _ path: String, headers: [(String, String)] = [], bytes: [UInt8])
        async throws -> WebAnswer
    {
        var fields = HTTPFields()
        if let cookie, !headers.contains(where: { $0.0.lowercased() == "cookie" }) {
            fields.append(HTTPField(name: .cookie, value: cookie))
        }
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { throw WebClientError("not a header name: \(name)") }
            fields.append(HTTPField(name: field, value: value))
        }
        let response = try await client.executeRequest(
            uri: path, method: HTTPRequest.Method(method) ?? .get, headers: fields,
            body: bytes.isEmpty && method == "GET" ? nil : ByteBuffer(bytes: bytes))
        var answer = WebAnswer(
            status: response.status.code, headers: [:], cookies: [], body: String(buffer: response.body))
        answer.bytes = Array(buffer: response.body)
        for field in response.headers { answer.add(header: field.name.canonicalName, field.value) }
        return answer
    }
}

extension WebClient {
    /// The browser's session: its cookie and the CSRF token the forms of the page at `path` carry.
    package func session(from path: String = "/library") async throws -> (cookie: String, token: String) {
        let page = try await send("GET", path)
        guard let cookie = page.cookiePair ?? cookie else { throw WebClientError("\(path) gave no session cookie") }
        return (cookie, page.body.csrfToken)
    }

    /// Posts a form the way a browser does: urlencoded, with a session's cookie and the form's CSRF field.
    package func post(_ path: String, form fields: [String: String]) async throws -> WebAnswer {
        let (cookie, token) = try await session()
        let body = fields.merging(["csrf": token]) { a, _ in a }.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(formEncoded($0.value))" }.joined(separator: "&")
        return try await send(
            "POST", path, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", cookie)],
            body: body)
    }
}

struct WebClientError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A web answer as a test reads it: the status, the headers by lower-cased name (repeated ones joined with ", ";
/// Set-Cookie kept apart in `cookies`) and the body as text.
package struct WebAnswer: Sendable {
    package var status: Int
    package var headers: [String: String]
    package var cookies: [String]
    package var body: String
    /// The body as sent, for a picture.
    package var bytes: [UInt8]

    package init(status: Int, headers: [String: String], cookies: [String], body: String) {
        self.status = status; self.headers = headers; self.cookies = cookies; self.body = body
        bytes = Array(body.utf8)
    }

    package func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// A header of the answer: Set-Cookie kept apart, a repeated one joined with ", ".
    package mutating func add(header name: String, _ value: String) {
        let name = name.lowercased()
        if name == "set-cookie" { return cookies.append(value) }
        headers[name] = headers[name].map { "\($0), \(value)" } ?? value
    }
    /// `name=value` of the first Set-Cookie, for a Cookie header.
    package var cookiePair: String? { cookies.first.flatMap { $0.split(separator: ";").first.map(String.init) } }
}
