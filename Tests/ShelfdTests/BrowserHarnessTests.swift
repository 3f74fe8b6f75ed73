import Foundation
import Glibc
import ShelfTesting
import Testing

/// The WebDriver harness the web page tests use, proved on small static pages served on loopback.
@Suite("Browser harness")
struct BrowserHarnessTests {
    /// Pages as the real ones will be: scripts only from files (the CSP forbids inline ones), a viewport meta.
    static let site: [String: (type: String, body: [UInt8])] = [
        "/index.html": (
            "text/html; charset=utf-8",
            Array(
                """
                <!doctype html>
                <html lang="en"><head><meta charset="utf-8">
                <meta name="viewport" content="width=device-width, initial-scale=1">
                <title>Harness page</title>
                <script type="module" src="/page.js"></script>
                </head><body>
                <h1>A shelf</h1>
                <img id="cover" src="/cover.jpg" alt="A shelf" style="max-width: 100%">
                <p><input id="name" aria-label="Title"></p>
                <p>Keys: <span id="keys"></span></p>
                <p><input id="photo" type="file" accept="image/*"></p>
                <p id="chosen"></p>
                </body></html>
                """.utf8)
        ),
        "/page.js": (
            "text/javascript; charset=utf-8",
            Array(
                """
                const keys = document.getElementById('keys');
                document.addEventListener('keydown', (event) => {
                    if (event.target.id !== 'name') keys.textContent += event.key;
                });
                document.getElementById('photo').addEventListener('change', (event) => {
                    document.getElementById('chosen').textContent =
                        [...event.target.files].map((file) => `${file.name} (${file.size} bytes)`).join(', ');
                });
                """.utf8)
        ),
        "/cover.jpg": ("image/jpeg", JPEGFactory.shelf(width: 320, height: 240)),
        "/wide.html": (
            "text/html; charset=utf-8",
            Array(
                """
                <!doctype html>
                <html lang="en"><head><meta charset="utf-8">
                <meta name="viewport" content="width=device-width, initial-scale=1"><title>Too wide</title></head>
                <body><table style="width: 1200px"><tr><td>A table as wide as a desktop</td></tr></table></body></html>
                """.utf8)
        ),
        "/inline.html": (
            "text/html; charset=utf-8",
            Array(
                """
                <!doctype html>
                <html lang="en"><head><meta charset="utf-8"><title>Not run</title></head>
                <body><script>document.title = 'Ran';</script></body></html>
                """.utf8)
        ),
    ]

    /// Runs `body` with the site served on loopback; every answer carries the CSP the real pages will.
    func withSite(_ body: (String) async throws -> Void) async throws {
        let server = HTTPServer { request in
            guard let file = Self.site[request.path] else { return .init(status: 404, text: "not found") }
            return .init(
                headers: [("Content-Type", file.type), ("Content-Security-Policy", "script-src 'self'")],
                body: file.body)
        }
        try server.start()
        defer { server.stop() }
        try await body(server.baseURL)
    }

    @Test("An image really loads, key presses reach the page, typed text lands in an input")
    func imageKeysAndTyping() async throws {
        try await withSite { site in
            try await withBrowser { browser in
                try await browser.navigate(to: site + "/index.html")
                #expect(try await browser.title() == "Harness page")
                #expect(try await browser.currentURL() == site + "/index.html")
                let cover = try await browser.find("#cover")
                try await browser.waitUntil("the cover image to load") {
                    try await cover.property("complete") == true
                }
                #expect(try await cover.property("naturalWidth").int == 320)
                #expect(try await cover.attribute("alt") == "A shelf")

                try await browser.pressKeys("1a")
                try await browser.waitUntil("the page to record the keys") {
                    try await browser.find("#keys").text() == "1a"
                }

                let name = try await browser.find("#name")
                try await name.sendKeys("Dune")
                #expect(try await name.property("value") == "Dune")
                #expect(try await browser.find("#keys").text() == "1a", "keys typed into an input are the input's")
            }
        }
    }

    @Test("A file chosen through the file input reaches the page")
    func fileInput() async throws {
        try await withTemporaryDirectory { folder in
            let photo = try writeFakePhoto("spine.jpg", in: folder, bytes: 4096)
            try await withSite { site in
                try await withBrowser { browser in
                    try await browser.navigate(to: site + "/index.html")
                    let input = try await browser.find("#photo")
                    try await input.upload(photo)
                    try await browser.waitUntil("the page to show the chosen file") {
                        try await browser.find("#chosen").text() == "spine.jpg (4096 bytes)"
                    }
                    let count = try await browser.execute("return arguments[0].files.length", input.reference)
                    #expect(count == 1)
                }
            }
        }
    }

