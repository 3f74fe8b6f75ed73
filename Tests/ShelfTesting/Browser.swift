import Foundation
import Glibc
import ShelfHTTP
import Synchronization

/// Runs `body` with a headless Chromium driven over WebDriver, and closes it afterwards whether `body` throws
/// or not: the session is quit, chromedriver stopped, and any browser process still using the temporary
/// profile killed, so no test leaves a browser behind. When `body` throws, the page is saved first as
/// `failure-<time>.png` in `Browser.screenshotDirectory`.
///
/// Needs Debian's `chromium` and `chromium-driver` (scripts/install-deps.sh installs them); without them it
/// throws `BrowserError` with code `.notInstalled`. `SHELFD_CHROMIUM` and `SHELFD_CHROMEDRIVER` name other binaries.
package func withBrowser<T>(
    viewport: Viewport = .desktop,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (Browser) async throws -> T
) async throws -> T {
    let chromium = try BrowserInstallation.find(
        "Chromium", names: ["chromium", "chromium-browser", "google-chrome"], override: "SHELFD_CHROMIUM")
    let chromedriver = try BrowserInstallation.find(
        "chromedriver", names: ["chromedriver"], extra: ["/usr/lib/chromium/chromedriver"],
        override: "SHELFD_CHROMEDRIVER")
    return try await withTemporaryDirectory { directory in
        let client = HTTPClient(maxConcurrent: 2)
        let profile = directory.appendingPathComponent("profile", isDirectory: true)
        let driver = try await ChromeDriver.start(
            chromedriver, log: directory.appendingPathComponent("chromedriver.log"),
            client: client)
        defer {
            driver.stop()
            Browser.killProcesses(mentioning: profile.path)
        }
        let browser = try await Browser(
            driverURL: driver.baseURL, driverProcessID: driver.processID, chromium: chromium,
            profile: profile, viewport: viewport, client: client)
        do {
            let result = try await body(browser)
            await browser.quit()
            return result
        } catch {
            // What the page looked like when the test failed, beside the test run's other screenshots.
            _ = try? await browser.screenshot("failure-" + ISO8601DateFormatter().string(from: Date()))
            await browser.quit()
            throw error
        }
    }
}

/// What the page is shown on: its size in CSS pixels and whether it is a phone. Applied through Chrome's
/// device emulation, so `innerWidth` is exactly `width` (a headless window cannot be narrower than 500).
package struct Viewport: Sendable, Equatable {
    package var width: Int
    package var height: Int
    /// A phone: `<meta name="viewport">` applies (a page without one is laid out 980 pixels wide and shrunk,
    /// as on a real phone), touch events are on.
    package var mobile: Bool
    /// Device pixels per CSS pixel: a screenshot is `width × scale` pixels wide.
    package var scale: Double

    package init(width: Int, height: Int, mobile: Bool = false, scale: Double = 1) {
        self.width = width; self.height = height; self.mobile = mobile; self.scale = scale
    }

    package static let desktop = Viewport(width: 1280, height: 900)
    /// An iPhone 12–15 sized phone.
    package static let phone = Viewport(width: 390, height: 844, mobile: true, scale: 2)
}

/// The page's width against the viewport's: `overflows` means a person would scroll sideways.
package struct PageWidth: Sendable, Equatable, CustomStringConvertible {
    /// `document.documentElement.scrollWidth`: the widest the laid-out page reaches.
    package var scrollWidth: Int
    /// The viewport's width in CSS pixels, as set (on a phone, the device's width).
    package var viewportWidth: Int
    package var overflows: Bool { scrollWidth > viewportWidth }
    package var description: String { "page \(scrollWidth) px wide in a \(viewportWidth) px viewport" }
}

/// One line of the browser's console (errors, warnings, `console.log`, CSP violations).
package struct ConsoleMessage: Sendable, Equatable {
    /// "SEVERE", "WARNING", "INFO", "DEBUG".
    package var level: String
    package var message: String
}

package struct BrowserError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        /// Chromium or chromedriver is missing: run scripts/install-deps.sh.
        case notInstalled = "not_installed"
        /// chromedriver did not start or stopped answering.
        case driverFailed = "driver_failed"
        /// No element matched the CSS selector.
        case noSuchElement = "no_such_element"
        /// A `waitFor`/`waitUntil` condition did not hold before its deadline.
        case timedOut = "timed_out"
        /// Any other WebDriver error; `webDriverError` has its name.
        case webDriver = "webdriver"
    }

    package var code: Code
    package var message: String
    /// WebDriver's name for the error ("no such element", "unexpected alert open", "javascript error", …).
    package var webDriverError: String?

    package init(_ code: Code, _ message: String, webDriverError: String? = nil) {
        self.code = code; self.message = message; self.webDriverError = webDriverError
    }

    package var description: String { "\(code.rawValue): \(message)" }
}

