import Foundation
import Glibc
import ShelfCore
import ShelfHTTP
import ShelfRuntimeTesting
import ShelfStore
import ShelfTesting
import Testing

/// The web door under load (issue 18): `/events` streams capped per client and in all, idle connections closed,
/// the pipeline's pace and the daemon's memory unchanged by a crowd of sockets, uploads streamed to disk after
/// their CSRF check.
@Suite("The web page under load", .serialized)
struct LoadTests {
    /// The daemon's resident memory in bytes (`VmRSS` of /proc/PID/status).
    static func residentBytes(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// Lets this test process hold a thousand sockets (the soft limit is often 1024).
    static func raiseFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Photos done (done, to review or failed) in the daemon's database.
    static func finished(_ shelf: ShelfRoot) -> Int {
        guard let store = try? Store.openForReading(path: shelf.state.appendingPathComponent("shelfd.db").path),
            let counts = try? store.status.queueCounts(now: Date())
        else { return 0 }
        return counts.done + counts.review + counts.failed + counts.dead
    }

    /// Drops `count` photos and returns the seconds until the daemon has finished them all.
    static func pace(_ shelf: ShelfRoot, photos seeds: Range<Int>) async throws -> Double {
        let before = finished(shelf)
        let start = ContinuousClock.now
        for seed in seeds { try shelf.drop(JPEGFactory.shelf(seed: seed), as: "load/IMG_\(seed).jpg") }
        try await waitUntil("the daemon finishes \(seeds.count) photos", timeout: .seconds(120)) {
            finished(shelf) >= before + seeds.count
        }
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test(
        "500 /events streams and 500 idle connections while photos are processed: streams capped, idle ones closed, the same pace, bounded memory",
        .timeLimit(.minutes(5)))
    func crowdOfConnections() async throws {
        Self.raiseFileLimit()
        try await withGeminiEmulator(GeminiEmulator.Script(latency: .milliseconds(150), reply: .books([dune, hobbit])))
        { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["pipeline": ["concurrency": "4"]])
            // Started as a service often is, with 1024 open files at most: the crowd below needs more than that.
            let (process, _, log) = try shelf.process(["watch"], logName: "daemon-load")
            process.arguments = ["--nofile=1024:1024", ShelfRoot.binary.path] + (process.arguments ?? [])
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            try process.run()
            let daemon = Daemon(process: process, log: log)
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            let port = RawHTTP(url: try await shelf.webURL()).port
            let pid = process.processIdentifier

            _ = try await Self.pace(shelf, photos: 0..<4) // warm: the first photos load everything
            let quiet = try await Self.pace(shelf, photos: 4..<24)
            let residentQuiet = Self.residentBytes(pid)

            // Ten streams from this address, then 490 from as many others as a crowd would use (127.0.1.x).
            var streams: [LoopbackSocket] = []
            var statuses: [Int: Int] = [:]
            for n in 0..<500 {
                let source = n < 10 ? "127.0.0.1" : "127.0.1.\(1 + (n - 10) / 4)"
                let socket = try LoopbackSocket(from: source, to: port)
                try socket.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
                let status = socket.status()
                statuses[status, default: 0] += 1
                if n == 9 {
                    #expect(statuses[429] == 2, "the 9th and 10th stream of one address are refused: \(statuses)")
                }
                streams.append(socket)
            }
            #expect(statuses[200] == 64, "64 streams in all: \(statuses)")
            #expect(
                statuses[429, default: 0] == 2 && statuses[503, default: 0] + statuses[0, default: 0] == 434,
                "\(statuses)")
            var idle: [LoopbackSocket] = []
            for n in 0..<500 { idle.append(try LoopbackSocket(from: "127.0.2.\(1 + n / 4)", to: port)) }

            let loaded = try await Self.pace(shelf, photos: 24..<44)
            let residentLoaded = Self.residentBytes(pid)
            let ratio = loaded / quiet
            print(
                "load: 20 photos in \(String(format: "%.2f", quiet)) s quiet, \(String(format: "%.2f", loaded)) s with 500 streams "
                    + "and 500 idle connections (ratio \(String(format: "%.2f", ratio))); RSS \(residentQuiet / 1_048_576) MB → "
                    + "\(residentLoaded / 1_048_576) MB; refused streams \(statuses)")
            #expect(process.isRunning, "the daemon is alive")
            #expect(ratio < 3, "photos go on at about the same pace")
            #expect(residentLoaded < residentQuiet + 100 * 1_048_576, "memory stays bounded")
            // The streams that were let in follow the progress.
            let live = streams.filter { $0.firstStatus == 200 }
            #expect(live.allSatisfy { $0.received.contains("event: progress") }, "every open stream had an event")
            // Idle connections are closed after the idle time; open streams are not.
            try await waitUntil("idle connections are closed", timeout: .seconds(60)) {
                idle.allSatisfy { $0.isClosedByServer() }
            }
            #expect(!live.contains { $0.isClosedByServer() }, "a stream in progress is no idle connection")
            // Connections past the limit were closed as they came; with the idle ones gone, a page is served again.
            #expect(try RawHTTP(url: "http://127.0.0.1:\(port)").send("GET", "/events?once=1").status == 200)
            for socket in streams + idle { socket.close() }
            #expect(try await daemon.stop() == 0)
        }
    }

