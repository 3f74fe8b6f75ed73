import Foundation
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Logging in from another machine, in a real browser: the token form on a phone, the overview after it, a session
/// cookie no script can read, and the page's own script working under the Content-Security-Policy.
@Suite("Logging in to the web page, in a browser", .serialized)
struct WebLoginBrowserTests {
    @Test(
        "A phone beyond loopback logs in with the token; its cookie is out of scripts' reach; a POST needs the CSRF token",
        .timeLimit(.minutes(3)))
    func phoneLogsIn() async throws {
        let token = "browser-\(UUID().uuidString)"
        let shelf = try ShelfRoot(overrides: ["web": ["listen": "\"0.0.0.0:0\""]])
        shelf.environment["WEB_TOKEN"] = token
        let server = try shelf.startWeb()
        let port = RawHTTP(url: try await shelf.webURL()).port
        let address = try #require(WebSecurityTests.networkAddress(), "this machine has no address beyond loopback")
        let site = "http://\(address):\(port)"

        try await withBrowser(viewport: .phone) { browser in
            try await browser.navigate(to: site + "/")
            let field = try await browser.waitForElement("input[name=token]")
            #expect(try await browser.find("h1").text() == "Log in")
            #expect(try await !browser.pageWidth().overflows)
            try await browser.screenshot("login")

            try await field.sendKeys(token)
            try await browser.find("form[action='/login'] button").click()
            try await browser.waitUntil("the overview after logging in") {
                (try? await browser.find("h1").text()) == "Overview"
            }
            #expect(try await browser.execute("return document.cookie").string == "", "the session cookie is HttpOnly")
            #expect(try await !browser.source().contains(token), "the token is not in the page")

            let withoutCSRF = try await browser.execute(
                """
                return fetch('/api/v1/review/abcd', {method: 'POST', headers: {'Content-Type': 'application/json'},
                    body: '{"decision": "reject"}'}).then((r) => r.status)
                """)
            #expect(withoutCSRF.int == 403)
            let withCSRF = try await browser.execute(
                """
                const token = document.querySelector('meta[name="csrf-token"]').content;
                return fetch('/api/v1/review/abcd', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': token},
                    body: '{"decision": "reject"}'}).then((r) => r.status)
                """)
            #expect(withCSRF.int == 404, "past the door; there is no such item")
            let violations = try await browser.consoleMessages().filter {
                $0.message.contains("Content Security Policy")
            }
            #expect(violations.isEmpty, "\(violations.map(\.message))")
        }
        #expect(try await server.stop() == 0)
        #expect(!server.logText.contains(token))
    }
}
