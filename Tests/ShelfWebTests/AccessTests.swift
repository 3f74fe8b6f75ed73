import Foundation
import ShelfApp
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing
@testable import ShelfWeb

/// Who may reach what, through the site's router: requests from no address are never from this machine, so every
/// page but the login waits for the token, a session or a login link. (The `Host` header, raw bytes on the socket
/// and a browser on loopback are tested on the binary, in ShelfdTests.)
@Suite("The web page's access, in-process")
struct AccessTests {
    @Test(
        "Without the token the API is 401 with WWW-Authenticate, a page shows the login; /healthz and styles are open")
    func closedWithoutToken() async throws {
        let site = try InProcessSite(try ShelfRoot())
        try await site.web(loggedIn: false) { http in
            let api = try await http.send("GET", "/api/v1/status")
            #expect(api.status == 401 && api.header("www-authenticate") == "Bearer")
            #expect(api.body.contains("\"unauthorized\""))
            #expect(try await http.send("GET", "/metrics").status == 401)
            for path in ["/", "/library", "/review", "/photos", "/upload", "/shelves"] {
                let page = try await http.send("GET", path)
                #expect(page.status == 401 && page.body.contains("<h1>Log in</h1>"), "\(path)")
                #expect(page.cookies.isEmpty, "no session for a stranger: \(path)")
            }
            let health = try await http.send("GET", "/healthz")
            #expect(health.status == 200 && health.body == "ok\n")
            let style = try await http.send("GET", "/static/shelfd.css")
            #expect(style.status == 200)
            let login = try await http.send("GET", "/login"), missing = try await http.send("GET", "/no-such-page")
            #expect(missing.status == 404)
            for answer in [api, health, style, login, missing] {
                #expect(answer.header("content-security-policy") == "\(SecurityHeadersMiddleware.policy)")
                #expect(answer.header("x-content-type-options") == "nosniff")
                #expect(answer.header("referrer-policy") == "no-referrer")
            }
        }
    }