    @Test("On a phone a responsive page fits the width, and a page with a 1200 px table does not")
    func phoneWidth() async throws {
        try await withSite { site in
            try await withBrowser(viewport: .phone) { browser in
                try await browser.navigate(to: site + "/index.html")
                #expect(try await browser.execute("return [innerWidth, devicePixelRatio]") == [390, 2])
                let fits = try await browser.pageWidth()
                #expect(fits.viewportWidth == 390)
                #expect(!fits.overflows, "\(fits)")
                try await browser.screenshot("harness-phone")

                try await browser.navigate(to: site + "/wide.html")
                let wide = try await browser.pageWidth()
                #expect(wide.overflows, "\(wide)")
                #expect(wide.scrollWidth >= 1200)

                try await browser.setViewport(.desktop)
                try await browser.navigate(to: site + "/index.html")
                #expect(try await browser.execute("return innerWidth") == 1280)
            }
        }
    }

    @Test("A screenshot is a PNG written to the screenshot folder")
    func screenshot() async throws {
        try await withSite { site in
            try await withBrowser { browser in
                try await browser.navigate(to: site + "/index.html")
                let url = try await browser.screenshot("harness-desktop")
                #expect(
                    url.deletingLastPathComponent().standardizedFileURL.path
                        == Browser.screenshotDirectory.standardizedFileURL.path)
                let png = try Data(contentsOf: url)
                #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
                #expect(png.count > 1000)
            }
        }
    }

    @Test("An inline script is refused by the Content-Security-Policy, and the console says so")
    func inlineScriptRefused() async throws {
        try await withSite { site in
            try await withBrowser { browser in
                try await browser.navigate(to: site + "/inline.html")
                #expect(try await browser.title() == "Not run")
                let console = try await browser.consoleMessages()
                #expect(
                    console.contains { $0.level == "SEVERE" && $0.message.contains("Content Security Policy") },
                    "\(console)")
            }
        }
    }

    @Test("Closing the browser leaves no Chromium or chromedriver running, also when the test body throws")
    func noProcessLeft() async throws {
        struct Failure: Error {}
        var profile = ""
        var driver: Int32 = 0
        await #expect(throws: Failure.self) {
            try await withBrowser { browser in
                profile = browser.profile.path
                driver = browser.driverProcessID
                try await browser.navigate(to: "about:blank")
                #expect(!Browser.processes(mentioning: profile).isEmpty, "the check finds a running browser")
                throw Failure()
            }
        }
        #expect(!profile.isEmpty)
        #expect(Browser.processes(mentioning: profile).isEmpty)
        #expect(kill(driver, 0) != 0 || Self.isZombie(driver), "chromedriver \(driver) has exited")
        #expect(!FileManager.default.fileExists(atPath: profile), "the temporary profile is removed")
    }

    @Test("Waiting for what never happens fails at its deadline and names what was awaited")
    func waitTimesOut() async throws {
        try await withSite { site in
            try await withBrowser { browser in
                try await browser.navigate(to: site + "/index.html")
                let error = try await #require(throws: BrowserError.self) {
                    try await browser.waitForElement("#never", timeout: .milliseconds(300))
                }
                #expect(error.code == .timedOut)
                #expect(error.message.contains("#never"))
                let missing = try await #require(throws: BrowserError.self) { try await browser.find("#never") }
                #expect(missing.code == .noSuchElement)
            }
        }
    }

    @Test("A missing browser is reported with the script that installs it")
    func notInstalled() throws {
        let error = try #require(throws: BrowserError.self) {
            try BrowserInstallation.find(
                "chromedriver", names: ["chromedriver-not-installed"],
                override: "SHELFD_TEST_UNSET_CHROMEDRIVER")
        }
        #expect(error.code == .notInstalled)
        #expect(error.message.contains("scripts/install-deps.sh"))
    }

    static func isZombie(_ pid: Int32) -> Bool {
        guard let stat = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return false }
        return String(decoding: stat, as: UTF8.self).split(separator: ")").last?.trimmingCharacters(in: .whitespaces)
            .first == "Z"
    }
}
