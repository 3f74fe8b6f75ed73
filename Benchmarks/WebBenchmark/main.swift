// Web benchmark: what a request, a decision and a commit cost as the library grows. For each size (by default
// 1,000 and 30,000 works on about two photos each, and 10,000 works on 33,333 photos: forty sightings a work,
// a household photographing its shelves weekly for a year), a database filled as that use fills it, the
// release `shelfd watch` serving it on loopback (with a Goodreads export kept in exports/), its start-up catch-up
// timed (library.json, the exports and every open item's review files written: the database was filled by this
// benchmark, not by the daemon; done when the daemon's CPU time and write calls stop growing) and let finish, so
// the figures below are those of a daemon at rest. Every size's daemon runs at once and the sizes take turns
// request by request (wrk excepted), so that what else this shared machine does weighs on each size alike and the
// ratios compare like with like. Then
//  - server time and size of the library page (first page, a search, a later page, sorted by author), each
//    the median of 20 requests, beside the median of /healthz in the same run (one round trip through the same
//    server, no page);
//  - a review decision's round trip as the page makes it (GET the item with its CSRF token, POST `accept`,
//    follow the redirect to the next item), median of 20 decisions;
//  - the seconds until library.json reflects one more decision (its next rewrite after the answer);
//  - a photo of 40 spines left for review cleared as its review page clears it by keys: the page, then 40 decisions
//    through /api/v1 one after another (10 first candidates, 30 "not a book"); the median of 3 such photos;
//  - a shelf's round closed: a shelf of 60 books of its own, the same at every size, photographed in rounds of three
//    shots, each round taking one book away and bringing one; the comparison of a round with the shelf (`closeDue`),
//    median of 5 rounds, and the shelf's page (`/shelves/{name}`), median of 20;
//  - a batch commit's time per photo: 100 more photos committed five at a time through the store, each commit's
//    change handed to a files writer as the pipeline hands it (review/ at once, library.json and the exports
//    coalesced in the background), once the daemon's files have followed the last decision;
//  - `wrk` (Debian's) against /api/v1/status and against /healthz, 50 connections, 10 s each: requests/s and p99,
//    with the daemon's RSS before, right after, and 20 s after.
// Then a table of every size's figures with their ratio to the first size's. Numbers are printed, never asserted.
//
//   shelfd-bench-web [--sizes 1000x2,30000x2,10000x40] [--shelfd PATH] [--keep]
//
// `WORKSxSIGHTINGS`: that many works, each on about SIGHTINGS photos (twelve books a photo).
import Foundation
import Glibc
import Logging
import ShelfHTTP
import ShelfOutputs
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
    var healthzMs = 0.0, libraryMs = 0.0, decisionMs = 0.0, commitMsPerPhoto = 0.0, libraryFileLag = 0.0,
        photoClearSeconds = 0.0
    var roundCloseMs = 0.0, shelfPageMs = 0.0
    var statusRate = 0.0, healthzRate = 0.0, rssBefore = 0.0, rssAfter = 0.0, rssLater = 0.0
}

let sizes: [Size] = (option("--sizes") ?? "1000x2,30000x2,10000x40").split(separator: ",").map { spec in
    let parts = spec.split(separator: "x").compactMap { Int($0) }
    guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { fail("--sizes takes WORKSxSIGHTINGS, comma-separated") }
    return Size(works: parts[0], sightings: parts[1])
}
let binary: URL =
    option("--shelfd").map { URL(fileURLWithPath: $0) }
    ?? {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("shelfd")
    }()
guard FileManager.default.isExecutableFile(atPath: binary.path) else {
    fail("no shelfd at \(binary.path); pass --shelfd PATH")
}
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

/// One size: its database, filled as that use fills it, and the release daemon serving it.
@MainActor final class Site {
    let size: Size
    let base: URL, root: URL, responses: URL
    let year: YearOfPhotos
    let store: Store
    let daemon = Process()
    /// The files for people, following the commits this benchmark makes as the pipeline's writer follows its own.
    let files: FilesWriter
    var url = ""
    var figures = Figures()

