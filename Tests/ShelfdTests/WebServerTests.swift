import Foundation
import ShelfHTTP
import ShelfTesting
import Testing

@Suite("The web server")
struct WebServerTests {
    @Test("watch serves the overview beside its work, and a taken port leaves the daemon processing photos")
    func servedByWatch() async throws {
        let shelf = try ShelfRoot(overrides: ["pipeline": ["provider": "\"ocr\""]])
        let daemon = try shelf.startDaemon()
        let url = try await shelf.webURL()
        let http = HTTPClient(maxConcurrent: 2)
        let page = try await http.send(HTTPRequest(url: url + "/"))
        #expect(page.status == 200)
        #expect(String(decoding: page.body, as: UTF8.self).contains("<h1>Overview</h1>"))
        #expect(try await http.send(HTTPRequest(url: url + "/healthz")).status == 200)

        // A second shelf whose [web] listen is the port the first one holds: its page is off, its daemon goes on.
        let port = url.split(separator: ":").last!
        let other = try ShelfRoot(overrides: [
            "pipeline": ["provider": "\"ocr\""], "web": ["listen": "\"127.0.0.1:\(port)\""],
        ])
        let second = try other.startDaemon()
        // A daemon's start is quick alone, slower among a full run's starts: the wait allows for that.
        try await waitUntil("the second daemon says its page is off", timeout: .seconds(90)) {
            second.logText.contains("web_failed")
        }
        #expect(second.process.isRunning)
        #expect(try await second.stop() == 0)
        #expect(try await daemon.stop() == 0)
    }

    @Test("shelfd web refuses an address beyond loopback without a token, and says what to do")
    func refusesOpenAddressWithoutToken() async throws {
        let shelf = try ShelfRoot(overrides: ["web": ["listen": "\"0.0.0.0:0\""]])
        let result = try await shelf.shelfd("web")
        #expect(result.status == 1)
        #expect(result.stderr.contains("web_token"))
    }
}
