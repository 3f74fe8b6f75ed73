import Foundation
import ShelfApp
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Who may reach what, through the site's router: requests from no address are never from this machine, so every
/// page but the login waits for the token, a session or a login link. (The `Host` header, raw bytes on the socket
/// and a browser on loopback are tested on the binary, in ShelfdTests.)
@Suite("The web page's access, in-process")
struct AccessTests {
    static let headers = ["content-security-policy", "x-content-type-options", "referrer-policy"]

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
            #expect(try await http.send("GET", "/static/shelfd.css").status == 200)
            for answer in [api, health] {
                for name in Self.headers { #expect(answer.header(name) != nil, "\(name)") }
            }
            #expect(api.header("x-content-type-options") == "nosniff" && api.header("referrer-policy") == "no-referrer")
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
            #expect(right.cookies.first?.contains("HttpOnly") == true)
            let overview = try await http.send("GET", "/", headers: [("Cookie", cookie)])
            #expect(overview.status == 200 && overview.body.contains("<h1>Overview</h1>"))
            #expect(overview.body.contains("Log out"))

            let noCSRF = try await http.send("POST", "/logout", headers: form + [("Cookie", cookie)], body: "")
            #expect(noCSRF.status == 403, "a logout without the session's token is another site's")
            let out = try await http.send(
                "POST", "/logout", headers: form + [("Cookie", cookie)], body: "csrf=\(overview.body.csrfToken)")
            #expect(out.status == 303 && out.header("location") == "/login")
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
