import ArgumentParser
import Foundation
import ShelfCore
import ShelfStore
import ShelfTesting

/// Runs the built `shelfd` against the Gemini emulator answering after a fixed latency, and prints
/// photos/s beside the ideal concurrency ÷ latency, CPU per photo, RSS, and what an idle daemon costs.
/// With `--requests-per-minute` it measures pacing instead: photos per minute ÷ the limit (ideally 1.0),
/// the most requests in any 60 s, and the longest silence, also with `run` started beside `watch`.
@main
struct ThroughputBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shelfd-bench",
        abstract: "Throughput, CPU and memory of shelfd against the Gemini emulator.",
        discussion: """
            Phase 1 times 'shelfd run' over photos already in incoming/. Phase 2 starts 'shelfd watch', drops \
            as many new photos and times them to their results, leaves the daemon idle, then stops it with SIGTERM. \
            With --requests-per-minute, a phase between the two last drops as many photos again and starts \
            'shelfd run' beside the daemon: both take their requests from the one limit.
            """)

    @Option(help: "Photos per phase.") var photos = 60
    @Option(name: .customLong("latency-ms"), help: "The emulator's answer latency, in milliseconds.") var latencyMs =
        1000
    @Option(help: "[pipeline] concurrency: requests in flight.") var concurrency = 2
    @Option(name: .customLong("batch-size"), help: "[pipeline] batch_size.") var batchSize = 5
    // 15 s: the scheduler gives memory back 9 s after the queue went idle, at its next wake-up (every 5 s at
    // most), so 2 + 15 s after the last result the RSS read is the one an idle daemon keeps; at 2 + 10 s it was
    // read before or after that release by chance.
    @Option(name: .customLong("idle-s"), help: "How long the idle daemon is watched, in seconds.") var idleSeconds = 15
    @Option(
        name: .customLong("requests-per-minute"),
        help: "[gemini] requests_per_minute: measure pacing against this limit (default: no limit).")
    var requestsPerMinute: Int?
    @Flag(
        name: .customLong("provider-quota"),
        help: "The emulator refuses (HTTP 429) requests beyond --requests-per-minute in a minute, as Gemini does.")
    var providerQuota = false
    @Option(help: "The shelfd binary (default: the one beside shelfd-bench).") var shelfd: String?
    @Option(
        help: """
            Measure what crashes cost instead: kill -9 'shelfd watch' after each of these seconds from its start \
            (comma-separated, e.g. 1.2,2.6,1.7,2.9), starting it again each time, and count the requests per photo.
            """)
    var kills: String?
    @Option(help: "With --kills: another shelfd binary measured the same way in the same run, first.")
    var baseline: String?
    @Flag(name: .customLong("keep"), help: "Keep the temporary root (logs, database, results) and print its path.")
    var keep = false

    func validate() throws {
        guard photos >= 1 else { throw ValidationError("--photos must be at least 1.") }
        guard latencyMs >= 1 else { throw ValidationError("--latency-ms must be at least 1.") }
        guard (1...16).contains(concurrency) else {
            throw ValidationError("--concurrency must be 1…16, as in shelfd.toml.")
        }
        guard (1...5).contains(batchSize) else { throw ValidationError("--batch-size must be 1…5, as in shelfd.toml.") }
        guard idleSeconds >= 1 else { throw ValidationError("--idle-s must be at least 1.") }
        if let requestsPerMinute, requestsPerMinute < 1 {
            throw ValidationError("--requests-per-minute must be at least 1.")
        }
        if providerQuota && requestsPerMinute == nil {
            throw ValidationError("--provider-quota needs --requests-per-minute.")
        }
        if let kills, killDelays.isEmpty || killDelays.count != kills.split(separator: ",").count {
            throw ValidationError("--kills takes seconds greater than 0, comma-separated: 1.2,2.6,1.7,2.9.")
        }
        if baseline != nil && kills == nil { throw ValidationError("--baseline goes with --kills.") }
    }

    /// `--kills` as seconds.
    var killDelays: [Double] {
        (kills ?? "").split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            .filter { $0 > 0 }
    }

    func run() throws {
        let binary = try shelfdBinary()
        if kills != nil { return try runCrashes(binary) }
        let books = [
            GeminiEmulator.Book(
                title: "Dune", author: "Frank Herbert", isbn: "978-0-441-17271-9", confidence: 0.93,
                box2D: [120, 410, 880, 450]),
            GeminiEmulator.Book(
                title: "The Hobbit", author: "J. R. R. Tolkien", confidence: 0.88, box2D: [100, 500, 900, 540]),
            GeminiEmulator.Book(
                title: "Solaris", author: "Stanisław Lem", confidence: 0.81, box2D: [130, 560, 890, 590]),
        ]
        let emulator = try GeminiEmulator.start(
            script: .init(
                latency: .milliseconds(latencyMs), reply: .books(books),
                requestsPerMinute: providerQuota ? requestsPerMinute : nil))
        defer { emulator.stop() }
        let requests = RequestClock(emulator)
        defer { requests.stop() }
        let root = try BenchRoot(
            geminiURL: emulator.baseURL, apiKey: GeminiEmulator.defaultKey,
            concurrency: concurrency, batchSize: batchSize, requestsPerMinute: requestsPerMinute)
        defer { if keep { print("Kept \(root.base.path)") } else { root.remove() } }

        print(
            "shelfd-bench: \(photos) photos per phase, provider latency \(latencyMs) ms, concurrency \(concurrency), "
                + "batch size \(batchSize)" + (requestsPerMinute.map { ", requests_per_minute \($0)" } ?? ""))
        print("measuring a new daemon with the offline default, idle from the start…")
        let fresh = try measureFreshIdle(binary, geminiURL: emulator.baseURL)
        print(
            "ideal \(requestsPerMinute == nil ? "C/L" : "min(C/L, limit)") = \(fixed(ideal, 3)) photos/s; measuring 'shelfd run'…"
        )
        let oneShot = try measureRun(binary, root: root, requests: requests)
        print("measuring 'shelfd watch'…")
        let (daemon, together, idle) = try measureWatch(binary, root: root, requests: requests)
        print()
        printTable(oneShot, daemon, idle)
        print(
            "new daemon, offline default, nothing queued, \(Self.freshIdleSeconds) s after start: RSS \(fixed(fresh.rssMB, 1)) MB "
                + "(anonymous \(fixed(fresh.anonymousRssMB, 1)) MB), \(fixed(fresh.wakeupsPerS, 1)) wake-ups/s")
        if let together { printPacing(oneShot, daemon, together) }

        let report = Report(
            photos: photos, latencyMs: latencyMs, concurrency: concurrency, batchSize: batchSize,
            requestsPerMinute: requestsPerMinute, providerQuota: providerQuota, idealPhotosPerS: ideal, run: oneShot,
            watch: daemon,
            runBesideWatch: together, idle: idle, freshIdle: fresh)
        try printJSON(report)
        if idle.exitStatus != 0 { throw ExitCode(1) }
    }

    /// `--kills`: the baseline (when given), then this build, each on photos of its own, against one emulator.
    func runCrashes(_ binary: URL) throws {
        let emulator = try GeminiEmulator.start(
            script: .init(
                latency: .milliseconds(latencyMs),
                reply: .books([
                    GeminiEmulator.Book(
                        title: "Dune", author: "Frank Herbert", isbn: "978-0-441-17271-9", confidence: 0.93,
                        box2D: [120, 410, 880, 450])
                ])))
        defer { emulator.stop() }
        var binaries = [("shelfd", binary)]
        if let baseline { binaries.insert(("baseline", URL(fileURLWithPath: baseline)), at: 0) }
        var runs: [Crashes] = []
        for (index, (label, url)) in binaries.enumerated() {
            print("measuring \(label) (\(url.path))…")
            runs.append(try measureCrashes(url, named: label, emulator: emulator, seed: 9000 + 1000 * index))
        }
        printCrashes(runs)
        try printJSON(runs)
    }

    /// The report as the last line: JSON, snake_case keys.
    func printJSON(_ report: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    }

    /// Photos per second with every request slot always busy, or at the rate limit when that is lower.
    var ideal: Double {
        min(Double(concurrency) / (Double(latencyMs) / 1000), turnInterval.map { 1 / $0 } ?? .infinity)
    }

    /// Seconds between request turns at `requestsPerMinute`, as shelfd spaces them (its margin included).
    var turnInterval: TimeInterval? {
        requestsPerMinute.map { RequestBudget(requestsPerMinute: $0, dayEnds: { _ in .distantFuture }).interval }
    }

    /// Longest a phase may take before the benchmark gives up: 3× the ideal, plus a minute.
    var phaseTimeout: Duration { .seconds(3 * Double(photos) / ideal + 60) }

    // MARK: Phases

    /// Phase 1: `shelfd run` over photos already in incoming/, timed from spawn to exit.
    func measureRun(_ binary: URL, root: BenchRoot, requests: RequestClock) throws -> Phase {
        for i in 0..<photos { try root.drop(JPEGFactory.shelf(seed: i), as: name("run", i)) }
        let seenBefore = requests.all.count
        let cpuBefore = childrenCPUSeconds()
        let start = ContinuousClock.now
        let child = try Child(
            binary, ["run", "--config", root.configFile.path], environment: root.environment,
            log: root.log("run"))
        // VmHWM is a high-water mark, so sampling it every 20 ms until the exit misses at most the last moments.
        var peakRSS = 0.0
        var exit: (status: Int32, at: ContinuousClock.Instant)?
        while exit == nil, ContinuousClock.now < start + phaseTimeout {
            peakRSS = max(peakRSS, ProcFS.memoryMB(child.pid, "VmHWM") ?? 0)
            exit = child.waitForExit(timeout: .milliseconds(20))
        }
        guard let (status, end) = exit else {
            child.kill()
            throw BenchError(
                "shelfd run did not finish within \(phaseTimeout); see \(root.log("run").path) (use --keep)")
        }
        let cpuAfter = childrenCPUSeconds()
        guard status == 0 else {
            throw BenchError("shelfd run exited with status \(status):\n\(tail(root.log("run")))")
        }
        let documents = try root.resultDocuments(prefix: "run-")
        guard documents.count == photos else {
            throw BenchError(
                "shelfd run wrote \(documents.count) results for \(photos) photos:\n\(tail(root.log("run")))")
        }
        let arrivals = Array(requests.all.dropFirst(seenBefore))
        return phase(
            wall: end - start, startup: arrivals.first.map { $0 - start },
            providerMs: documents.compactMap(\.timings.providerMs),
            cpuSeconds: cpuAfter - cpuBefore, peakRSSMB: peakRSS, arrivals: arrivals,
            refused: requests.refused(from: seenBefore))
    }

    static let freshIdleSeconds = 25

    /// Phase 0: `shelfd watch` as a new user starts it (no key: the offline provider; nothing queued), its RSS
    /// 25 s after start: what the daemon costs a machine on which it mostly waits.
    func measureFreshIdle(_ binary: URL, geminiURL: String) throws -> Idle {
        let root = try BenchRoot(
            geminiURL: geminiURL, apiKey: "", concurrency: concurrency, batchSize: batchSize, offline: true)
        defer { if !keep { root.remove() } }
        let log = root.log("fresh")
        let child = try Child(
            binary, ["watch", "--config", root.configFile.path], environment: root.environment, log: log)
        defer { child.terminate(); if child.waitForExit(timeout: .seconds(30)) == nil { child.kill() } }
        Thread.sleep(forTimeInterval: Double(Self.freshIdleSeconds - 10))
        let switchesBefore = ProcFS.contextSwitches(child.pid), cpuBefore = ProcFS.cpuSeconds(child.pid) ?? 0
        Thread.sleep(forTimeInterval: 10)
        let switchesAfter = ProcFS.contextSwitches(child.pid), cpuAfter = ProcFS.cpuSeconds(child.pid) ?? 0
        guard let rss = ProcFS.memoryMB(child.pid, "VmRSS") else {
            throw BenchError("the new daemon stopped:\n\(tail(log))")
        }
        return Idle(
            seconds: 10, cpuMs: (cpuAfter - cpuBefore) * 1000,
            wakeupsPerS: Double(ProcFS.contextSwitches(from: switchesBefore, to: switchesAfter)) / 10, rssMB: rss,
            anonymousRssMB: ProcFS.memoryMB(child.pid, "RssAnon") ?? 0, exitStatus: 0, stopS: 0)
    }

    /// Phase 2: `shelfd watch`; new photos are timed from the drop to their last result file. With a rate
    /// limit, phase 3 follows (`measureRunBesideWatch`). Then the daemon is left alone for `idleSeconds` and
    /// stopped with SIGTERM.
    func measureWatch(_ binary: URL, root: BenchRoot, requests: RequestClock) throws -> (Phase, Pacing?, Idle) {
        let jpegs = (0..<photos).map { JPEGFactory.shelf(seed: photos + $0) } // made before the clock starts
        let log = root.log("watch")
        let child = try Child(
            binary, ["watch", "--config", root.configFile.path], environment: root.environment, log: log)
        var stopped = false
        defer { if !stopped { child.kill(); _ = child.waitForExit(timeout: .seconds(10)) } }
        let pid = child.pid

        // The startup scan is logged once inotify watches are in place: from then on no drop is missed.
        try waitUntil("the daemon's startup scan", timeout: .seconds(60), log: log) {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("Full scan finished")
        }
        let seenBefore = requests.all.count
        let cpuBefore = ProcFS.cpuSeconds(pid) ?? 0
        let start = ContinuousClock.now
        for (i, jpeg) in jpegs.enumerated() { try root.drop(jpeg, as: name("watch", i)) }
        try waitUntil("\(photos) results", timeout: phaseTimeout, log: log) {
            root.resultCount(prefix: "watch-") == photos
        }
        let end = ContinuousClock.now
        let cpuAfter = ProcFS.cpuSeconds(pid) ?? 0
        let peakWhileWorking = ProcFS.memoryMB(pid, "VmHWM") ?? 0
        let documents = try root.resultDocuments(prefix: "watch-")
        let arrivals = Array(requests.all.dropFirst(seenBefore))
        let refused = requests.refused(from: seenBefore)
        let together =
            requestsPerMinute == nil ? nil : try measureRunBesideWatch(binary, root: root, requests: requests)

        // Idle: the last batch commits and library.json is written just after its results; let that pass.
        Thread.sleep(forTimeInterval: 2)
        let idleCPUBefore = ProcFS.cpuSeconds(pid) ?? 0, switchesBefore = ProcFS.contextSwitches(pid)
        Thread.sleep(forTimeInterval: Double(idleSeconds))
        let idleCPUAfter = ProcFS.cpuSeconds(pid) ?? 0, switchesAfter = ProcFS.contextSwitches(pid)
        let rss = ProcFS.memoryMB(pid, "VmRSS") ?? 0
        let anonymous = ProcFS.memoryMB(pid, "RssAnon") ?? 0

        let stopStart = ContinuousClock.now
        child.terminate()
        guard let (status, exit) = child.waitForExit(timeout: .seconds(60)) else {
            throw BenchError("shelfd watch did not stop within 60 s of SIGTERM:\n\(tail(log))")
        }
        stopped = true

        let daemon = phase(
            wall: end - start, startup: arrivals.first.map { $0 - start },
            providerMs: documents.compactMap(\.timings.providerMs),
            cpuSeconds: cpuAfter - cpuBefore, peakRSSMB: peakWhileWorking, arrivals: arrivals,
            refused: refused)
        let idle = Idle(
            seconds: idleSeconds, cpuMs: (idleCPUAfter - idleCPUBefore) * 1000,
            wakeupsPerS: Double(ProcFS.contextSwitches(from: switchesBefore, to: switchesAfter)) / Double(idleSeconds),
            rssMB: rss,
            anonymousRssMB: anonymous,
            exitStatus: status, stopS: (exit - stopStart).seconds)
        return (daemon, together, idle)
    }

    /// Phase 3 (with a rate limit): while the daemon runs, as many photos again are dropped and `shelfd run`
    /// is started at once, as the nightly timer may start it. Both processes claim photos and ask the one
    /// provider: together they must keep to the limit, and each photo is asked once.
    func measureRunBesideWatch(_ binary: URL, root: BenchRoot, requests: RequestClock) throws -> Pacing {
        let jpegs = (0..<photos).map { JPEGFactory.shelf(seed: 2 * photos + $0) }
        let seenBefore = requests.all.count
        let start = ContinuousClock.now
        for (i, jpeg) in jpegs.enumerated() { try root.drop(jpeg, as: name("both", i)) }
        let child = try Child(
            binary, ["run", "--config", root.configFile.path], environment: root.environment,
            log: root.log("run-beside-watch"))
        var exited = false
        defer { if !exited { child.kill(); _ = child.waitForExit(timeout: .seconds(10)) } }
        try waitUntil("\(photos) results of run beside watch", timeout: phaseTimeout, log: root.log("run-beside-watch"))
        {
            root.resultCount(prefix: "both-") == photos
        }
        let end = ContinuousClock.now
        guard let (status, _) = child.waitForExit(timeout: phaseTimeout) else {
            throw BenchError("shelfd run beside watch did not exit:\n\(tail(root.log("run-beside-watch")))")
        }
        exited = true
        guard status == 0 else {
            throw BenchError(
                "shelfd run beside watch exited with status \(status):\n\(tail(root.log("run-beside-watch")))")
        }
        return pacing(
            wall: end - start, arrivals: Array(requests.all.dropFirst(seenBefore)),
            refused: requests.refused(from: seenBefore))!
    }

    func phase(
        wall: Duration, startup: Duration?, providerMs: [Int], cpuSeconds: Double, peakRSSMB: Double,
        arrivals: [ContinuousClock.Instant], refused: Int
    ) -> Phase {
        let perSecond = Double(photos) / wall.seconds
        let afterStartup = startup.map { Double(photos) / (wall - $0).seconds }
        let meanProviderMs = providerMs.isEmpty ? nil : Double(providerMs.reduce(0, +)) / Double(providerMs.count)
        // The same slots kept busy by requests that really took `meanProviderMs` (emulator work, loopback, curl).
        let idealAtServiceTime = meanProviderMs.map { Double(concurrency) / ($0 / 1000) }
        return Phase(
            wallS: wall.seconds, startupS: startup?.seconds, photosPerS: perSecond, ratioToIdeal: perSecond / ideal,
            ratioToIdealAfterStartup: afterStartup.map { $0 / ideal }, meanProviderMs: meanProviderMs,
            ratioToServiceTimeAfterStartup: afterStartup.flatMap { a in idealAtServiceTime.map { a / $0 } },
            cpuMsPerPhoto: cpuSeconds * 1000 / Double(photos), peakRssMB: peakRSSMB,
            pacing: pacing(wall: wall, arrivals: arrivals, refused: refused))
    }

    /// Against the rate limit: photos per minute over the phase, the most requests any 60 s held, and the
    /// longest time no request was sent while photos waited. Nil without a limit.
    func pacing(wall: Duration, arrivals: [ContinuousClock.Instant], refused: Int) -> Pacing? {
        guard let limit = requestsPerMinute else { return nil }
        let perMinute = Double(photos) / wall.seconds * 60
        var most = 0, first = 0
        for last in arrivals.indices {
            // Any 60 s, as the provider counts them.
            while arrivals[last] - arrivals[first] >= .seconds(60) { first += 1 }
            most = max(most, last - first + 1)
        }
        let gaps = zip(arrivals, arrivals.dropFirst()).map { ($1 - $0).seconds }
        return Pacing(
            photosPerMinute: perMinute, ratioToLimit: perMinute / Double(limit), requests: arrivals.count,
            refused: refused, maxRequestsIn60S: most, longestGapS: gaps.max() ?? 0, wallS: wall.seconds)
    }

    // MARK: Output

    func printTable(_ run: Phase, _ watch: Phase, _ idle: Idle) {
        func row(_ label: String, _ a: String, _ b: String) {
            print(label.padding(toLength: 40, withPad: " ", startingAt: 0) + pad(a, 12) + pad(b, 14))
        }
        func opt(_ value: Double?, _ digits: Int) -> String { value.map { fixed($0, digits) } ?? "–" }
        row("", "shelfd run", "shelfd watch")
        row("wall time (s)", fixed(run.wallS, 2), fixed(watch.wallS, 2))
        row("start-up: first request after (s)", opt(run.startupS, 2), opt(watch.startupS, 2))
        row("photos/s", fixed(run.photosPerS, 3), fixed(watch.photosPerS, 3))
        row("  ÷ ideal C/L", fixed(run.ratioToIdeal, 3), fixed(watch.ratioToIdeal, 3))
        row(
            "  ÷ ideal C/L, start-up excluded", opt(run.ratioToIdealAfterStartup, 3),
            opt(watch.ratioToIdealAfterStartup, 3))
        row("provider round trip, mean (ms)", opt(run.meanProviderMs, 1), opt(watch.meanProviderMs, 1))
        row(
            "  ÷ C/round trip, start-up excluded", opt(run.ratioToServiceTimeAfterStartup, 3),
            opt(watch.ratioToServiceTimeAfterStartup, 3))
        row("CPU per photo (ms)", fixed(run.cpuMsPerPhoto, 1), fixed(watch.cpuMsPerPhoto, 1))
        row("peak RSS (MB)", fixed(run.peakRssMB, 1), fixed(watch.peakRssMB, 1))
        print()
        print(
            "idle daemon over \(idle.seconds) s: CPU \(fixed(idle.cpuMs, 0)) ms, \(fixed(idle.wakeupsPerS, 1)) wake-ups/s, "
                + "RSS \(fixed(idle.rssMB, 1)) MB (anonymous \(fixed(idle.anonymousRssMB, 1)) MB, the rest shared libraries)"
        )
        print("SIGTERM: exit status \(idle.exitStatus) after \(fixed(idle.stopS, 2)) s")
    }

    func printPacing(_ run: Phase, _ watch: Phase, _ both: Pacing) {
        guard let limit = requestsPerMinute, let a = run.pacing, let b = watch.pacing else { return }
        func row(_ label: String, _ values: [String]) {
            print(
                label.padding(toLength: 40, withPad: " ", startingAt: 0)
                    + zip(values, [12, 14, 20]).map { pad($0, $1) }.joined())
        }
        print()
        print(
            "pacing at requests_per_minute = \(limit) (one request every \(fixed(turnInterval ?? 0, 2)) s)"
                + (providerQuota ? ", the provider refusing more than \(limit) a minute:" : ":"))
        row("", ["shelfd run", "shelfd watch", "run beside watch"])
        row("photos per minute", [a, b, both].map { fixed($0.photosPerMinute, 2) })
        row(
            "  ÷ requests_per_minute (ideal \(fixed(60 / (turnInterval ?? 1) / Double(limit), 3)))",
            [a, b, both].map { fixed($0.ratioToLimit, 3) })
        row("requests (one per photo: \(photos))", [a, b, both].map { "\($0.requests)" })
        row("  refused by the provider (HTTP 429)", [a, b, both].map { "\($0.refused)" })
        row("most requests in any 60 s (limit \(limit))", [a, b, both].map { "\($0.maxRequestsIn60S)" })
        row("longest gap between requests (s)", [a, b, both].map { fixed($0.longestGapS, 1) })
    }

    // MARK: Helpers

    func shelfdBinary() throws -> URL {
        let url: URL
        if let shelfd {
            url = URL(fileURLWithPath: shelfd)
        } else {
            let me =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
            url = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("shelfd")
        }
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw ValidationError(
                "No shelfd at \(url.path). Build it ('swift build -c release') or pass --shelfd PATH.")
        }
        return url
    }

    func name(_ phase: String, _ i: Int) -> String { "\(phase)-\(String(format: "%04d", i)).jpg" }

    /// Polls `condition` every 10 ms; throws, showing the end of the daemon's log, after `timeout`.
    func waitUntil(_ what: String, timeout: Duration, log: URL, _ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else {
                throw BenchError("Timed out waiting for \(what):\n\(tail(log))")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    func tail(_ log: URL) -> String {
        let lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
        return lines.suffix(15).joined(separator: "\n")
    }
}

struct Phase: Encodable {
    var wallS: Double
    /// Spawn (run) or drop (watch) to the first request the emulator saw.
    var startupS: Double?
    var photosPerS: Double
    var ratioToIdeal: Double
    var ratioToIdealAfterStartup: Double?
    var meanProviderMs: Double?
    var ratioToServiceTimeAfterStartup: Double?
    var cpuMsPerPhoto: Double
    var peakRssMB: Double
    var pacing: Pacing?
}

/// A phase measured against the rate limit.
struct Pacing: Encodable {
    var photosPerMinute: Double
    /// Photos per minute ÷ requests_per_minute: 1.0 when every interval the limit allows was used.
    var ratioToLimit: Double
    var requests: Int
    /// Answered 429 by the emulator's per-minute quota (`--provider-quota`).
    var refused: Int
    var maxRequestsIn60S: Int
    var longestGapS: Double
    var wallS: Double
}

struct Idle: Encodable {
    var seconds: Int
    var cpuMs: Double
    var wakeupsPerS: Double
    var rssMB: Double
    /// Heap and stacks: RSS without the pages of shared libraries and the binary.
    var anonymousRssMB: Double
    var exitStatus: Int32
    var stopS: Double
}

struct Report: Encodable {
    var photos: Int
    var latencyMs: Int
    var concurrency: Int
    var batchSize: Int
    var requestsPerMinute: Int?
    var providerQuota: Bool
    var idealPhotosPerS: Double
    var run: Phase
    var watch: Phase
    var runBesideWatch: Pacing?
    var idle: Idle
    /// A new daemon with the offline default, nothing queued, 25 s after start.
    var freshIdle: Idle
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
func pad(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
