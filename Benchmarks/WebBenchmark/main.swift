// Web benchmark: a database filled as a year of use fills it (10,000 works by default), the release `shelfd
// watch` serving it on loopback, then
//  - server time and size of the library page (first page, a search, a later page, sorted by author), each
//    the median of 20 requests, beside the median of /healthz in the same run (the baseline: one round trip
//    through the same server, no page);
//  - a review decision's round trip as the page makes it (GET the item with its CSRF token, POST `accept`,
//    follow the redirect to the next item), median of 20 decisions;
//  - `wrk` (Debian's) against /api/v1/status, 50 connections, 10 s: requests/s and p99, with the daemon's RSS
//    idle before, right after, and 10 s after.
// Numbers are printed, never asserted.
//
//   shelfd-bench-web [--works N] [--photos N] [--shelfd PATH] [--keep]
//
// By default each work is on about two photos (10,000 works on 1,666 photos); `--photos 33333` makes it forty.
import Foundation
import Glibc
import ShelfHTTP
import ShelfStore
import ShelfTesting

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("shelfd-bench-web: \(message)\n".utf8))
    exit(1)
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func rssMB(_ pid: pid_t) -> Double {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

let works = Int(option("--works") ?? "") ?? 10_000
// A bookshop's or a library's catalogue: each work on about two photos, twelve books a photo. `--photos`
// raises the sightings per work (a household photographing its shelves every week: forty a year).
let photos = Int(option("--photos") ?? "") ?? max(1, works * 2 / 12)
let binary: URL = option("--shelfd").map { URL(fileURLWithPath: $0) } ?? {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("shelfd")
}()
guard FileManager.default.isExecutableFile(atPath: binary.path) else { fail("no shelfd at \(binary.path); pass --shelfd PATH") }

let base = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-bench-web-\(UUID().uuidString.prefix(8))")
// `--keep` leaves the root and database for a look afterwards.
defer { if CommandLine.arguments.contains("--keep") { print("Kept \(base.path)") } else { try? FileManager.default.removeItem(at: base) } }
let state = base.appendingPathComponent("state"), responses = state.appendingPathComponent("responses")
do {
    try FileManager.default.createDirectory(at: base.appendingPathComponent("Shelves/incoming"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: responses, withIntermediateDirectories: true)
    try """
        [paths]
        root = "\(base.path)/Shelves"
        state = "\(state.path)"
        [pipeline]
        provider = "ocr"
        [enrich]
        sources = ["catalogue"]
        [web]
        listen = "127.0.0.1:0"
        """.write(to: base.appendingPathComponent("shelfd.toml"), atomically: true, encoding: .utf8)
} catch { fail("\(error)") }

print("shelfd-bench-web: filling a database with \(photos) photos of \(works) works…")
let database = state.appendingPathComponent("shelfd.db").path
do {
    let store = try Store.open(path: database)
    try YearOfPhotos(photos: photos, booksPerPhoto: 12, works: works).fill(store, responses: responses)
} catch { fail("filling the database: \(error)") }

let daemon = Process()
daemon.executableURL = binary
daemon.arguments = ["watch", "--config", base.appendingPathComponent("shelfd.toml").path, "--log-level", "warning"]
daemon.environment = ["HOME": base.path, "PATH": "/usr/bin:/bin"]
daemon.standardError = FileHandle.nullDevice
do { try daemon.run() } catch { fail("cannot start \(binary.path): \(error)") }
defer { daemon.terminate(); daemon.waitUntilExit() }

var url = ""
for _ in 0..<600 where url.isEmpty {
    url = (try? Store.openForReading(path: database)?.setting("web.url")).flatMap { $0 } ?? ""
    if url.isEmpty { usleep(100_000) }
}
guard !url.isEmpty else { fail("the daemon did not start its web server") }
if url.hasSuffix("/") { url.removeLast() }
print("serving \(url) (pid \(daemon.processIdentifier))")

let http = HTTPClient(maxConcurrent: 4)

/// Median time and size of `path` over `times` requests (after one to warm up).
func timed(_ path: String, times: Int = 20) async -> (ms: Double, bytes: Int) {
    var samples: [Double] = [], bytes = 0
    for i in 0...times {
        let start = ContinuousClock.now
        guard let response = try? await http.send(HTTPRequest(url: url + path)), response.status == 200 else {
            fail("GET \(path) did not answer 200")
        }
        if i > 0 { samples.append(milliseconds(ContinuousClock.now - start)) }
        bytes = response.body.count
    }
    return (median(samples), bytes)
}

// Let the start-up scan and library write pass, and the idle daemon give memory back (9 s into idleness).
try? await Task.sleep(for: .seconds(15))
let idleRSS = rssMB(daemon.processIdentifier)

let baseline = await timed("/healthz")
print(String(format: "baseline: /healthz %.2f ms", baseline.ms))
for (label, path) in [("library, first page", "/library"), ("library, search", "/library?q=Surname4242"),
                      ("library, page 50", "/library?page=50"), ("library, by author", "/library?sort=author")] {
    let page = await timed(path)
    print(String(format: "%-22@ %7.2f ms (%5.1f× /healthz), %7.1f KB", label as NSString, page.ms, page.ms / baseline.ms,
                 Double(page.bytes) / 1024))
}

// A review decision as the page makes it: the session cookie and CSRF token come with the item's page.
var rounds: [Double] = []
for _ in 0..<20 {
    let start = ContinuousClock.now
    guard let first = try? await http.send(HTTPRequest(url: url + "/review")), first.status == 302 || first.status == 303,
          let location = first.header("location") else { fail("GET /review did not lead to an item") }
    let itemURL = location.hasPrefix("http") ? location : url + location
    let cookie = first.header("set-cookie")?.split(separator: ";").first.map(String.init)
    var headers: [(name: String, value: String)] = cookie.map { [("Cookie", $0)] } ?? []
    guard let item = try? await http.send(HTTPRequest(url: itemURL, headers: headers)), item.status == 200 else {
        fail("GET \(itemURL) did not answer 200")
    }
    let html = String(decoding: item.body, as: UTF8.self)
    guard let range = html.range(of: "name=\"csrf-token\" content=\"") else { fail("no CSRF token on \(itemURL)") }
    let token = html[range.upperBound...].prefix { $0 != "\"" }
    if let set = item.header("set-cookie")?.split(separator: ";").first { headers = [("Cookie", String(set))] }
    headers.append(("Content-Type", "application/x-www-form-urlencoded"))
    headers.append(("Origin", url))
    let post = try? await http.send(HTTPRequest(method: "POST", url: itemURL, headers: headers,
                                                body: Array("csrf=\(token)&action=accept".utf8)))
    guard let post, post.status == 303 else { fail("POST \(itemURL) answered \(post?.status ?? 0)") }
    rounds.append(milliseconds(ContinuousClock.now - start))
}
print(String(format: "review decision, page → accept → next: %.1f ms (median of %d; %.1f× /healthz)",
             median(rounds), rounds.count, median(rounds) / baseline.ms))

let wrk = Process()
wrk.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
wrk.arguments = ["-t2", "-c50", "-d10s", "--latency", url + "/api/v1/status"]
let pipe = Pipe()
wrk.standardOutput = pipe
do { try wrk.run() } catch { fail("wrk is missing: scripts/install-deps.sh installs it") }
let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
wrk.waitUntilExit()
let afterRSS = rssMB(daemon.processIdentifier)
try? await Task.sleep(for: .seconds(10))
let laterRSS = rssMB(daemon.processIdentifier)
func wrkLine(_ prefix: String) -> String {
    output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(prefix) }
        .map { $0.trimmingCharacters(in: .whitespaces) } ?? "?"
}
print("wrk /api/v1/status, 50 connections, 10 s: \(wrkLine("Requests/sec")) · p99 \(wrkLine("99%").split(separator: " ").last ?? "?")")
print(String(format: "daemon RSS: idle %.1f MB · right after wrk %.1f MB · 10 s later %.1f MB", idleRSS, afterRSS, laterRSS))
