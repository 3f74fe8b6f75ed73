import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import NIOCore
import ShelfCore
import Synchronization

/// Wrong tokens, in the bearer header or the login form, counted per client: after `perClient` in a minute
/// from one address, that client's tokens are refused (429) until the minute has passed, so a token cannot be
/// guessed at network speed, and one client's guesses lock no one else out. An IPv6 client counts by its /64,
/// which one machine usually holds whole. Past `ceiling` wrong tokens in a minute from every client together,
/// every token is refused: many addresses guessing at once are slowed too. The table holds at most `maxClients`
/// addresses (the stalest go first), so guesses from many addresses cannot fill the memory. Sessions already
/// logged in go on working. Each web server has its own, counting on the daemon's date (`Desks.time`).
final class TokenThrottle: Sendable {
    static let message = "Too many wrong tokens in the last minute: wait a minute, then try again."

    private struct Failures {
        /// Each client's wrong tokens in the window, oldest first (at most `perClient`).
        var clients: [String: [Date]] = [:]
        /// Everyone's, oldest first (at most `ceiling`).
        var all: [Date] = []

        /// Drops what happened before `start`; returns the client's failures since.
        mutating func forget(before start: Date, of client: String) -> [Date] {
            all.removeFirst(all.prefix { $0 < start }.count)
            let mine = clients[client]?.filter { $0 >= start } ?? []
            clients[client] = mine.isEmpty ? nil : mine
            return mine
        }
    }

    private let failures = Mutex(Failures())
    let time: TimeSource
    let perClient: Int
    let ceiling: Int
    let maxClients: Int
    let window: TimeInterval

    init(
        time: TimeSource, perClient: Int = 10, ceiling: Int = 1_000, maxClients: Int = 4_096, window: TimeInterval = 60
    ) {
        self.time = time; self.window = window
        self.perClient = perClient; self.ceiling = ceiling; self.maxClients = maxClients
    }

    func isBlocked(_ client: String) -> Bool {
        let now = time.now
        return failures.withLock { state in
            let mine = state.forget(before: now - window, of: client)
            return mine.count >= perClient || state.all.count >= ceiling
        }
    }

    func recordFailure(_ client: String) {
        let now = time.now
        failures.withLock { state in
            var mine = state.forget(before: now - window, of: client)
            if state.all.count < ceiling { state.all.append(now) }
            if mine.isEmpty && state.clients.count >= maxClients {
                state.clients = state.clients.filter { ($0.value.last ?? .distantPast) >= now - window }
                if state.clients.count >= maxClients,
                    let stalest = state.clients.min(by: {
                        ($0.value.last ?? .distantPast) < ($1.value.last ?? .distantPast)
                    })
                {
                    state.clients[stalest.key] = nil
                }
            }
            if mine.count < perClient { mine.append(now) }
            state.clients[client] = mine
        }
    }

    /// How many clients the table holds now.
    var clientCount: Int { failures.withLock { $0.clients.count } }

    /// The client a request counts against, for wrong tokens and for `/events` streams alike: its IP address, an
    /// IPv6 one by its first 64 bits (which one machine usually holds whole).
    static func client(_ address: SocketAddress?) -> String {
        guard let ip = address?.ipAddress else { return "unknown" }
        if ip.hasPrefix("::ffff:"), ip.contains(".") { return String(ip.dropFirst("::ffff:".count)) }
        var bytes = [UInt8](repeating: 0, count: 16) // an in6_addr
        guard ip.contains(":"), inet_pton(AF_INET6, ip, &bytes) == 1 else { return ip }
        return bytes.prefix(8).map { String(format: "%02x", $0) }.joined() + "::/64"
    }
}