    init(_ size: Size) {
        self.size = size
        base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shelfd-bench-web-\(UUID().uuidString.prefix(8))")
        let state = base.appendingPathComponent("state")
        responses = state.appendingPathComponent("responses")
        root = base.appendingPathComponent("Shelves")
        do {
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("incoming"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("exports"), withIntermediateDirectories: true)
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
        year = YearOfPhotos(photos: size.photos + 100, booksPerPhoto: 12, works: size.works)
        do {
            store = try Store.open(path: state.appendingPathComponent("shelfd.db").path)
            try year.fill(store, responses: responses, upTo: size.photos)
        } catch { fail("filling the database: \(error)") }
        files = FilesWriter(
            files: LibraryFiles(
                libraryFile: root.appendingPathComponent("library.json"), review: root.appendingPathComponent("review"),
                processed: root.appendingPathComponent("processed"), exports: root.appendingPathComponent("exports"),
                filesLock: state.appendingPathComponent("files.lock"), store: store.library,
                logger: Logger(label: "shelfd-bench-web", factory: { _ in SwiftLogNoOpLogHandler() })))
    }

    /// Starts the daemon and lets its start-up catch-up finish.
    func start() async {
        // A copy of its own: daemons of one file share its pages, which none of them can then give back when idle
        // (`IdleMemory`), so each RSS would count the others' running.
        let copy = base.appendingPathComponent("shelfd")
        do { try FileManager.default.copyItem(at: binary, to: copy) } catch {
            fail("cannot copy \(binary.path): \(error)")
        }
        daemon.executableURL = copy
        daemon.arguments = [
            "watch", "--config", base.appendingPathComponent("shelfd.toml").path, "--log-level", "warning",
        ]
        daemon.environment = ["HOME": base.path, "PATH": "/usr/bin:/bin"]
        daemon.standardError = FileHandle.nullDevice
        do { try daemon.run() } catch { fail("cannot start \(binary.path): \(error)") }
        for _ in 0..<600 where url.isEmpty {
            url = (try? store.settings.value("web.url")).flatMap { $0 } ?? ""
            if url.isEmpty { usleep(100_000) }
        }
        guard !url.isEmpty else { fail("the daemon did not start its web server") }
        if url.hasSuffix("/") { url.removeLast() }
        print("serving \(url) (pid \(daemon.processIdentifier))")

        // The start-up catch-up runs in the background.
        let (seconds, cpu) = await settle()
        figures.catchUpSeconds = seconds
        print(String(format: "start-up catch-up: %.1f s (%.1f s of CPU)", seconds, cpu))
    }

    /// Waits until the daemon's background work is done: a whole second with under 0.05 s of CPU and no more than a
    /// few writes. The seconds it took, and the daemon's CPU time so far.
    @discardableResult
    func settle() async -> (seconds: Double, cpu: Double) {
        let started = ContinuousClock.now
        var spent = cpuSeconds(daemon.processIdentifier), writes = writeCalls(daemon.processIdentifier)
        while ContinuousClock.now - started < .seconds(900) {
            try? await Task.sleep(for: .seconds(1))
            let now = cpuSeconds(daemon.processIdentifier), written = writeCalls(daemon.processIdentifier)
            defer { spent = now; writes = written }
            if now - spent < 0.05 && written - writes < 10 { break }
        }
        return (milliseconds(ContinuousClock.now - started) / 1000 - 1, spent)
    }

    func stop() {
        daemon.terminate()
        daemon.waitUntilExit()
        // `--keep` leaves the root and database for a look afterwards.
        if CommandLine.arguments.contains("--keep") {
            print("Kept \(base.path)")
        } else {
            try? FileManager.default.removeItem(at: base)
        }
    }

    var rss: Double { rssMB(daemon.processIdentifier) }

    /// One request's time and size.
    func get(_ path: String) async -> (ms: Double, bytes: Int) {
        let start = ContinuousClock.now
        guard let response = try? await http.send(HTTPRequest(url: url + path)), response.status == 200 else {
            fail("GET \(path) did not answer 200")
        }
        return (milliseconds(ContinuousClock.now - start), response.body.count)
    }

    /// A review decision as the page makes it: the session cookie and CSRF token come with the item's page.
    func decide() async -> Double {
        let start = ContinuousClock.now
        guard let first = try? await http.send(HTTPRequest(url: url + "/review")),
            first.status == 302 || first.status == 303,
            let location = first.header("location")
        else { fail("GET /review did not lead to an item") }
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
        let post = try? await http.send(
            HTTPRequest(
                method: "POST", url: itemURL, headers: headers,
                body: Array("csrf=\(token)&action=accept".utf8)))
        guard let post, post.status == 303 else { fail("POST \(itemURL) answered \(post?.status ?? 0)") }
        return milliseconds(ContinuousClock.now - start)
    }

    /// A photo of 40 open spines cleared as `/photos/{sha}/review` clears it by keys: the page (its session and CSRF
    /// token), then each spine's decision through the API, one after another as the page sends them. Seconds.
    func clearPhoto(_ number: Int) async -> Double {
        let sha: String
        do { sha = try year.photoToReview(store, number: number) { files.changed($0) } } catch {
            fail("a photo to review: \(error)")
        }
        let start = ContinuousClock.now
        guard let page = try? await http.send(HTTPRequest(url: url + "/photos/\(sha)/review")), page.status == 200
        else {
            fail("GET /photos/\(sha)/review did not answer 200")
        }
        let html = String(decoding: page.body, as: UTF8.self)
        guard let range = html.range(of: "name=\"csrf-token\" content=\"") else {
            fail("no CSRF token on the photo's review page")
        }
        let token = String(html[range.upperBound...].prefix { $0 != "\"" })
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("X-CSRF-Token", token), ("Origin", url),
        ]
        if let cookie = page.header("set-cookie")?.split(separator: ";").first {
            headers.append(("Cookie", String(cookie)))
        }
        let items = html.matches(of: /data-item="([0-9a-f]+)" data-candidates="([0-9]+)"/).map {
            (String($0.1), Int($0.2) ?? 0)
        }
        guard items.count == 40 else { fail("the photo's review page lists \(items.count) spines, not 40") }
        for (id, candidates) in items {
            let body = candidates > 0 ? #"{"decision": "candidate", "candidate": 1}"# : #"{"decision": "reject"}"#
            let answer = try? await http.send(
                HTTPRequest(
                    method: "POST", url: url + "/api/v1/review/\(id)", headers: headers,
                    body: Array(body.utf8)))
            guard answer?.status == 200 else { fail("POST /api/v1/review/\(id) answered \(answer?.status ?? 0)") }
        }
        return milliseconds(ContinuousClock.now - start) / 1000
    }

