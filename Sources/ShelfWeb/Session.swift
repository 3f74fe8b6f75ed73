import Hummingbird
import ShelfApp

/// The cookie that carries a session (`SessionDesk`): only the session's id, never readable by a script.
enum Session {
    static let cookieName = "shelfd_session"

    /// A new session and the cookie for it.
    static func create(in sessions: SessionDesk, loggedIn: Bool) throws -> (session: WebSession, cookie: Cookie) {
        let (id, session) = try sessions.open(loggedIn: loggedIn)
        // Not Secure: the page is served over plain HTTP (a Secure cookie would never come back).
        let cookie = Cookie(
            name: cookieName, value: id, maxAge: Int(SessionDesk.lifetime(loggedIn: loggedIn)), path: "/",
            secure: false, httpOnly: true, sameSite: .strict)
        return (session, cookie)
    }

    /// The cookie that makes a browser forget its session (logging out).
    static let cleared = Cookie(
        name: cookieName, value: "", maxAge: 0, path: "/", secure: false, httpOnly: true, sameSite: .strict)
}
