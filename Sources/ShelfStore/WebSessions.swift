import Foundation
import ShelfCore
import ShelfDigest

/// The web page's sessions and one-time login codes: a concern of the store with a type of its own over the shared
/// database (`Store.webSessions`), so the web door holds this and nothing else of the store for them. They live in
/// the database (hashed), so a session outlives a restart of the daemon and `shelfd web --print-login-url` can hand
/// a code to whichever process serves the page.
package struct WebSessionStore: StoreConcern {
    let database: Store

    /// The most sessions made without logging in that are kept: any request from this machine may make one, so
    /// past this many the oldest go (their browser gets a new one at its next page), and no number of requests
    /// fills the database. A logged-in session is never dropped for them.
    package static let anonymousLimit = 1_000

    package func create(id: String, csrf: String, loggedIn: Bool, expiresAt: Date, now: Date) throws {
        try database.write { db in
            try db.execute("DELETE FROM web_session WHERE expires_at <= ?", [now])
            try db.execute(
                """
                INSERT INTO web_session (id_hash, csrf, logged_in, expires_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (id_hash) DO UPDATE SET csrf = excluded.csrf, logged_in = excluded.logged_in, expires_at = excluded.expires_at
                """, [Self.hash(id), csrf, loggedIn ? 1 : 0, expiresAt])
            if !loggedIn {
                // All anonymous sessions last as long, so the ones that expire first are the oldest.
                try db.execute(
                    """
                    DELETE FROM web_session WHERE logged_in = 0 AND id_hash IN (
                        SELECT id_hash FROM web_session WHERE logged_in = 0 ORDER BY expires_at DESC, id_hash LIMIT 1000000000 OFFSET ?)
                    """, [Self.anonymousLimit])
            }
        }
    }

    /// The session whose cookie holds `id`, unless it has expired.
    package func session(id: String, now: Date) throws -> (csrf: String, loggedIn: Bool, expiresAt: Date)? {
        try database.readStatement { db in
            guard
                let row = try db.queryOne(
                    "SELECT csrf, logged_in, expires_at FROM web_session WHERE id_hash = ? AND expires_at > ?",
                    [Self.hash(id), now]),
                let csrf = row.string("csrf"), let expires = row.date("expires_at")
            else { return nil }
            return (csrf, row.int("logged_in") == 1, expires)
        }
    }

    /// Ends the session whose cookie holds `id` (logging out).
    package func end(id: String) throws {
        try database.write { db in try db.execute("DELETE FROM web_session WHERE id_hash = ?", [Self.hash(id)]) }
    }

    package func addLoginCode(_ code: String, expiresAt: Date, now: Date) throws {
        try database.write { db in
            try db.execute("DELETE FROM web_login_code WHERE expires_at <= ?", [now])
            try db.execute(
                "INSERT INTO web_login_code (code_hash, expires_at) VALUES (?, ?)", [Self.hash(code), expiresAt])
        }
    }

    /// True once for a code that was given and has not expired: it is deleted as it is used.
    package func redeemLoginCode(_ code: String, now: Date) throws -> Bool {
        try database.write { db in
            try db.execute("DELETE FROM web_login_code WHERE code_hash = ? AND expires_at > ?", [Self.hash(code), now])
            return db.changes == 1
        }
    }

    private static func hash(_ secret: String) -> String { SHA256.hex(of: Array(secret.utf8)) }
}
