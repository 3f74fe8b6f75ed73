import Foundation
import ShelfHTTP
import ShelfTesting
import Testing

/// Runs `body` against a loopback server answering with `handler`; always stops it.
private func withServer<T>(
    _ handler: @escaping HTTPServer.Handler,
    _ body: (HTTPServer) async throws -> T
) async throws -> T {
    let server = HTTPServer(handler: handler)
    try server.start()
    defer { server.stop() }
    return try await body(server)
}

@Suite("HTTPClient against a loopback server", .timeLimit(.minutes(1)))
struct HTTPClientTests {
    @Test("A GET returns status, headers and body")
    func getRoundTrip() async throws {
        try await withServer({ _ in .init(status: 200, headers: [("X-Thing", "one")], text: "hello") }) { server in
            let client = HTTPClient(maxConcurrent: 1)
            let response = try await client.send(
                HTTPRequest(
                    url: server.baseURL + "/hi?x=1",
                    headers: [("X-Request", "abc")]))
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "hello")
            #expect(response.header("X-Thing") == "one")
            #expect(response.headers["x-thing"] == "one")
            let seen = try #require(server.requests.first)
            #expect(seen.method == "GET" && seen.path == "/hi" && seen.query["x"] == "1")
            #expect(seen.header("x-request") == "abc")
        }
    }

    @Test("A POST body arrives intact, without Expect: 100-continue", arguments: [0, 5, 3_000_000])
    func postRoundTrip(size: Int) async throws {
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await withServer({ request in .init(status: 201, body: request.body) }) { server in
            let client = HTTPClient(maxConcurrent: 1)
            let response = try await client.send(
                HTTPRequest(
                    method: "POST", url: server.baseURL + "/echo",
                    headers: [("Content-Type", "application/octet-stream")], body: body))
            #expect(response.status == 201)
            #expect(response.body == body)
            let seen = try #require(server.requests.first)
            #expect(seen.method == "POST" && seen.body.count == size)
            #expect(seen.header("expect") == nil)
            #expect(seen.header("content-type") == "application/octet-stream")
        }
    }

    @Test("Error statuses are responses, and Retry-After is visible")
    func errorStatusIsAResponse() async throws {
        try await withServer({ _ in .init(status: 503, headers: [("Retry-After", "7")], text: "busy") }) { server in
            let response = try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(url: server.baseURL + "/"))
            #expect(response.status == 503)
            #expect(response.header("retry-after") == "7")
        }
    }

    @Test("Sequential requests reuse one kept-alive connection")
    func keepAlive() async throws {
        try await withServer({ _ in .init(text: "ok") }) { server in
            let client = HTTPClient(maxConcurrent: 1)
            for _ in 0..<20 {
                let response = try await client.send(
                    HTTPRequest(method: "POST", url: server.baseURL + "/", body: [1, 2, 3]))
                #expect(response.status == 200)
            }
            #expect(server.requests.count == 20)
            #expect(server.connectionCount == 1)
        }
    }

    @Test("A slow server gives a timeout error")
    func timeout() async throws {
        try await withServer({ _ in .init(text: "late", delay: .seconds(5)) }) { server in
            do {
                _ = try await HTTPClient(maxConcurrent: 1).send(
                    HTTPRequest(url: server.baseURL + "/", timeout: .milliseconds(300)))
                Issue.record("expected a timeout")
            } catch let error as HTTPError {
                #expect(error.kind == .timeout, "it gave up before the server's answer came")
            }
        }
    }

    @Test("Nobody listening gives a connect error")
    func connectionRefused() async throws {
        let server = HTTPServer { _ in .init() }
        let port = try server.start()
        server.stop() // the port is now closed
        do {
            _ = try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(url: "http://127.0.0.1:\(port)/"))
            Issue.record("expected a connect error")
        } catch {
            #expect(error.kind == .connect)
        }
    }

    @Test("No more than maxConcurrent transfers run at once")
    func concurrencyBound() async throws {
        try await withServer({ _ in .init(text: "ok", delay: .milliseconds(150)) }) { server in
            let client = HTTPClient(maxConcurrent: 3)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<10 {
                    group.addTask {
                        try await client.send(
                            HTTPRequest(
                                method: "POST", url: server.baseURL + "/\(i)", body: [UInt8](repeating: 7, count: 1000))
                        ).status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            #expect(server.requests.count == 10)
            #expect(server.maxConcurrentRequests == 3)
        }
    }

    @Test("Ten concurrent clients on kept-alive connections all get their own answers")
    func manyConcurrentKeepAlive() async throws {
        try await withServer({ request in .init(body: request.body) }) { server in
            let client = HTTPClient(maxConcurrent: 10)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        let body = Array("request \(i)".utf8)
                        let response = try await client.send(
                            HTTPRequest(method: "POST", url: server.baseURL + "/", body: body))
                        #expect(response.body == body)
                    }
                }
                try await group.waitForAll()
            }
            #expect(server.requests.count == 200)
            #expect(server.connectionCount <= 10)
        }
    }

    @Test("Cancelling the task stops a slow request quickly")
    func cancellation() async throws {
        try await withServer({ _ in .init(text: "late", delay: .seconds(20)) }) { server in
            let client = HTTPClient(maxConcurrent: 1)
            let task = Task { try await client.send(HTTPRequest(url: server.baseURL + "/slow", timeout: .seconds(30))) }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            let result = await task.result
            #expect(throws: HTTPError.self) { try result.get() }
            if case .failure(let error as HTTPError) = result { #expect(error.kind == .cancelled) }
            // The lane is free again.
            let queued = Task { try await client.send(HTTPRequest(url: server.baseURL + "/")) }
            queued.cancel()
            _ = await queued.result
        }
    }

    @Test("A request cancelled while waiting for a lane never starts")
    func cancelWhileQueued() async throws {
        let slowFirst: HTTPServer.Handler = { request in
            .init(text: "ok", delay: request.path == "/slow" ? .milliseconds(600) : .zero)
        }
        try await withServer(slowFirst) { server in
            let client = HTTPClient(maxConcurrent: 1)
            let slow = Task { try await client.send(HTTPRequest(url: server.baseURL + "/slow")) }
            try await Task.sleep(for: .milliseconds(100))
            let waiting = Task { try await client.send(HTTPRequest(url: server.baseURL + "/queued")) }
            try await Task.sleep(for: .milliseconds(100))
            waiting.cancel()
            if case .failure(let error as HTTPError) = await waiting.result {
                #expect(error.kind == .cancelled)
            } else {
                Issue.record("expected cancellation")
            }
            #expect(try await slow.value.status == 200)
            #expect(!server.requests.contains { $0.path == "/queued" })
        }
    }
}