/// A headless Chromium session. Get one from `withBrowser`; every method is one or a few WebDriver commands.
package final class Browser: Sendable {
    /// WebDriver's key for an element reference in JSON.
    static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    /// Keys `pressKeys` and `Element.sendKeys` understand besides plain characters.
    package enum Key {
        package static let enter = "\u{E007}"
        package static let escape = "\u{E00C}"
        package static let tab = "\u{E004}"
        package static let backspace = "\u{E003}"
        package static let arrowLeft = "\u{E012}"
        package static let arrowUp = "\u{E013}"
        package static let arrowRight = "\u{E014}"
        package static let arrowDown = "\u{E015}"
    }

    private let client: HTTPClient
    private let sessionURL: String
    private let currentViewport: Mutex<Viewport>
    /// The temporary Chromium profile (`--user-data-dir`); removed when the browser closes.
    package let profile: URL
    /// chromedriver's process id; it has exited once `withBrowser` returns.
    package let driverProcessID: Int32

    fileprivate init(
        driverURL: String, driverProcessID: Int32, chromium: URL, profile: URL, viewport: Viewport,
        client: HTTPClient
    ) async throws {
        self.client = client
        self.profile = profile
        self.driverProcessID = driverProcessID
        currentViewport = Mutex(viewport)
        // No test touches the network: nothing in the background (updates, safe browsing, sync, metrics), and no
        // host but this machine's resolves, since with all of that off Chromium still looked up accounts.google.com
        // and clients2.google.com.
        let ownHosts = (["localhost", "127.0.0.1"] + HostAddresses.ipv4).map { "EXCLUDE \($0)" }
        let arguments: [JSONValue] = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            .string("--user-data-dir=\(profile.path)"),
            .string("--window-size=\(max(viewport.width, 1280)),\(max(viewport.height, 900))"),
            "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update", "--disable-domain-reliability",
            "--disable-client-side-phishing-detection", "--no-pings", "--lang=en-US",
            .string("--host-resolver-rules=" + (["MAP * ~NOTFOUND"] + ownHosts).joined(separator: ", ")),
        ]
        let capabilities: JSONValue = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": ["binary": .string(chromium.path), "args": .array(arguments)],
                    "goog:loggingPrefs": ["browser": "ALL"],
                ]
            ]
        ]
        let session = try await webDriverCall(
            client, "POST", driverURL, "/session", capabilities, timeout: .seconds(60))
        guard let id = session["sessionId"]?.string else {
            throw BrowserError(.driverFailed, "chromedriver created a session without an id: \(session)")
        }
        sessionURL = driverURL + "/session/" + id
        try await setViewport(viewport)
    }

    /// Ends the session (Chromium exits). Errors are ignored: the driver is stopped next anyway.
    fileprivate func quit() async {
        _ = try? await webDriverCall(client, "DELETE", sessionURL, "", nil, timeout: .seconds(20))
    }

    // MARK: Page

    /// Loads `url` and returns once the page's `load` event has fired.
    package func navigate(to url: String) async throws { try await send("POST", "/url", ["url": .string(url)]) }

    package func currentURL() async throws -> String { try await send("GET", "/url").string ?? "" }

    package func title() async throws -> String { try await send("GET", "/title").string ?? "" }

    /// The page's HTML as it is now (after scripts changed it).
    package func source() async throws -> String { try await send("GET", "/source").string ?? "" }

    package func back() async throws { try await send("POST", "/back", [:]) }

    package func refresh() async throws { try await send("POST", "/refresh", [:]) }

    /// The first element matching the CSS selector; throws `.noSuchElement` if none does.
    package func find(_ css: String) async throws -> Element {
        try await Element(id: elementID(send("POST", "/element", Self.locator(css)), css), browser: self)
    }

    /// Every element matching the CSS selector, in document order; empty if none.
    package func findAll(_ css: String) async throws -> [Element] {
        let found = try await send("POST", "/elements", Self.locator(css))
        return try (found.array ?? []).map { try Element(id: elementID($0, css), browser: self) }
    }

    /// Presses and releases each key in turn, as typed on the keyboard, into whatever has focus (the page's
    /// body if nothing does): `pressKeys("1")`, `pressKeys("a")`, `pressKeys(Browser.Key.escape)`.
    package func pressKeys(_ keys: String) async throws {
        let strokes: [JSONValue] = keys.flatMap { key -> [JSONValue] in
            [["type": "keyDown", "value": .string(String(key))], ["type": "keyUp", "value": .string(String(key))]]
        }
        try await send(
            "POST", "/actions", ["actions": [["type": "key", "id": "keyboard", "actions": .array(strokes)]]])
    }

    /// Runs `script` as a function body in the page (`return …` gives the result; `arguments[0]`… are the
    /// arguments, an `Element.reference` becomes the element) and returns its result as JSON.
    @discardableResult
    package func execute(_ script: String, _ arguments: JSONValue...) async throws -> JSONValue {
        try await send("POST", "/execute/sync", ["script": .string(script), "args": .array(arguments)])
    }

    /// The text of an open `alert`/`confirm`, or nil when none is open.
    package func alertText() async throws -> String? {
        do { return try await send("GET", "/alert/text").string } catch let error as BrowserError
            where error.webDriverError == "no such alert"
        { return nil }
    }

    package func dismissAlert() async throws { try await send("POST", "/alert/dismiss", [:]) }

    /// The console's lines since the last call (a CSP violation is a "SEVERE" line naming Content Security Policy).
    package func consoleMessages() async throws -> [ConsoleMessage] {
        let entries = try await send("POST", "/se/log", ["type": "browser"])
        return (entries.array ?? []).map {
            ConsoleMessage(level: $0["level"]?.string ?? "", message: $0["message"]?.string ?? "")
        }
    }

    /// The errors in the console since the last call (a missing favicon aside): a script's, a refused load's, the CSP's.
    package func severeErrors() async throws -> [ConsoleMessage] {
        try await consoleMessages().filter { $0.level == "SEVERE" && !$0.message.contains("favicon") }
    }

    // MARK: Viewport and screenshots

    package var viewport: Viewport { currentViewport.withLock { $0 } }

    /// Resizes the viewport (and switches phone emulation on or off); the current page is laid out again.
    package func setViewport(_ viewport: Viewport) async throws {
        try await cdp(
            "Emulation.setDeviceMetricsOverride",
            [
                "width": .number(Double(viewport.width)), "height": .number(Double(viewport.height)),
                "deviceScaleFactor": .number(viewport.scale), "mobile": .bool(viewport.mobile),
            ])
        try await cdp("Emulation.setTouchEmulationEnabled", ["enabled": .bool(viewport.mobile), "maxTouchPoints": 5])
        currentViewport.withLock { $0 = viewport }
    }

    /// How wide the page is laid out against the viewport: `overflows` is "a person would scroll sideways".
    package func pageWidth() async throws -> PageWidth {
        let width = try await execute("return document.documentElement.scrollWidth")
        return PageWidth(scrollWidth: width.int ?? 0, viewportWidth: viewport.width)
    }

    /// Where screenshots go: `$SHELFD_SCREENSHOTS` if set, else `.build/test-screenshots/` in the repository.
    package static var screenshotDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["SHELFD_SCREENSHOTS"], !path.isEmpty {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/test-screenshots", isDirectory: true)
    }

    /// Saves the viewport as `<screenshotDirectory>/<name>.png` (replacing one of that name) and returns its URL.
    @discardableResult
    package func screenshot(_ name: String) async throws -> URL {
        let encoded = try await send("GET", "/screenshot").string ?? ""
        guard let png = Data(base64Encoded: encoded) else {
            throw BrowserError(.driverFailed, "chromedriver's screenshot was not base64")
        }
        let directory = Self.screenshotDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let safe = String(name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "-" })
        let url = directory.appendingPathComponent(safe + ".png")
        try png.write(to: url)
        return url
    }

    // MARK: Waiting

    /// Calls `produce` until it returns a value, and returns it; after `timeout` throws `.timedOut` naming
    /// `what` and the last error. Errors meanwhile (no such element yet, a stale element) count as "not yet",
    /// except chromedriver failing and an unexpected alert, which are thrown at once.
    package func waitFor<T>(
        _ what: String, timeout: Duration = .seconds(10),
        isolation: isolated (any Actor)? = #isolation,
        _ produce: () async throws -> T?
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        var lastError: (any Error)?
        while true {
            do {
                if let value = try await produce() { return value }
                lastError = nil
            } catch let error as BrowserError
                where error.code == .driverFailed || error.webDriverError == "unexpected alert open"
            {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                lastError = error
            }
            guard ContinuousClock.now < deadline else {
                throw BrowserError(
                    .timedOut, "Waited \(timeout) for \(what)" + (lastError.map { "; last error: \($0)" } ?? ""))
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Waits until `condition` is true (see `waitFor`).
    package func waitUntil(
        _ what: String, timeout: Duration = .seconds(10),
        isolation: isolated (any Actor)? = #isolation,
        _ condition: () async throws -> Bool
    ) async throws {
        _ = try await waitFor(what, timeout: timeout) { try await condition() ? true : nil }
    }

    /// Waits until an element matches the CSS selector, and returns it.
    @discardableResult
    package func waitForElement(_ css: String, timeout: Duration = .seconds(10)) async throws -> Element {
        try await waitFor("an element matching \(css)", timeout: timeout) { try await find(css) }
    }

    // MARK: Processes

    /// Running processes (not zombies) whose command line contains `text`: a test proves with
    /// `Browser.processes(mentioning: browser.profile.path)` that no Chromium outlived its browser.
    package static func processes(mentioning text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let stat = FileManager.default.contents(atPath: "/proc/\(pid)/stat"),
                let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
            else { return false }
            // The state follows the parenthesised name: "123 (chromium) S …".
            let afterName = String(decoding: stat, as: UTF8.self).split(separator: ")").last ?? ""
            guard afterName.trimmingCharacters(in: .whitespaces).first != "Z" else { return false }
            return String(decoding: command, as: UTF8.self).contains(text)
        }
    }

    /// Kills what is left of a browser using `profile` (a renderer whose parent was killed), and waits for it.
    static func killProcesses(mentioning profile: String) {
        let deadline = ContinuousClock.now + .seconds(5)
        var left = processes(mentioning: profile)
        while !left.isEmpty && ContinuousClock.now < deadline {
            for pid in left { kill(pid, SIGKILL) }
            usleep(20_000)
            left = processes(mentioning: profile)
        }
    }

    // MARK: WebDriver

    static func locator(_ css: String) -> JSONValue { ["using": "css selector", "value": .string(css)] }

    func elementID(_ value: JSONValue, _ css: String) throws -> String {
        guard let id = value[Self.elementKey]?.string else {
            throw BrowserError(.driverFailed, "chromedriver answered a search for \(css) with \(value)")
        }
        return id
    }

    /// One command of this session; `path` is under `/session/{id}`.
    @discardableResult
    func send(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        try await webDriverCall(client, method, sessionURL, path, body)
    }

    /// A Chrome DevTools command, through chromedriver.
    @discardableResult
    func cdp(_ command: String, _ parameters: JSONValue) async throws -> JSONValue {
        try await send("POST", "/goog/cdp/execute", ["cmd": .string(command), "params": parameters])
    }
}

/// An element of the current page. Stale once the page changes it away (WebDriver's "stale element reference").
package struct Element: Sendable {
    package let id: String
    let browser: Browser

    /// The element as a `Browser.execute` argument.
    package var reference: JSONValue { [Browser.elementKey: .string(id)] }

    /// The text a person sees (rendered, whitespace collapsed, hidden parts left out).
    package func text() async throws -> String { try await send("GET", "/text").string ?? "" }

    /// The HTML attribute (or property of the same name, as WebDriver defines it); nil if absent.
    package func attribute(_ name: String) async throws -> String? {
        try await send("GET", "/attribute/\(name)").string
    }

    /// A DOM property: `property("naturalWidth")` (an image that loaded is wider than 0), `property("value")`.
    package func property(_ name: String) async throws -> JSONValue { try await send("GET", "/property/\(name)") }

    package func isDisplayed() async throws -> Bool { try await send("GET", "/displayed").bool ?? false }

    /// Scrolls the element into view and clicks its centre (fails if something covers it).
    package func click() async throws { try await send("POST", "/click", [:]) }

    /// Focuses the element and types `text` into it (`Browser.Key` values for special keys).
    package func sendKeys(_ text: String) async throws { try await send("POST", "/value", ["text": .string(text)]) }

    /// Chooses `file` in an `<input type="file">`, as a person picking it would (its `change` event fires).
    package func upload(_ file: URL) async throws { try await sendKeys(file.standardizedFileURL.path) }

    /// Empties an input or textarea.
    package func clear() async throws { try await send("POST", "/clear", [:]) }

    /// The first matching element inside this one.
    package func find(_ css: String) async throws -> Element {
        try await Element(id: browser.elementID(send("POST", "/element", Browser.locator(css)), css), browser: browser)
    }

    /// Every matching element inside this one.
    package func findAll(_ css: String) async throws -> [Element] {
        let found = try await send("POST", "/elements", Browser.locator(css))
        return try (found.array ?? []).map { try Element(id: browser.elementID($0, css), browser: browser) }
    }

    @discardableResult
    private func send(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        try await browser.send(method, "/element/\(id)" + path, body)
    }
}

/// Sends one WebDriver command and returns its `value`, or throws its error.
private func webDriverCall(
    _ client: HTTPClient, _ method: String, _ base: String, _ path: String, _ body: JSONValue?,
    timeout: Duration = .seconds(60)
) async throws -> JSONValue {
    let command = "\(method) \(path.isEmpty ? "/session" : path)"
    let request = HTTPRequest(
        method: method, url: base + path,
        headers: body == nil ? [] : [("Content-Type", "application/json; charset=utf-8")],
        body: body.map { Array($0.description.utf8) } ?? [], timeout: timeout)
    let response: HTTPResponse
    do {
        response = try await client.send(request)
    } catch {
        throw BrowserError(.driverFailed, "chromedriver did not answer \(command): \(error)")
    }
    guard let answer = JSONValue.parse(response.body) else {
        throw BrowserError(.driverFailed, "chromedriver answered \(command) with HTTP \(response.status) and no JSON")
    }
    let value = answer["value"] ?? .null
    guard response.status == 200 else {
        let name = value["error"]?.string ?? "unknown error"
        // The message's first line; the next ones are "(Session info: …)" and a stack of addresses.
        let message = (value["message"]?.string ?? "").split(separator: "\n").first.map(String.init) ?? ""
        throw BrowserError(
            name == "no such element" ? .noSuchElement : .webDriver, "\(command): \(message)",
            webDriverError: name)
    }
    return value
}

/// Finds the browser's binaries.
package enum BrowserInstallation {
    /// The first executable named `names` in PATH (or `extra`), or the one `$override` names.
    package static func find(_ what: String, names: [String], extra: [String] = [], override: String) throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment[override], !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw BrowserError(.notInstalled, "\(override)=\(path) is not an executable file.")
            }
            return URL(fileURLWithPath: path)
        }
        let folders = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init) + ["/usr/bin"]
        let candidates = names.flatMap { name in folders.map { "\($0)/\(name)" } } + extra
        guard let path = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw BrowserError(
                .notInstalled,
                "\(what) is not installed (looked for \(names.joined(separator: ", ")) in PATH; "
                    + "\(override) names another). The browser tests need Debian's chromium and chromium-driver: "
                    + "run scripts/install-deps.sh.")
        }
        return URL(fileURLWithPath: path)
    }
}

