import Foundation
import ShelfDigest

/// A session of the web page, as its cookie finds it.
package struct WebSession: Sendable, Equatable {
    /// The CSRF token every form and script of the session sends back.
    package var csrf: String
    /// Logged in with the token or a login link: valid from any address. Otherwise valid on loopback only.
    package var loggedIn: Bool
    package var expiresAt: Date
    package init(csrf: String, loggedIn: Bool, expiresAt: Date) { self.csrf = csrf; self.loggedIn = loggedIn; self.expiresAt = expiresAt }
}

/// Sessions and one-time login codes live in the database (hashed), so a session outlives a restart of the
/// daemon and `shelfd web --print-login-url` can hand a code to whichever process serves the page.
extension Store {
    /// The most sessions made without logging in that are kept: any request from this machine may make one, so
    /// past this many the oldest go (their browser gets a new one at its next page), and no number of requests
    /// fills the database. A logged-in session is never dropped for them.
    package static let anonymousWebSessionLimit = 1_000

    package func createWebSession(id: String, csrf: String, loggedIn: Bool, expiresAt: Date, now: Date = Date()) throws {
        try write { db in
            try db.execute("DELETE FROM web_session WHERE expires_at <= ?", [now])
            try db.execute("""
                INSERT INTO web_session (id_hash, csrf, logged_in, expires_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (id_hash) DO UPDATE SET csrf = excluded.csrf, logged_in = excluded.logged_in, expires_at = excluded.expires_at
                """, [Self.hash(id), csrf, loggedIn ? 1 : 0, expiresAt])
            if !loggedIn {
                // All anonymous sessions last as long, so the ones that expire first are the oldest.
                try db.execute("""
                    DELETE FROM web_session WHERE logged_in = 0 AND id_hash IN (
                        SELECT id_hash FROM web_session WHERE logged_in = 0 ORDER BY expires_at DESC, id_hash LIMIT 1000000000 OFFSET ?)
                    """, [Self.anonymousWebSessionLimit])
            }
        }
    }

    /// The session whose cookie holds `id`, unless it has expired.
    package func webSession(id: String, now: Date = Date()) throws -> WebSession? {
        try readStatement { db in
            guard let row = try db.queryOne("SELECT csrf, logged_in, expires_at FROM web_session WHERE id_hash = ? AND expires_at > ?",
                                            [Self.hash(id), now]),
                  let csrf = row.string("csrf"), let expires = row.date("expires_at") else { return nil }
            return WebSession(csrf: csrf, loggedIn: row.int("logged_in") == 1, expiresAt: expires)
        }
    }

    /// Ends the session whose cookie holds `id` (logging out).
    package func deleteWebSession(id: String) throws {
        try write { db in try db.execute("DELETE FROM web_session WHERE id_hash = ?", [Self.hash(id)]) }
    }

    package func addWebLoginCode(_ code: String, expiresAt: Date, now: Date = Date()) throws {
        try write { db in
            try db.execute("DELETE FROM web_login_code WHERE expires_at <= ?", [now])
            try db.execute("INSERT INTO web_login_code (code_hash, expires_at) VALUES (?, ?)", [Self.hash(code), expiresAt])
        }
    }

    /// True once for a code that was given and has not expired: it is deleted as it is used.
    package func redeemWebLoginCode(_ code: String, now: Date = Date()) throws -> Bool {
        try write { db in
            try db.execute("DELETE FROM web_login_code WHERE code_hash = ? AND expires_at > ?", [Self.hash(code), now])
            return db.changes == 1
        }
    }

    /// Sets `key` to "" when it still holds `value` (another server may have written its own since).
    package func clearSetting(_ key: String, ifValue value: String) throws {
        try write { db in try db.execute("UPDATE setting SET value = '' WHERE key = ? AND value = ?", [key, value]) }
    }

    private static func hash(_ secret: String) -> String { SHA256.hex(of: Array(secret.utf8)) }
}

/// What `/metrics` reads at scrape time: the facts the daemon already keeps, so `shelfd web` alone reports the same.
extension Store {
    /// True when the database answers a query (`/healthz`).
    package func isAnswering() -> Bool {
        (try? read { db in try db.queryOne("SELECT 1 AS one")?.int("one") }) == 1
    }

    /// Every provider request ever recorded, by provider and outcome (`ok`, `quota`, `server_error`, …).
    package func requestCounts() throws -> [(provider: String, outcome: String, count: Int)] {
        try readStatement { db in
            try db.query("SELECT provider, outcome, COUNT(*) AS n FROM request GROUP BY provider, outcome ORDER BY provider, outcome")
                .map { ($0.string("provider") ?? "", $0.string("outcome") ?? "", Int($0.int("n") ?? 0)) }
        }
    }

    /// The latency of every answered request, by provider, in milliseconds (counted per distinct value).
    package func answeredLatencies() throws -> [(provider: String, latencyMs: Int, count: Int)] {
        try readStatement { db in
            try db.query("""
                SELECT provider, latency_ms, COUNT(*) AS n FROM request WHERE outcome = 'ok' GROUP BY provider, latency_ms
                """).map { ($0.string("provider") ?? "", Int($0.int("latency_ms") ?? 0), Int($0.int("n") ?? 0)) }
        }
    }
}
