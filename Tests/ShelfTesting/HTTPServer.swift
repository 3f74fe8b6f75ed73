import Foundation
import Glibc
import Synchronization

/// A request as the test server received it.
package struct RecordedRequest: Sendable {
    package var method: String
    /// The request target as sent: path plus `?query`.
    package var target: String
    /// Lower-cased names.
    package var headers: [String: String]
    package var body: [UInt8]
    /// Which connection it came on (1, 2, …): equal numbers mean a kept-alive connection was reused.
    package var connection: Int

    package var path: String { String(target.prefix { $0 != "?" }) }

    /// Percent-decoded query parameters.
    package var query: [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        var result: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            result[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return result
    }

    package func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A loopback HTTP/1.1 server for tests and benchmarks: binds 127.0.0.1 on a free port, one thread
/// per connection, keep-alive with Content-Length bodies, `Connection: close` respected.
/// Every answer comes from `handler`; a response may ask to be delayed first.
package final class HTTPServer: Sendable {
    package struct Response: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]
        /// Waited before answering (on the connection's own thread); cut short if the client hangs up.
        package var delay: Duration
        /// Close the connection after this response.
        package var close: Bool

        package init(
            status: Int = 200, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
            delay: Duration = .zero, close: Bool = false
        ) {
            self.status = status; self.headers = headers; self.body = body; self.delay = delay; self.close = close
        }

        package init(
            status: Int = 200, headers: [(name: String, value: String)] = [], text: String,
            delay: Duration = .zero, close: Bool = false
        ) {
            self.init(status: status, headers: headers, body: Array(text.utf8), delay: delay, close: close)
        }

        package static func json(
            _ text: String, status: Int = 200, headers: [(name: String, value: String)] = [],
            delay: Duration = .zero
        ) -> Response {
            Response(
                status: status, headers: [("Content-Type", "application/json; charset=UTF-8")] + headers,
                text: text, delay: delay)
        }
    }

    package typealias Handler = @Sendable (RecordedRequest) -> Response

    private struct State {
        var listener: Int32 = -1
        var port: Int = 0
        var connections: Set<Int32> = []
        var connectionCount = 0
        var requests: [RecordedRequest] = []
        var inFlight = 0
        var maxInFlight = 0
        var stopped = false
        /// An outage: every connection is accepted and closed at once, unanswered (and counted).
        var down = false
        var droppedConnections = 0
    }

    private let handler: Handler
    private let state = Mutex(State())

    package init(handler: @escaping Handler) { self.handler = handler }

    deinit { stop() }

    /// Binds 127.0.0.1 on a free port, starts accepting, and returns the port.
    @discardableResult
    package func start() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket", errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(fd, sa, length) == 0 && listen(fd, 128) == 0 && getsockname(fd, sa, &length) == 0
            }
        }
        guard bound else { let e = errno; close(fd); throw ServerError("bind/listen", e) }
        let port = Int(UInt16(bigEndian: address.sin_port))
        state.withLock {
            $0.listener = fd; $0.port = port
        }
        let thread = Thread { [self] in acceptLoop(fd) }
        thread.name = "HTTPServer.accept"
        thread.start()
        return port
    }

    /// Stops accepting and closes every open connection. Safe to call twice.
    ///
    /// Shut down only, under the lock the threads close their sockets under: the threads blocked on these sockets
    /// wake up and close them, and no descriptor is shut down after its thread closed it. Its number may by then be
    /// another test's socket in this process (tests run side by side), which a late shutdown would cut.
    package func stop() {
        state.withLock { s in
            s.stopped = true
            if s.listener >= 0 { shutdown(s.listener, Int32(SHUT_RDWR)) }
            for fd in s.connections { shutdown(fd, Int32(SHUT_RDWR)) }
            s.listener = -1; s.connections = []
        }
    }

    /// Simulates an outage on the same port: while down, open connections are cut (a request in flight gets
    /// no answer) and every new connection is closed as soon as it is accepted, counted in `droppedConnections`.
    package func setDown(_ down: Bool) {
        state.withLock { s in
            s.down = down
            if down { for fd in s.connections { shutdown(fd, Int32(SHUT_RDWR)) } }
        }
    }

    /// Connections closed unanswered while the server was down: the attempts a client made during an outage.
    package var droppedConnections: Int { state.withLock { $0.droppedConnections } }

    package var port: Int { state.withLock { $0.port } }
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Every request received so far, in arrival order.
    package var requests: [RecordedRequest] { state.withLock { $0.requests } }
    /// The most requests the handler was answering at the same moment.
    package var maxConcurrentRequests: Int { state.withLock { $0.maxInFlight } }
    /// Connections accepted so far.
    package var connectionCount: Int { state.withLock { $0.connectionCount } }

    private func acceptLoop(_ listener: Int32) {
        defer {
            state.withLock { s in
                close(listener)
                if s.listener == listener { s.listener = -1 }
            }
        }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return // shut down
            }
            var yes: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let number: Int? = state.withLock { s in
                guard !s.stopped else { return nil }
                if s.down { s.droppedConnections += 1; return 0 }
                s.connections.insert(fd); s.connectionCount += 1
                return s.connectionCount
            }
            guard let number else { shutdown(fd, Int32(SHUT_RDWR)); close(fd); return }
            if number == 0 { shutdown(fd, Int32(SHUT_RDWR)); close(fd); continue }
            let thread = Thread { [self] in serve(fd, number) }
            thread.name = "HTTPServer.connection"
            thread.start()
        }
    }

    private func serve(_ fd: Int32, _ number: Int) {
        var connection = Connection(fd: fd)
        defer {
            state.withLock { s in
                s.connections.remove(fd)
                close(fd)
            }
        }
        while let request = connection.readRequest(number) {
            state.withLock { s in
                s.requests.append(request); s.inFlight += 1; s.maxInFlight = max(s.maxInFlight, s.inFlight)
            }
            let response = handler(request)
            var clientGone = false
            if response.delay > .zero { clientGone = !connection.wait(response.delay) }
            let close = response.close || request.header("connection")?.lowercased() == "close"
            if !clientGone { clientGone = !connection.write(response, method: request.method, close: close) }
            state.withLock { $0.inFlight -= 1 }
            if clientGone || close { return }
        }
    }
}