/// chromedriver as a child process on a free loopback port.
final class ChromeDriver: Sendable {
    private let process: Mutex<Process?>
    let baseURL: String
    let processID: Int32

    private init(process: sending Process, port: Int) {
        baseURL = "http://127.0.0.1:\(port)"
        processID = process.processIdentifier
        self.process = Mutex(process)
    }

    var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// Starts chromedriver and waits until it is ready for sessions. A port taken between choosing it and
    /// chromedriver binding it makes chromedriver exit: then another port is tried.
    static func start(_ executable: URL, log: URL, client: HTTPClient) async throws -> ChromeDriver {
        var attempts = 0
        while true {
            attempts += 1
            let port = try freeLoopbackPort()
            let process = Process()
            process.executableURL = executable
            process.arguments = ["--port=\(port)", "--log-path=\(log.path)"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch {
                throw BrowserError(.driverFailed, "Could not start \(executable.path): \(error)")
            }
            let driver = ChromeDriver(process: process, port: port)
            let deadline = ContinuousClock.now + .seconds(20)
            while driver.isRunning && ContinuousClock.now < deadline {
                if let status = try? await webDriverCall(
                    client, "GET", driver.baseURL, "/status", nil, timeout: .seconds(2)),
                    status["ready"]?.bool == true
                {
                    return driver
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            let exited = !driver.isRunning
            driver.stop()
            if exited && attempts < 3 { continue }
            let logText = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw BrowserError(
                .driverFailed,
                "chromedriver was not ready within 20 s on port \(port). Its log ends: "
                    + logText.split(separator: "\n").suffix(5).joined(separator: "\n"))
        }
    }

    /// Kills chromedriver and waits for it. Safe to call twice. SIGKILL, not SIGTERM: the test process blocks
    /// SIGTERM in its threads and `Process` passes that mask on, so chromedriver would never see it; by now the
    /// session is quit and the driver holds nothing worth a clean exit.
    func stop() {
        guard
            let process = self.process.withLock({ p -> Process? in
                defer { p = nil }; return p
            })
        else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// A loopback port free right now (bound to port 0, read back, closed).
package func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BrowserError(.driverFailed, "socket failed: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw BrowserError(.driverFailed, "No free loopback port: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}