    @Test(
        "A page whose stream is refused (its address already holds the most) polls instead, and still follows the queue",
        .timeLimit(.minutes(3)))
    func refusedStreamFallsBackToPolling() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
            let daemon = try shelf.startDaemon()
            let url = try await shelf.webURL()
            let port = RawHTTP(url: url).port
            let held = try (0..<8).map { _ in try LoopbackSocket(from: "127.0.0.1", to: port) }
            for socket in held {
                try socket.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
                #expect(socket.status() == 200)
            }
            try await withBrowser { browser in
                try await browser.navigate(to: url + "/")
                try await browser.waitUntil("the page polls instead of streaming") {
                    try await browser.find("[data-live]").text() == "Updating every 2 s."
                }
                try shelf.drop(JPEGFactory.shelf(seed: 97), as: "hall/IMG_97.jpg")
                try await browser.waitUntil("the polled page shows the photo done", timeout: .seconds(60)) {
                    try await browser.find(#"[data-count="done"]"#).text() == "1"
                }
            }
            // A stream whose client went away gives its place back (noticed at its next write, within 15 s).
            for socket in held { socket.close() }
            try await waitUntil("a closed stream's place is free again", timeout: .seconds(30)) {
                let socket = try LoopbackSocket(from: "127.0.0.1", to: port)
                defer { socket.close() }
                try socket.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
                return socket.status() == 200
            }
            #expect(try await daemon.stop() == 0)
        }
    }

    @Test(
        "Pages polling /events?once=1 share one reading of the progress a tick, as the streams do",
        .timeLimit(.minutes(2)))
    func pollsShareOneReading() async throws {
        let shelf = try ShelfRoot()
        let web = try shelf.startWeb()
        let http = RawHTTP(url: try await shelf.webURL())
        let (cookie, _) = try await shelf.session("http://127.0.0.1:\(http.port)", "/")
        /// What the server has sent its database so far (`/metrics` reads it before its own queries).
        func statements() throws -> Int {
            let text = try http.send("GET", "/metrics").body
            let line = text.split(separator: "\n").first { $0.hasPrefix("shelfd_store_statements_total ") } ?? ""
            return Int(Double(line.split(separator: " ").last ?? "") ?? -1)
        }
        func poll() throws {
            #expect(try http.send("GET", "/events?once=1", headers: [("Cookie", cookie)]).status == 200)
        }
        try await Task.sleep(for: .seconds(1))
        let beforeOne = try statements()
        try poll()
        let one = try statements() - beforeOne
        try await Task.sleep(for: .seconds(1))
        let beforeMany = try statements()
        let start = ContinuousClock.now
        for _ in 0..<50 { try poll() }
        let many = try statements() - beforeMany
        print("polls: one took \(one) statements, 50 in \(ContinuousClock.now - start) took \(many)")
        #expect(one > 0 && many < 50 * one * 2 / 3, "50 polls do not each read the progress")
        #expect(try await web.stop() == 0)
    }
}

/// A TCP connection to the server on loopback from a chosen loopback address (a crowd of clients from one
/// machine), kept open as long as the test holds it.
final class LoopbackSocket: @unchecked Sendable {
    let fd: Int32
    private(set) var received = ""
    private(set) var firstStatus = 0

    init(from source: String, to port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTP.Failure("socket: \(errno)") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = UInt16(port).bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, connected == 0 else {
            Glibc.close(fd); throw RawHTTP.Failure("connect from \(source): \(errno)")
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw RawHTTP.Failure("send: \(errno)") }
            sent += n
        }
    }

    /// Reads until the answer's head is in, and returns its status (0: the server closed the connection first).
    func status() -> Int {
        while !received.contains("\r\n\r\n"), readSome(wait: true) {}
        firstStatus = Int(received.split(separator: " ").dropFirst().first ?? "") ?? 0
        if firstStatus == 200 {
            // The first progress event comes within a tick or two.
            let deadline = ContinuousClock.now + .seconds(3)
            while !received.contains("event: progress"), ContinuousClock.now < deadline, readSome(wait: true) {}
        }
        return firstStatus
    }

    /// True once the server has closed its side (whatever it sent before is read and kept).
    func isClosedByServer() -> Bool {
        var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&pending, 1, 0) > 0 {
            if !readSome(wait: false) { return true }
        }
        return false
    }

    /// False at the end of the stream (or an error).
    @discardableResult
    private func readSome(wait: Bool) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let n = recv(fd, &buffer, buffer.count, wait ? 0 : Int32(MSG_DONTWAIT))
        guard n > 0 else { return false }
        received += String(decoding: buffer[0..<n], as: UTF8.self)
        return true
    }

    func close() { Glibc.close(fd) }
}