    @Test("A wrong token at the login is refused; the right one opens the pages, and logging out with its CSRF ends it")
    func loginAndLogout() async throws {
        let root = try ShelfRoot()
        root.environment["WEB_TOKEN"] = "login-\(UUID().uuidString)"
        let token = root.environment["WEB_TOKEN"]!
        let site = try InProcessSite(root)
        try await site.web(loggedIn: false) { http in
            let form = [("Content-Type", "application/x-www-form-urlencoded")]
            let wrong = try await http.send("POST", "/login", headers: form, body: "token=not-it")
            #expect(wrong.status == 401 && wrong.body.contains("That is not the token.") && wrong.cookies.isEmpty)

            let right = try await http.send("POST", "/login", headers: form, body: "token=\(formEncoded(token))")
            #expect(right.status == 303)
            let cookie = try #require(right.cookiePair)
            let set = try #require(right.cookies.first)
            #expect(set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Path=/"), "\(set)")
            #expect(!set.contains("Secure"), "plain HTTP: a Secure cookie would never come back")
            let overview = try await http.send("GET", "/", headers: [("Cookie", cookie)])
            #expect(overview.status == 200 && overview.body.contains("<h1>Overview</h1>"))
            #expect(overview.body.contains("Log out"))

            let noCSRF = try await http.send("POST", "/logout", headers: form + [("Cookie", cookie)], body: "csrf=")
            #expect(noCSRF.status == 403, "a logout without the session's token is another site's")
            #expect(
                try await http.send("GET", "/", headers: [("Cookie", cookie)]).status == 200,
                "a refused logout leaves the session")
            let out = try await http.send(
                "POST", "/logout", headers: form + [("Cookie", cookie)], body: "csrf=\(overview.body.csrfToken)")
            #expect(out.status == 303 && out.header("location") == "/login")
            let cleared = try #require(out.cookies.first)
            #expect(cleared.hasPrefix("shelfd_session=;") && cleared.contains("Max-Age=0"), "\(cleared)")
            #expect(try await http.send("GET", "/", headers: [("Cookie", cookie)]).status == 401, "the session ended")
        }
    }

    @Test("A login link works once, within its lifetime, and gives a session")
    func loginLinkOnce() async throws {
        let site = try InProcessSite(try ShelfRoot())
        let code = try site.desks.sessions.newLoginCode(lifetime: 600)
        try await site.web(loggedIn: false) { http in
            let first = try await http.send("GET", "/login/\(code)")
            #expect(first.status == 303)
            let cookie = try #require(first.cookiePair)
            #expect(try await http.send("GET", "/library", headers: [("Cookie", cookie)]).status == 200)
            let again = try await http.send("GET", "/login/\(code)")
            #expect(again.status == 401 && again.body.contains("used already or has expired"))
            #expect(try await http.send("GET", "/login/not-a-code").status == 401)
        }
    }

    @Test("The bearer token opens the API; ten wrong tokens in a minute shut out even the right one, for that minute")
    func wrongTokensAreThrottled() async throws {
        let clock = ManualClock()
        let root = try ShelfRoot()
        root.environment["WEB_TOKEN"] = "bearer-\(UUID().uuidString)"
        let token = root.environment["WEB_TOKEN"]!
        let site = try InProcessSite(root, time: clock.time)
        try await site.web(loggedIn: false) { http in
            func status(_ sent: String) async throws -> Int {
                try await http.send("GET", "/api/v1/status", headers: [("Authorization", "Bearer \(sent)")]).status
            }
            #expect(try await status(token) == 200)
            for _ in 0..<10 { #expect(try await status("guess") == 401) }
            let blocked = try await http.send(
                "GET", "/api/v1/status", headers: [("Authorization", "Bearer \(token)")])
            #expect(blocked.status == 429 && blocked.body.contains("too_many_wrong_tokens"))
            clock.advance(by: .seconds(61))
            #expect(try await status(token) == 200, "a minute later")
        }
    }

    @Test("A change sent without the session's CSRF token, or from another site, is refused and changes nothing")
    func changesNeedTheSessionsToken() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 73), as: "den/IMG_73.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            let item = try #require(try site.desks.review.items().first)
            try await site.web { http in
                let (cookie, csrf) = try await http.session(from: "/review/\(item.id)")
                let form = [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", cookie)]
                let none = try await http.send("POST", "/review/\(item.id)", headers: form, body: "action=reject")
                #expect(none.status == 403 && none.body.contains("out of date"))
                let elsewhere = try await http.send(
                    "POST", "/review/\(item.id)", headers: form + [("Origin", "http://evil.example")],
                    body: "action=reject&csrf=\(csrf)")
                #expect(elsewhere.status == 403)
                #expect(try site.desks.review.items().map(\.id) == [item.id], "nothing decided")

                let header = try await http.send(
                    "POST", "/review/\(item.id)", headers: form + [("X-CSRF-Token", csrf)], body: "action=reject")
                #expect(header.status == 303, "the token in a header, as the page's script sends it")
                #expect(try site.desks.review.items().isEmpty)
            }
        }
    }

    @Test("A POST without the session's CSRF token is refused; with it, in a header or a form field, it goes through")
    func postsNeedTheCSRFToken() async throws {
        let site = try InProcessSite(try ShelfRoot())
        let (id, session) = try site.desks.sessions.open(loggedIn: true)
        let cookie = "shelfd_session=\(id)", csrf = session.csrf
        #expect(csrf.count == 64)
        let other = "shelfd_session=\(try site.desks.sessions.open(loggedIn: true).id)"
        let json = ("Content-Type", "application/json"), body = #"{"decision":"reject"}"#
        try await site.web(loggedIn: false) { http in
            func post(_ headers: [(String, String)], _ sent: String? = nil) async throws -> WebAnswer {
                try await http.send("POST", "/api/v1/review/abcd", headers: headers, body: sent ?? body)
            }
            #expect(try await post([json]).status == 401, "no session: not past the login")
            #expect(try await post([("Cookie", cookie), json]).status == 403)
            #expect(
                try await post([("Cookie", cookie), ("X-CSRF-Token", String(repeating: "0", count: 64)), json]).status
                    == 403)
            #expect(
                try await post([("Cookie", other), ("X-CSRF-Token", csrf), json]).status == 403, "another session's")
            // Through the door (the item does not exist: 404 from the API, not 403 from the door).
            let passed = try await post([("Cookie", cookie), ("X-CSRF-Token", csrf), json])
            #expect(passed.status == 404 && passed.body.contains("\"not_found\""), "\(passed.status) \(passed.body)")
            // Past the door, the API finds no JSON in a form: 400 from the route, not 403 from the door.
            let form = try await post(
                [("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded")],
                "csrf=\(csrf)&verdict=reject")
            #expect(
                form.status == 400 && form.body.contains("\"bad_request\""),
                "the form field counts as the header does: \(form.status)")
            let boundary = "----shelfd\(UUID().uuidString.prefix(8))"
            let parts = try await post(
                [("Cookie", cookie), ("Content-Type", "multipart/form-data; boundary=\(boundary)")],
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(csrf)\r\n--\(boundary)--\r\n")
            #expect(
                parts.status == 400 && parts.body.contains("\"bad_request\""),
                "a multipart form's csrf field counts too: \(parts.status)")
            // A page of another site cannot post here even with a stolen token.
            let passing = [("Cookie", cookie), ("X-CSRF-Token", csrf), json]
            #expect(try await post(passing + [("Origin", "http://evil.example")]).status == 403)
            #expect(try await post(passing + [("Origin", "http://localhost")]).status == 404)
            for headers in [
                [("Sec-Fetch-Site", "cross-site")], [("Sec-Fetch-Site", "same-site")],
                [("Origin", "null"), ("Sec-Fetch-Site", "cross-site")],
            ] {
                #expect(try await post(passing + headers).status == 403, "\(headers)")
            }
            // A form of this page, under no-referrer: the browser says `Origin: null` (and over plain HTTP to a LAN
            // address, no Sec-Fetch-Site); the CSRF token decides.
            #expect(try await post(passing + [("Origin", "null"), ("Sec-Fetch-Site", "same-origin")]).status == 404)
            #expect(try await post(passing + [("Origin", "null")]).status == 404)
            #expect(try await post([("Cookie", cookie), json, ("Origin", "null")]).status == 403)
        }
    }

    @Test("A session and a login link outlive a restart under the same token, and end under a new one")
    func newTokenEndsSessions() async throws {
        let root = try ShelfRoot()
        let before = try InProcessSite(root)
        let cookie = try await before.web { http in try await http.session(from: "/").cookie }
        let links = try (0..<2).map { _ in "/login/" + (try before.desks.sessions.newLoginCode(lifetime: 600)) }

        try await InProcessSite(root).web(loggedIn: false) { http in
            let page = try await http.send("GET", "/", headers: [("Cookie", cookie)])
            #expect(page.status == 200, "the same token: the session goes on")
            #expect(try await http.send("GET", links[0]).status == 303, "the same token: the link works")
        }
        root.environment["WEB_TOKEN"] = "new-\(UUID().uuidString)-token"
        try await InProcessSite(root).web(loggedIn: false) { http in
            let after = try await http.send("GET", "/", headers: [("Cookie", cookie)])
            #expect(
                after.status == 401 && after.body.contains("name=\"token\""),
                "a new token: the old session is over (\(after.status))")
            #expect(try await http.send("GET", links[1]).status == 401, "a new token: the old link is no good")
        }
    }

    @Test("The stylesheet and script are served to anyone with their types; nothing else under /static is")
    func staticFiles() async throws {
        let site = try InProcessSite(try ShelfRoot())
        try await site.web(loggedIn: false) { http in
            let script = try await http.send("GET", "/static/shelfd.js")
            #expect(script.status == 200 && script.header("content-type") == "text/javascript; charset=utf-8")
            #expect(!script.body.isEmpty && script.cookies.isEmpty)
            let style = try await http.send("GET", "/static/shelfd.css")
            #expect(style.header("content-type")?.hasPrefix("text/css") == true)
            #expect(try await http.send("GET", "/static/shelfd.db").status == 404)
        }
    }
}
