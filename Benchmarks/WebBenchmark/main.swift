// Web benchmark: what a request, a decision and a commit cost as the library grows. For each size (by default
// 1,000 and 30,000 works on about two photos each, and 10,000 works on 33,333 photos: forty sightings a work,
// a household photographing its shelves weekly for a year), a database filled as that use fills it, the
// release `shelfd watch` serving it on loopback (with a Goodreads export kept in exports/), its start-up catch-up
// timed (library.json, the exports and every open item's review files written: the database was filled by this
// benchmark, not by the daemon; done when the daemon's CPU time and write calls stop growing) and let finish, so
// the figures below are those of a daemon at rest, then
//  - server time and size of the library page (first page, a search, a later page, sorted by author), each
//    the median of 20 requests, beside the median of /healthz in the same run (one round trip through the same
//    server, no page);
//  - a review decision's round trip as the page makes it (GET the item with its CSRF token, POST `accept`,
//    follow the redirect to the next item), median of 20 decisions;
//  - the seconds until library.json reflects one more decision (its next rewrite after the answer);
//  - a batch commit's time per photo: 100 more photos committed five at a time through the store, while the
//    daemon follows them in the files;
//  - `wrk` (Debian's) against /api/v1/status and against /healthz, 50 connections, 10 s each: requests/s and p99,
//    with the daemon's RSS before, right after, and 20 s after.
// Then a table of every size's figures with their ratio to the first size's. Numbers are printed, never asserted.
//
//   shelfd-bench-web [--sizes 1000x2,30000x2,10000x40] [--shelfd PATH] [--keep]
//
// `WORKSxSIGHTINGS`: that many works, each on about SIGHTINGS photos (twelve books a photo).
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

/// The write calls the process made so far (`syscw` in /proc): the catch-up's file writes wait on fsync, using
/// little CPU.
func writeCalls(_ pid: pid_t) -> Int {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix("syscw:") } ?? ""
    return Int(line.split(separator: " ").last ?? "0") ?? 0
}

