import Foundation

/// A session of the web page, as its cookie finds it.
package struct WebSession: Sendable, Equatable {
    /// The CSRF token every form and script of the session sends back.
    package var csrf: String
    /// Logged in with the token or a login link: valid from any address. Otherwise valid on loopback only.
    package var loggedIn: Bool
    package var expiresAt: Date
    package init(csrf: String, loggedIn: Bool, expiresAt: Date) {
        self.csrf = csrf; self.loggedIn = loggedIn; self.expiresAt = expiresAt
    }
}
