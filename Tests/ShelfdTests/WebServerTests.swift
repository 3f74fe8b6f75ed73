import Foundation
import ShelfCore
import ShelfHTTP
import ShelfRuntimeTesting
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

    @Test(
        "status and doctor give the page's address while it is served, and status drops it when it stops",
        .timeLimit(.minutes(2)))
    func statusAndDoctorGiveTheAddress() async throws {
        let shelf = try ShelfRoot(overrides: ["pipeline": ["provider": "\"ocr\""]])
        #expect(try await shelf.shelfd("doctor").stdout.contains("not served now"))
        let server = try shelf.startWeb()
        let url = try await shelf.webURL()
        let text = try await shelf.shelfd("status")
        #expect(text.stdout.contains("web:      \(url)/"), "\(text.stdout)")
        #expect(try await shelf.status().web?.url == url + "/")
        #expect(try await shelf.shelfd("doctor").stdout.contains("served at \(url)/"))
        #expect(try await server.stop() == 0)
        #expect(try await shelf.status().web == nil)
        #expect(!(try await shelf.shelfd("status").stdout.contains("web:")))

        let open = try ShelfRoot(overrides: [
            "pipeline": ["provider": "\"ocr\""], "web": ["listen": "\"0.0.0.0:8787\""],
        ])
        let doctor = try await open.shelfd("doctor")
        #expect(doctor.stdout.contains("web_token") && doctor.status == 1, "\(doctor.stdout)")
        let off = try ShelfRoot(overrides: ["pipeline": ["provider": "\"ocr\""], "web": ["listen": "\"\""]])
        #expect(try await off.shelfd("doctor").stdout.contains("the web page is off"))
    }
}
