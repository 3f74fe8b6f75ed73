import Foundation
import NIOCore
import Testing
import ShelfApp
import ShelfTesting
@testable import ShelfWeb

@Suite("The web page's door: its rules without a socket")
struct SecurityRulesTests {
    static let loopback = HostRule(
        listenHost: "127.0.0.1", port: BoundPort(8787), machineNames: ["shelf-pc", "shelf-pc.local"])
    static let everywhere = HostRule(
        listenHost: "0.0.0.0", port: BoundPort(8787), machineNames: ["shelf-pc", "shelf-pc.local"])

    @Test(
        "On loopback, Host must be a loopback name with the port; a name that rebinds to 127.0.0.1 is refused",
        arguments: [
            ("127.0.0.1:8787", true), ("localhost:8787", true), ("LOCALHOST:8787", true), ("[::1]:8787", true),
            ("localhost.:8787", true), ("127.0.0.1:8788", false), ("127.0.0.1", false), ("evil.example:8787", false),
            ("192.168.1.5:8787", false), ("shelf-pc:8787", false), ("", false), ("127.0.0.1:", false),
        ])
    func loopbackHosts(authority: String, allowed: Bool) {
        #expect(Self.loopback.allows(authority: authority) == allowed, "\(authority)")
    }

    @Test(
        "On every address, any IP address and this machine's names are served; other names are not",
        arguments: [
            ("192.168.1.5:8787", true), ("[fd00::2]:8787", true), ("shelf-pc.local:8787", true),
            ("shelf-pc:8787", true),
            ("evil.example:8787", false), ("192.168.1.5:80", false),
        ])
    func everywhereHosts(authority: String, allowed: Bool) {
        #expect(Self.everywhere.allows(authority: authority) == allowed, "\(authority)")
    }

    @Test("On one LAN address, that address and this machine's names are served; other addresses are not")
    func oneAddressHosts() {
        let rule = HostRule(listenHost: "192.168.1.5", port: BoundPort(8787), machineNames: ["shelf-pc.local"])
        #expect(rule.allows(authority: "192.168.1.5:8787") && rule.allows(authority: "shelf-pc.local:8787"))
        #expect(rule.allows(authority: "127.0.0.1:8787"))
        #expect(!rule.allows(authority: "192.168.1.6:8787") && !rule.allows(authority: "evil.example:8787"))
    }

    @Test("A missing Host is refused; the port the server got is the one checked")
    func boundPortCounts() {
        let port = BoundPort(0)
        let rule = HostRule(listenHost: "127.0.0.1", port: port, machineNames: [])
        #expect(!rule.allows(authority: nil))
        port.set(40123)
        #expect(rule.allows(authority: "127.0.0.1:40123") && !rule.allows(authority: "127.0.0.1:0"))
    }

    @Test("Origin must be this server, scheme and port included")
    func origins() {
        #expect(Self.loopback.isSameOrigin("http://127.0.0.1:8787", authority: "127.0.0.1:8787"))
        #expect(Self.loopback.isSameOrigin("http://LOCALHOST:8787", authority: "localhost:8787"))
        #expect(!Self.loopback.isSameOrigin("http://localhost:8787", authority: "127.0.0.1:8787"))
        #expect(!Self.loopback.isSameOrigin("https://127.0.0.1:8787", authority: "127.0.0.1:8787"))
        #expect(!Self.loopback.isSameOrigin("null", authority: "127.0.0.1:8787"))
        #expect(!Self.loopback.isSameOrigin("http://evil.example", authority: "127.0.0.1:8787"))
    }