/// The process's CPU time so far (user and system), from /proc.
func cpuSeconds(_ pid: pid_t) -> Double {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th of them.
    let fields = text.split(separator: ")").last?.split(separator: " ") ?? []
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

func rssMB(_ pid: pid_t) -> Double {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

struct Size: CustomStringConvertible {
    var works: Int
    var sightings: Int
    var photos: Int { max(1, works * sightings / 12) }
    var description: String { "\(works.formatted()) works × \(sightings)" }
}

/// One size's figures.
struct Figures {
    var catchUpSeconds = 0.0
    var healthzMs = 0.0, libraryMs = 0.0, decisionMs = 0.0, commitMsPerPhoto = 0.0, libraryFileLag = 0.0
    var statusRate = 0.0, healthzRate = 0.0, rssBefore = 0.0, rssAfter = 0.0, rssLater = 0.0
}

let sizes: [Size] = (option("--sizes") ?? "1000x2,30000x2,10000x40").split(separator: ",").map { spec in
    let parts = spec.split(separator: "x").compactMap { Int($0) }
    guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { fail("--sizes takes WORKSxSIGHTINGS, comma-separated") }
    return Size(works: parts[0], sightings: parts[1])
}
let binary: URL = option("--shelfd").map { URL(fileURLWithPath: $0) } ?? {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("shelfd")
}()
guard FileManager.default.isExecutableFile(atPath: binary.path) else { fail("no shelfd at \(binary.path); pass --shelfd PATH") }
let http = HTTPClient(maxConcurrent: 4)

/// Requests/s and p99 of `wrk` against `url`, 50 connections, 10 s.
func wrk(_ url: String) -> (rate: Double, p99: String) {
    let wrk = Process()
    wrk.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
    wrk.arguments = ["-t2", "-c50", "-d10s", "--latency", url]
    let pipe = Pipe()
    wrk.standardOutput = pipe
    do { try wrk.run() } catch { fail("wrk is missing: scripts/install-deps.sh installs it") }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    wrk.waitUntilExit()
    func line(_ prefix: String) -> String {
        output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(prefix) }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "?"
    }
    let rate = Double(line("Requests/sec").split(separator: " ").last ?? "") ?? 0
    return (rate, String(line("99%").split(separator: " ").last ?? "?"))
}

func modified(_ url: URL) -> Date? {
    (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
}

func measure(_ size: Size) async -> Figures {
    var figures = Figures()
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-bench-web-\(UUID().uuidString.prefix(8))")
    // `--keep` leaves the root and database for a look afterwards.
    defer { if CommandLine.arguments.contains("--keep") { print("Kept \(base.path)") } else { try? FileManager.default.removeItem(at: base) } }
    let state = base.appendingPathComponent("state"), responses = state.appendingPathComponent("responses")
    let root = base.appendingPathComponent("Shelves")
    do {
        try FileManager.default.createDirectory(at: root.appendingPathComponent("incoming"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("exports"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: responses, withIntermediateDirectories: true)
        // An export a person made once under its default name: kept current by every change.
        try Data().write(to: root.appendingPathComponent("exports/goodreads.csv"))
        try """
            [paths]
            root = "\(root.path)"
            state = "\(state.path)"
            [pipeline]
            provider = "ocr"
            [enrich]
            sources = ["catalogue"]
            [web]
            listen = "127.0.0.1:0"
            """.write(to: base.appendingPathComponent("shelfd.toml"), atomically: true, encoding: .utf8)
    } catch { fail("\(error)") }

    print("\n== \(size): filling a database with \(size.photos.formatted()) photos…")
    let database = state.appendingPathComponent("shelfd.db").path
    let year = YearOfPhotos(photos: size.photos + 100, booksPerPhoto: 12, works: size.works)
    let store: Store
    do {
        store = try Store.open(path: database)
        try year.fill(store, responses: responses, upTo: size.photos)
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
        url = (try? store.setting("web.url")).flatMap { $0 } ?? ""
        if url.isEmpty { usleep(100_000) }
    }
    guard !url.isEmpty else { fail("the daemon did not start its web server") }
    if url.hasSuffix("/") { url.removeLast() }
    print("serving \(url) (pid \(daemon.processIdentifier))")

    // The start-up catch-up runs in the background: done when a whole second passes with under 0.05 s of CPU and
    // no more than a few writes.
    let started = ContinuousClock.now
    var spent = cpuSeconds(daemon.processIdentifier), writes = writeCalls(daemon.processIdentifier)
    while ContinuousClock.now - started < .seconds(900) {
        try? await Task.sleep(for: .seconds(1))
        let now = cpuSeconds(daemon.processIdentifier), written = writeCalls(daemon.processIdentifier)
        defer { spent = now; writes = written }
        if now - spent < 0.05 && written - writes < 10 { break }
    }
    figures.catchUpSeconds = milliseconds(ContinuousClock.now - started) / 1000 - 1
    print(String(format: "start-up catch-up: %.1f s (%.1f s of CPU)", figures.catchUpSeconds, spent))

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

    /// A review decision as the page makes it: the session cookie and CSRF token come with the item's page.
    func decide() async -> Double {
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
        return milliseconds(ContinuousClock.now - start)
    }

    // Let the start-up scan and files pass, and the idle daemon give memory back (9 s into idleness).
    try? await Task.sleep(for: .seconds(15))
    figures.rssBefore = rssMB(daemon.processIdentifier)

    let baseline = await timed("/healthz")
    figures.healthzMs = baseline.ms
    print(String(format: "baseline: /healthz %.2f ms", baseline.ms))
    for (label, path) in [("library, first page", "/library"), ("library, search", "/library?q=Surname4242"),
                          ("library, page 50", "/library?page=50"), ("library, by author", "/library?sort=author")] {
        let page = await timed(path)
        if path == "/library" { figures.libraryMs = page.ms }
        print(String(format: "%-22@ %7.2f ms (%5.1f× /healthz), %7.1f KB", label as NSString, page.ms, page.ms / baseline.ms,
                     Double(page.bytes) / 1024))
    }

    var rounds: [Double] = []
    for _ in 0..<20 { rounds.append(await decide()) }
    figures.decisionMs = median(rounds)
    print(String(format: "review decision, page → accept → next: %.1f ms (median of %d; %.1f× /healthz)",
                 figures.decisionMs, rounds.count, figures.decisionMs / baseline.ms))

    // One more decision once library.json has settled: the time from its answer to the file's next rewrite.
    let libraryFile = root.appendingPathComponent("library.json")
    try? await Task.sleep(for: .seconds(12))
    let before = modified(libraryFile)
    _ = await decide()
    let answered = ContinuousClock.now
    var lag: Double = .infinity
    for _ in 0..<600 {
        if let now = modified(libraryFile), now != before { lag = milliseconds(ContinuousClock.now - answered) / 1000; break }
        try? await Task.sleep(for: .milliseconds(50))
    }
    figures.libraryFileLag = lag
    print(String(format: "library.json reflects a decision after %.1f s", lag))

    // A batch commit's time per photo, with the daemon following the commits in the files.
    let commitStart = ContinuousClock.now
    do { try year.fill(store, responses: responses, from: size.photos) } catch { fail("committing more photos: \(error)") }
    figures.commitMsPerPhoto = milliseconds(ContinuousClock.now - commitStart) / 100
    print(String(format: "batch commit: %.2f ms a photo (100 photos, five a batch)", figures.commitMsPerPhoto))
    try? await Task.sleep(for: .seconds(12))

    let status = wrk(url + "/api/v1/status")
    figures.rssAfter = rssMB(daemon.processIdentifier)
    let healthz = wrk(url + "/healthz")
    figures.statusRate = status.rate
    figures.healthzRate = healthz.rate
    print(String(format: "wrk, 50 connections, 10 s: /api/v1/status %.0f req/s (p99 %@) · /healthz %.0f req/s (p99 %@)",
                 status.rate, status.p99, healthz.rate, healthz.p99))
    try? await Task.sleep(for: .seconds(20))
    figures.rssLater = rssMB(daemon.processIdentifier)
    print(String(format: "daemon RSS: before %.1f MB · right after wrk on status %.1f MB · 20 s after both %.1f MB",
                 figures.rssBefore, figures.rssAfter, figures.rssLater))
    return figures
}

var results: [(Size, Figures)] = []
for size in sizes { results.append((size, await measure(size))) }

// Every figure beside its ratio to the first size's, measured in this same run.
guard let first = results.first?.1 else { exit(0) }
func cell(_ value: Double, _ reference: Double, _ format: String) -> String {
    String(format: format, value) + (reference > 0 && value.isFinite ? String(format: " (%.2f×)", value / reference) : "")
}
print("\n| size | start-up catch-up s | decision ms | commit ms/photo | library.json s | library page ms | status req/s | healthz req/s | RSS before / after wrk / 20 s later MB |")
print("|---|---|---|---|---|---|---|---|---|")
for (size, f) in results {
    print("| \(size) | \(String(format: "%.1f", f.catchUpSeconds)) | \(cell(f.decisionMs, first.decisionMs, "%.1f")) | \(cell(f.commitMsPerPhoto, first.commitMsPerPhoto, "%.2f")) "
          + "| \(String(format: "%.1f", f.libraryFileLag)) | \(cell(f.libraryMs, first.libraryMs, "%.1f")) "
          + "| \(cell(f.statusRate, first.statusRate, "%.0f")) | \(String(format: "%.0f", f.healthzRate)) "
          + "| \(String(format: "%.0f / %.0f / %.0f", f.rssBefore, f.rssAfter, f.rssLater)) |")
}