    /// One more round of the shelf "bench-round" (`YearOfPhotos.shelfRound`), then the round closed as the daemon
    /// closes it once quiet. The closing's milliseconds. The rounds are dated days ahead, so the daemon beside (on the
    /// machine's clock) leaves them to this benchmark.
    var shelfRounds = 0
    func shelfRound() -> Double {
        shelfRounds += 1
        let at = Date().addingTimeInterval(Double(30 + shelfRounds) * 86_400)
        do {
            files.changed(try year.shelfRound(store, number: shelfRounds, at: at))
            let start = ContinuousClock.now
            let change = try store.shelves.closeDue(now: at.addingTimeInterval(40 * 60))
            let took = milliseconds(ContinuousClock.now - start)
            files.changed(change)
            return took
        } catch { fail("a round of the shelf: \(error)") }
    }

    /// The seconds from one more decision's answer to library.json's next rewrite.
    func libraryFileLag() async -> Double {
        let libraryFile = root.appendingPathComponent("library.json")
        let before = modified(libraryFile)
        _ = await decide()
        let answered = ContinuousClock.now
        for _ in 0..<600 {
            if let now = modified(libraryFile), now != before {
                return milliseconds(ContinuousClock.now - answered) / 1000
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return .infinity
    }
}

/// Each site's median of `rounds` runs of `body`, the sites taking turns (after one round to warm up), so that what
/// else the machine does in the meantime weighs on every size alike.
@MainActor func inTurns(_ sites: [Site], rounds: Int = 20, _ body: (Int, Site) async -> Double) async -> [Double] {
    var samples = Array(repeating: [Double](), count: sites.count)
    for round in 0...rounds {
        for (index, site) in sites.enumerated() {
            let value = await body(index, site)
            if round > 0 { samples[index].append(value) }
        }
    }
    return samples.map(median)
}

let sites = sizes.map(Site.init)
for site in sites { await site.start() }
// Let the start-up scans and files pass, and the idle daemons give memory back (9 s into idleness).
try? await Task.sleep(for: .seconds(15))
for site in sites { site.figures.rssBefore = site.rss }

print("\n== every size in turns: \(sites.map(\.size.description).joined(separator: ", "))")
let healthz = await inTurns(sites) { await $1.get("/healthz").ms }
for (site, ms) in zip(sites, healthz) { site.figures.healthzMs = ms }
print("baseline, /healthz: " + healthz.map { String(format: "%.2f ms", $0) }.joined(separator: " · "))
for (label, path) in [
    ("library, first page", "/library"), ("library, search", "/library?q=Surname4242"),
    ("library, page 50", "/library?page=50"), ("library, by author", "/library?sort=author"),
] {
    var bytes = Array(repeating: 0, count: sites.count)
    let times = await inTurns(sites) { index, site in
        let page = await site.get(path)
        bytes[index] = page.bytes
        return page.ms
    }
    if path == "/library" { for (site, ms) in zip(sites, times) { site.figures.libraryMs = ms } }
    print(
        String(format: "%-22@ ", label as NSString)
            + zip(times, zip(bytes, healthz)).map { ms, other in
                String(format: "%.2f ms (%.1f× /healthz), %.1f KB", ms, ms / other.1, Double(other.0) / 1024)
            }.joined(separator: " · "))
}

let decisions = await inTurns(sites) { await $1.decide() }
for (site, ms) in zip(sites, decisions) { site.figures.decisionMs = ms }
print(
    "review decision, page → accept → next (median of 20): "
        + decisions.map { String(format: "%.1f ms", $0) }.joined(separator: " · "))

var clearNumber = 0
let clears = await inTurns(sites, rounds: 3) { _, site in
    clearNumber += 1
    return await site.clearPhoto(clearNumber)
}
for (site, seconds) in zip(sites, clears) { site.figures.photoClearSeconds = seconds }
print(
    "a photo of 40 spines cleared by keys, page + 40 decisions (median of 3): "
        + clears.map { String(format: "%.2f s", $0) }.joined(separator: " · "))

// A shelf of 60 books of its own at every size: a round's comparison costs what the round and the shelf hold.
let rounds = await inTurns(sites, rounds: 5) { _, site in site.shelfRound() }
for (site, ms) in zip(sites, rounds) { site.figures.roundCloseMs = ms }
print(
    "a round of 3 photos closed on a shelf of 60 books (median of 5): "
        + rounds.map { String(format: "%.1f ms", $0) }.joined(separator: " · "))
let shelfPages = await inTurns(sites) { await $1.get("/shelves/bench-round").ms }
for (site, ms) in zip(sites, shelfPages) { site.figures.shelfPageMs = ms }
print("its shelf page (median of 20): " + shelfPages.map { String(format: "%.1f ms", $0) }.joined(separator: " · "))

// One more decision once library.json has settled: the time from its answer to the file's next rewrite.
try? await Task.sleep(for: .seconds(12))
for site in sites { site.figures.libraryFileLag = await site.libraryFileLag() }
print(
    "library.json reflects a decision after "
        + sites.map { String(format: "%.1f s", $0.figures.libraryFileLag) }.joined(separator: " · "))

// A batch commit's time per photo: 100 more photos each, five at a time, the sizes taking turns, once the files
// have followed the last decision (library.json, then the exports).
for site in sites { await site.settle() }
var commitSeconds = Array(repeating: 0.0, count: sites.count)
for batch in 0..<20 {
    for (index, site) in sites.enumerated() {
        let start = ContinuousClock.now
        do {
            try site.year.fill(
                site.store, responses: site.responses, from: site.size.photos + batch * 5,
                upTo: site.size.photos + batch * 5 + 5
            ) { site.files.changed($0) }
        } catch { fail("committing more photos: \(error)") }
        commitSeconds[index] += milliseconds(ContinuousClock.now - start) / 1000
    }
}
for (site, seconds) in zip(sites, commitSeconds) { site.figures.commitMsPerPhoto = seconds * 1000 / 100 }
print(
    "batch commit (100 photos, five a batch): "
        + sites.map { String(format: "%.2f ms a photo", $0.figures.commitMsPerPhoto) }.joined(separator: " · "))
try? await Task.sleep(for: .seconds(12))

// wrk takes the machine's cores: one size at a time.
for site in sites {
    let status = wrk(site.url + "/api/v1/status")
    site.figures.rssAfter = site.rss
    let healthz = wrk(site.url + "/healthz")
    site.figures.statusRate = status.rate
    site.figures.healthzRate = healthz.rate
    print(
        String(
            format: "%@: wrk, 50 connections, 10 s: /api/v1/status %.0f req/s (p99 %@) · /healthz %.0f req/s (p99 %@)",
            site.size.description, status.rate, status.p99, healthz.rate, healthz.p99))
    try? await Task.sleep(for: .seconds(20))
    site.figures.rssLater = site.rss
    print(
        String(
            format: "%@: daemon RSS: before %.1f MB · right after wrk on status %.1f MB · 20 s after both %.1f MB",
            site.size.description, site.figures.rssBefore, site.figures.rssAfter, site.figures.rssLater))
}
for site in sites { site.stop() }
let results = sites.map { ($0.size, $0.figures) }

// Every figure beside its ratio to the first size's, measured in this same run.
guard let first = results.first?.1 else { exit(0) }
func cell(_ value: Double, _ reference: Double, _ format: String) -> String {
    String(format: format, value)
        + (reference > 0 && value.isFinite ? String(format: " (%.2f×)", value / reference) : "")
}
print(
    "\n| size | start-up catch-up s | decision ms | 40-spine photo cleared s | commit ms/photo | library.json s | library page ms | round closed ms | shelf page ms | status req/s | healthz req/s | RSS before / after wrk / 20 s later MB |"
)
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for (size, f) in results {
    print(
        "| \(size) | \(String(format: "%.1f", f.catchUpSeconds)) | \(cell(f.decisionMs, first.decisionMs, "%.1f")) "
            + "| \(cell(f.photoClearSeconds, first.photoClearSeconds, "%.2f")) | \(cell(f.commitMsPerPhoto, first.commitMsPerPhoto, "%.2f")) "
            + "| \(String(format: "%.1f", f.libraryFileLag)) | \(cell(f.libraryMs, first.libraryMs, "%.1f")) "
            + "| \(cell(f.roundCloseMs, first.roundCloseMs, "%.1f")) | \(cell(f.shelfPageMs, first.shelfPageMs, "%.1f")) "
            + "| \(cell(f.statusRate, first.statusRate, "%.0f")) | \(String(format: "%.0f", f.healthzRate)) "
            + "| \(String(format: "%.0f / %.0f / %.0f", f.rssBefore, f.rssAfter, f.rssLater)) |")
}
