/// One HTTP request. `body` is sent as is (POST and any method given a body).
package struct HTTPRequest: Sendable {
    package var method: String
    package var url: String
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// The whole transfer: connect, upload, wait, download.
    package var timeout: Duration
    package var connectTimeout: Duration

    package init(
        method: String = "GET", url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
        timeout: Duration = .seconds(60), connectTimeout: Duration = .seconds(10)
    ) {
        self.method = method; self.url = url; self.headers = headers; self.body = body
        self.timeout = timeout; self.connectTimeout = connectTimeout
    }
}

/// A complete response. Any status is a response; only transport failures throw.
package struct HTTPResponse: Sendable {
    package var status: Int
    /// Lower-cased names; a repeated header's values are joined with ", ".
    package var headers: [String: String]
    package var body: [UInt8]

    package init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status; self.headers = headers; self.body = body
    }

    package func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A transfer that did not produce a response. `message` never holds header values or bodies.
package struct HTTPError: Error, Sendable, CustomStringConvertible {
    package enum Kind: String, Sendable { case timeout, connect, send, receive, cancelled, other }

    package var kind: Kind
    package var message: String

    package init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }

    package var description: String { "\(kind.rawValue): \(message)" }
}

extension Duration {
    /// Whole milliseconds, at least 1 (libcurl reads 0 as "no timeout").
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}