    @Test(
        "A urlencoded form's field keeps its first value; a multipart form reads the same in any chunks, a file's bytes never taken for a field"
    )
    func formFields() throws {
        #expect(LibraryPages.Fields("a=1&csrf=ab%2Bc&b=x+y&b=z")["csrf"] == "ab+c")
        #expect(LibraryPages.Fields("a=1&csrf=ab%2Bc&b=x+y&b=z")["b"] == "x y")
        let boundary = "XyZ"
        #expect(MultipartStream.boundary(of: "multipart/form-data; boundary=\"XyZ\"") == boundary)
        let body = Array(
            ("--XyZ\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n0123abcd\r\n"
                + "--XyZ\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
                + "\r\n--XyQ name=\"csrf\"\r\n\r\n--XyZ--\r\n").utf8)
        func parsed(chunk: Int) throws -> [MultipartStream.Event] {
            var reader = MultipartStream(boundary: boundary)
            var events: [MultipartStream.Event] = []
            for start in stride(from: 0, to: body.count, by: chunk) {
                events += try reader.feed(body[start..<min(body.count, start + chunk)])
            }
            #expect(reader.isComplete)
            // Bytes may arrive in any pieces: join them for comparison.
            return events.reduce(into: []) { joined, event in
                if case .bytes(let more) = event, case .bytes(let before)? = joined.last {
                    joined[joined.count - 1] = .bytes(before + more)
                } else {
                    joined.append(event)
                }
            }
        }
        let expected: [MultipartStream.Event] = [
            .part(name: "csrf", filename: nil), .bytes(Array("0123abcd".utf8)), .partEnd,
            .part(name: "photo", filename: "a.jpg"), .bytes(Array("\r\n--XyQ name=\"csrf\"\r\n".utf8)), .partEnd,
        ]
        for chunk in [1, 2, 7, body.count] { #expect(try parsed(chunk: chunk) == expected, "chunks of \(chunk)") }
    }

    @Test("Every answer's Content-Security-Policy allows this page's own script, styles and pictures only")
    func contentSecurityPolicy() {
        #expect(
            String(describing: SecurityHeadersMiddleware.policy)
                == "default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self'; "
                + "object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
    }

    @Test("A request no route takes is answered in JSON where the API serves, as text elsewhere")
    func unroutedShapes() {
        #expect(DoorMiddleware.shape(unrouted: "/api/v1/nothing-here") == .json)
        #expect(DoorMiddleware.shape(unrouted: "/metrics") == .json)
        #expect(DoorMiddleware.shape(unrouted: "/nothing-here") == .text)
        #expect(DoorMiddleware.shape(unrouted: "/apis") == .text)
    }

    @Test("Tokens compare equal only when every byte is")
    func constantTimeEquality() {
        #expect(BearerTokenMiddleware.constantTimeEquals("abc", "abc"))
        #expect(!BearerTokenMiddleware.constantTimeEquals("abc", "abd"))
        #expect(!BearerTokenMiddleware.constantTimeEquals("abc", "abcd"))
        #expect(SessionDesk.randomToken().count == 64 && SessionDesk.randomToken() != SessionDesk.randomToken())
    }

    @Test(
        "After ten wrong tokens in a minute a client's tokens are refused, until the minute has passed; other clients' are not"
    )
    func wrongTokensAreThrottled() {
        let clock = ManualClock()
        let throttle = TokenThrottle(time: clock.time, perClient: 10, window: 60)
        for _ in 0..<9 {
            throttle.recordFailure("192.168.1.9")
            clock.advance(by: .seconds(1))
        }
        clock.advance(by: .seconds(1))
        #expect(!throttle.isBlocked("192.168.1.9"))
        throttle.recordFailure("192.168.1.9")
        clock.advance(by: .seconds(1))
        #expect(throttle.isBlocked("192.168.1.9"))
        clock.advance(by: .seconds(48))
        #expect(throttle.isBlocked("192.168.1.9"))
        #expect(!throttle.isBlocked("192.168.1.7"), "another client is not locked out")
        clock.advance(by: .seconds(2))
        #expect(!throttle.isBlocked("192.168.1.9"), "the first failures have aged out")
    }

    @Test("Past the ceiling of wrong tokens from every client together, every client is refused")
    func manyClientsReachTheCeiling() {
        let clock = ManualClock()
        let throttle = TokenThrottle(time: clock.time, perClient: 10, ceiling: 100, window: 60)
        for client in 0..<20 {
            for _ in 0..<5 { throttle.recordFailure("10.0.0.\(client)") }
        }
        clock.advance(by: .seconds(1))
        #expect(throttle.isBlocked("10.0.1.1"), "100 wrong tokens from 20 clients")
        clock.advance(by: .seconds(60))
        #expect(!throttle.isBlocked("10.0.1.1"))
    }

    @Test("The table of clients stays within its bound however many addresses guess")
    func tableIsBounded() {
        let clock = ManualClock()
        let throttle = TokenThrottle(time: clock.time, perClient: 10, ceiling: 1_000_000, maxClients: 100, window: 60)
        for client in 0..<5_000 {
            throttle.recordFailure("client-\(client)")
            clock.advance(by: .milliseconds(1))
        }
        #expect(throttle.clientCount <= 100, "\(throttle.clientCount) clients kept")
        for _ in 0..<10 { throttle.recordFailure("client-4999") }
        clock.advance(by: .seconds(1))
        #expect(throttle.isBlocked("client-4999"), "the newest guesser is still counted")
    }

    @Test("An IPv6 client counts by its /64; an IPv4 one, mapped or not, by its address")
    func clientKeys() throws {
        let a = try SocketAddress(ipAddress: "2001:db8:1:2:aaaa::1", port: 1)
        let b = try SocketAddress(ipAddress: "2001:db8:1:2:bbbb::7", port: 2)
        let c = try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 3)
        #expect(TokenThrottle.client(a) == TokenThrottle.client(b))
        #expect(TokenThrottle.client(a) != TokenThrottle.client(c))
        #expect(TokenThrottle.client(try SocketAddress(ipAddress: "192.168.1.5", port: 4)) == "192.168.1.5")
        #expect(TokenThrottle.client(try SocketAddress(ipAddress: "::ffff:192.168.1.5", port: 4)) == "192.168.1.5")
    }
}
