import Foundation
import ShelfRuntimeTesting

/// One HTTP/1.1 exchange over a plain socket, written byte for byte as given: any `Host`, any path (`..` and
/// `%2e%2e` are not tidied away as a client library would), no cookie jar. For the web page's door.
struct RawHTTP {
    typealias Answer = WebAnswer

    var host: String
    var port: Int

    /// `url` as the harness gives it (`http://127.0.0.1:PORT`).
    init(url: String) {
        let authority =
            url.replacingOccurrences(of: "http://", with: "").split(separator: "/").first.map(String.init) ?? ""
        let colon = authority.lastIndex(of: ":")!
        host = String(authority[..<colon])
        port = Int(authority[authority.index(after: colon)...])!
    }

    init(host: String, port: Int) { self.host = host; self.port = port }

    /// `hostHeader` nil: this host and port, as a browser would send them.
    func send(
        _ method: String = "GET", _ path: String, hostHeader: String? = nil, headers: [(String, String)] = [],
        body: String = ""
    ) throws -> Answer {
        try send(method, path, hostHeader: hostHeader, headers: headers, bytes: Array(body.utf8))
    }

    /// A body of any bytes, not UTF-8 only.
    func send(
        _ method: String = "GET", _ path: String, hostHeader: String? = nil, headers: [(String, String)] = [],
        bytes body: [UInt8]
    ) throws -> Answer {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(hostHeader ?? "\(host):\(port)")\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method != "GET" { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        return try Self.parse(exchange(Array(text.utf8) + body))
    }

    private func exchange(_ bytes: [UInt8]) throws -> [UInt8] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let info = found else {
            throw Failure("cannot resolve \(host)")
        }
        defer { freeaddrinfo(found) }
        let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        guard fd >= 0 else { throw Failure("socket: \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            throw Failure("connect to \(host):\(port): \(errno)")
        }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure("write: \(errno)") }
            sent += n
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        return answer
    }

    static func parse(_ bytes: [UInt8]) throws -> Answer {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure("no complete answer: \(text)") }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else {
            throw Failure("no status line: \(text)")
        }
        var answer = Answer(status: status, headers: [:], cookies: [], body: "")
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            answer.add(
                header: String(line[..<colon]),
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = String(text[split.upperBound...])
        if answer.header("transfer-encoding")?.contains("chunked") == true { body = dechunk(body) }
        return Answer(status: status, headers: answer.headers, cookies: answer.cookies, body: body)
    }

    static func dechunk(_ text: String) -> String {
        var rest = Substring(text), out = ""
        while let end = rest.range(of: "\r\n"), let size = Int(rest[..<end.lowerBound], radix: 16), size > 0 {
            let start = rest.utf8.index(end.upperBound, offsetBy: 0)
            let chunkEnd = rest.utf8.index(start, offsetBy: size)
            out += String(rest[start..<chunkEnd])
            rest = rest[chunkEnd...].dropFirst(2)
        }
        return out
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
