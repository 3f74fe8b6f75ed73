import InMemoryLogging
import Logging
import ShelfCore
import ShelfHTTP
import ShelfTesting
import Testing

@Suite("HTTPLink's log of each request", .timeLimit(.minutes(1)))
struct HTTPLinkTests {
    /// A link whose log lines ("message key=value …") the test reads back.
    func link(to http: HTTPClient = HTTPClient(maxConcurrent: 1)) -> (HTTPLink, InMemoryLogHandler) {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        let captured = handler
        let link = HTTPLink(
            http: http, logger: Logger(label: "test") { _ in captured }, time: .system, service: "Book source",
            about: ["source": "openlibrary"])
        return (link, handler)
    }

    func lines(_ handler: InMemoryLogHandler) -> [String] {
        handler.entries.map { entry in
            "\(entry.message) "
                + entry.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                    separator: " ")
        }
    }

    @Test("An answer is logged with who was asked, status, sizes and duration: never headers, query or body")
    func answerLogged() async throws {
        let server = HTTPServer { _ in .init(status: 404, text: "no such book SECRET-ANSWER") }
        try server.start()
        defer { server.stop() }
        let (link, handler) = link()
        let (response, _) = try await link.exchange(
            HTTPRequest(
                method: "POST", url: server.baseURL + "/search.json?key=SECRET-KEY",
                headers: [("Authorization", "Bearer SECRET-TOKEN")], body: Array("SECRET-BODY".utf8)),
            detail: ["http.path": "/search.json"])
        #expect(response.status == 404) // any status is an answer, returned as it came
        let logged = lines(handler)
        #expect(logged.count == 1)
        let line = try #require(logged.first)
        #expect(line.hasPrefix("Book source answered "))
        for part in [
            "source=openlibrary", "http.path=/search.json", "http.status=404", "http.request.bytes=11",
            "http.response.bytes=26", "duration_ms=",
        ] {
            #expect(line.contains(part), "\(part) not in \(line)")
        }
        #expect(!line.contains("SECRET"))
    }

    @Test("A transfer that fails is logged with its kind and thrown as it is")
    func failureLogged() async throws {
        let server = HTTPServer { _ in .init(status: 200, text: "") }
        let port = try server.start()
        server.stop() // nobody listens there now
        let (link, handler) = link()
        await #expect(throws: HTTPError.self) {
            _ = try await link.exchange(HTTPRequest(url: "http://127.0.0.1:\(port)/?key=SECRET-KEY"))
        }
        let line = try #require(lines(handler).first)
        #expect(line.hasPrefix("Book source request failed ") && line.contains("http.error=connect"))
        #expect(line.contains("source=openlibrary") && !line.contains("SECRET"))
    }
}
