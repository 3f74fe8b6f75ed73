import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import ShelfConfig
import ShelfCore
import ShelfStore

/// A session of the web page, as its cookie finds it.
package struct WebSession: Sendable, Equatable {
    /// The CSRF token every form and script of the session sends back.
    package var csrf: String
    /// Logged in with the token or a login link: valid from any address. Otherwise valid on loopback only.
    package var loggedIn: Bool
    package var expiresAt: Date
}

/// The web page's sessions and one-time login codes, under the `web_token` they were made with. The store keeps
/// (hashed) the secret with the token, so under another token (or none) it finds nothing, and a new token ends
/// every session. The cookie that carries a session is the web door's.
package struct SessionDesk: Sendable {
    private let sessions: WebSessionStore
    private let token: String?
    /// The date sessions and codes are made, expire and are checked at.
    private let time: TimeSource

    package init(store: Store, secrets: Secrets, time: TimeSource = .system) {
        sessions = store.webSessions
        token = secrets.webToken?.value
        self.time = time
    }

    /// A login lasts a month. A loopback session, made for any browser or script that asks for a page without
    /// a cookie, lasts a week, so a script polling `/` leaves few rows behind.
    package static func lifetime(loggedIn: Bool) -> TimeInterval { (loggedIn ? 30 : 7) * 24 * 3600 }

    /// A new session: the random id its cookie carries (only its hash is stored) and the session, with its
    /// random CSRF token.
    package func open(loggedIn: Bool) throws -> (id: String, session: WebSession) {
        let id = Self.randomToken(), csrf = Self.randomToken()
        let now = time.now, expires = now.addingTimeInterval(Self.lifetime(loggedIn: loggedIn))
        try sessions.create(id: key(id), csrf: csrf, loggedIn: loggedIn, expiresAt: expires, now: now)
        return (id, WebSession(csrf: csrf, loggedIn: loggedIn, expiresAt: expires))
    }

    /// The session whose cookie holds `id`, unless it has expired or was made under another token.
    package func session(id: String) throws -> WebSession? {
        try sessions.session(id: key(id), now: time.now).map {
            WebSession(csrf: $0.csrf, loggedIn: $0.loggedIn, expiresAt: $0.expiresAt)
        }
    }

    /// Ends the session whose cookie holds `id` (logging out).
    package func end(id: String) throws { try sessions.end(id: key(id)) }

    /// A code for a login link, valid once within `lifetime`.
    package func newLoginCode(lifetime: TimeInterval) throws -> String {
        let code = Self.randomToken()
        let now = time.now
        try sessions.addLoginCode(key(code), expiresAt: now.addingTimeInterval(lifetime), now: now)
        return code
    }

    /// True once for a code that was given and has not expired.
    package func redeem(code: String) throws -> Bool { try sessions.redeemLoginCode(key(code), now: time.now) }

    private func key(_ secret: String) -> String { token.map { secret + "\u{1F}" + $0 } ?? secret }

    /// 32 random bytes as hex: session ids, CSRF tokens, login codes.
    package static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }
}