package struct ServerError: Error, CustomStringConvertible {
    package var description: String
    init(_ call: String, _ code: Int32) { description = "\(call) failed: \(String(cString: strerror(code)))" }
}

/// One accepted socket: buffered reads of HTTP/1.1 requests, whole-response writes.
private struct Connection {
    let fd: Int32
    var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// The next request, or nil when the client closed the connection or sent something unreadable.
    mutating func readRequest(_ number: Int) -> RecordedRequest? {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while true {
            if let end = buffer.firstRange(of: separator)?.lowerBound { headEnd = end; break }
            guard fill() else { return nil }
        }
        guard let headEnd else { return nil }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        buffer.removeFirst(headEnd + 4)
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < length { guard fill() else { return nil } }
        let body = Array(buffer.prefix(length))
        buffer.removeFirst(length)
        return RecordedRequest(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers,
            body: body, connection: number)
    }

    private mutating func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { buffer.append(contentsOf: chunk[..<n]); return true }
            if n < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// Waits `delay`; false if the client hung up (or the server stopped) meanwhile.
    func wait(_ delay: Duration) -> Bool {
        let deadline = ContinuousClock.now + delay
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return true }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left.curlLikeMilliseconds, 1000)))
            if ready > 0 {
                var byte: UInt8 = 0
                if recv(fd, &byte, 1, Int32(MSG_PEEK)) <= 0 { return false } // EOF or error: gone
                usleep(1000) // pipelined data: keep waiting
            }
        }
    }

    /// Writes the whole response; false if the client is gone.
    func write(_ response: HTTPServer.Response, method: String, close: Bool) -> Bool {
        var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
        for header in response.headers { head += "\(header.name): \(header.value)\r\n" }
        head += "Content-Length: \(response.body.count)\r\n"
        if close { head += "Connection: close\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if method != "HEAD" { bytes += response.body }
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
}

extension Duration {
    fileprivate var curlLikeMilliseconds: Int {
        let (seconds, attoseconds) = components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}
