// Workers benchmark: photos per second with 1, 2 and 4 `shelfd watch` workers sharing one PostgreSQL database (a
// server of the benchmark's own, started as the tests start theirs), against the Gemini emulator answering after a
// fixed latency L with [pipeline] concurrency C in each worker, beside the ideal workers × C ÷ L; and one worker on
// SQLite in the same run, the baseline. For each, what a photo costs the database: statements (on a server each is a
// round trip), transactions and which of them write (each holds the one write lock), and the claims with their mean
// time (the write lock's wait included), read from every worker's /metrics (`shelfd_store_*`) before the photos are
// dropped and after the last one is done.
// Numbers are printed, never asserted.
//
//   shelfd-bench-workers [--photos N] [--latency-ms L] [--concurrency C] [--batch-size B] [--workers 1,2,4]
//                        [--shelfd PATH] [--keep]
//
// Each worker has its own root and state folder, as on a machine of its own; every photo is dropped at the first,
// and the others read the image it stored in the database. The request limit is set far above what a run reaches.
import Foundation
import Glibc
import ShelfCore
import ShelfHTTP
import ShelfPostgres
import ShelfStore
import ShelfTesting

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func number(_ name: String, default value: Int) throws -> Int {
    guard let text = option(name) else { return value }
    guard let number = Int(text), number >= 1 else { throw BenchError("\(name) takes a number of at least 1") }
    return number
}

func fixed(_ value: Double?, _ digits: Int) -> String { value.map { String(format: "%.\(digits)f", $0) } ?? "–" }

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// What `/metrics` says a worker sent its database so far.
struct Activity {
    var statements = 0.0, transactions = 0.0, writeTransactions = 0.0, claims = 0.0, claimSeconds = 0.0

    static func - (a: Activity, b: Activity) -> Activity {
        Activity(
            statements: a.statements - b.statements, transactions: a.transactions - b.transactions,
            writeTransactions: a.writeTransactions - b.writeTransactions,
            claims: a.claims - b.claims, claimSeconds: a.claimSeconds - b.claimSeconds)
    }

    static func + (a: Activity, b: Activity) -> Activity {
        Activity(
            statements: a.statements + b.statements, transactions: a.transactions + b.transactions,
            writeTransactions: a.writeTransactions + b.writeTransactions,
            claims: a.claims + b.claims, claimSeconds: a.claimSeconds + b.claimSeconds)
    }

    init(
        statements: Double = 0, transactions: Double = 0, writeTransactions: Double = 0, claims: Double = 0,
        claimSeconds: Double = 0
    ) {
        self.statements = statements; self.transactions = transactions; self.writeTransactions = writeTransactions
        self.claims = claims; self.claimSeconds = claimSeconds
    }

    /// From Prometheus text: `shelfd_store_statements_total 1234` and the like.
    init(prometheus text: String) throws {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("shelfd_store_") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        guard let statements = values["shelfd_store_statements_total"],
            let transactions = values["shelfd_store_transactions_total"],
            let writes = values["shelfd_store_write_transactions_total"],
            let claims = values["shelfd_store_claims_total"],
            let claimSeconds = values["shelfd_store_claim_seconds_total"]
        else {
            throw BenchError("/metrics has no shelfd_store_* counters: is this shelfd older than the benchmark?")
        }
        self.init(
            statements: statements, transactions: transactions, writeTransactions: writes, claims: claims,
            claimSeconds: claimSeconds)
    }
}

/// CPU time of the whole machine from /proc/stat: (busy, total) in clock ticks, to tell how loaded it was.
func machineTicks() -> (busy: Double, total: Double) {
    let text = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? ""
    let fields = (text.split(separator: "\n").first ?? "").split(separator: " ").dropFirst().compactMap { Double($0) }
    guard fields.count >= 5 else { return (0, 0) }
    let total = fields.prefix(8).reduce(0, +)
    return (total - fields[3] - fields[4], total) // idle and iowait are not busy
}

func loadAverage() -> Double {
    Double(((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").first ?? "")
        ?? 0
}

/// User + system CPU of a process so far, in seconds.
func cpuSeconds(_ pid: pid_t) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let paren = text.lastIndex(of: ")")
    else { return 0 }
    let fields = text[text.index(after: paren)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// One `shelfd watch`: its own root, state folder, web port and log.
final class Worker {
    let folder: URL
    let port: Int
    let process = Process()
    var incoming: URL { folder.appendingPathComponent("Shelves/incoming") }
    var log: URL { folder.appendingPathComponent("watch.log") }
    var database: String { folder.appendingPathComponent("state/shelfd.db").path }

    init(_ binary: URL, folder: URL, storeURL: String?, geminiURL: String, concurrency: Int, batchSize: Int) throws {
        self.folder = folder
        port = try freeLoopbackPort()
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("Shelves/incoming"), withIntermediateDirectories: true)
        let config = folder.appendingPathComponent("shelfd.toml")
        // No book source: on SQLite the local catalogue is the store's own file, on PostgreSQL a file beside it, so its
        // lookups would count on one side only.
        try """
        \(storeURL.map { "[store]\nurl = \"\($0)\"\n" } ?? "")
        [paths]
        root = "\(folder.path)/Shelves"
        state = "\(folder.path)/state"

        [pipeline]
        concurrency = \(concurrency)
        batch_size = \(batchSize)

        [watch]
        mode = "inotify"
        settle_ms = 200

        [gemini]
        base_url = "\(geminiURL)"
        requests_per_minute = 100000
        timeout_s = 120

        [enrich]
        sources = []

        [web]
        listen = "127.0.0.1:\(port)"
        """.write(to: config, atomically: true, encoding: .utf8)
        process.executableURL = binary
        process.arguments = ["watch", "--config", config.path]
        process.environment = [
            "HOME": folder.path, "PATH": "/usr/bin:/bin", "GEMINI_API_KEY": GeminiEmulator.defaultKey,
        ]
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    func tail() -> String {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(15).joined(
            separator: "\n")
    }

    func activity(_ http: HTTPClient) async throws -> Activity {
        let response = try await http.send(HTTPRequest(url: "http://127.0.0.1:\(port)/metrics", timeout: .seconds(10)))
        guard response.status == 200 else {
            throw BenchError("GET /metrics of the worker on :\(port) answered \(response.status)")
        }
        return try Activity(prometheus: String(decoding: response.body, as: UTF8.self))
    }

    /// Its startup scan is over (no drop is missed from then on) and its web page answers.
    func waitUntilReady(_ http: HTTPClient) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw BenchError("a worker stopped at start:\n\(tail())") }
            let scanned = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("Full scan finished")
            if scanned, (try? await activity(http)) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchError("a worker was not ready within 120 s:\n\(tail())")
    }

    /// SIGTERM, then its exit status (SIGKILL after a minute).
    func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// One phase: `workers` workers on one engine, the photos dropped at the first, timed to the last one finished.
struct Phase: Encodable {
    var engine: String
    var workers: Int
    var photos: Int
    var idealPhotosPerS: Double
    /// First photo queued → every photo finished (done, or waiting for review).
    var queuedToDoneS: Double
    /// The files dropped → the first photo queued (the watcher's settle time, the first ingest).
    var dropToQueuedS: Double
    var photosPerS: Double
    var ratioToIdeal: Double
    /// From the first photo queued until every worker held photos (the others find work at their next look at the queue).
    var everyWorkerBusyAfterS: Double?
    /// Photos per second while every worker held photos, from one latency after the last one joined.
    var busyPhotosPerS: Double?
    var busyRatioToIdeal: Double?
    var busyWindowS: Double?
    var statementsPerPhoto: Double
    var transactionsPerPhoto: Double
    /// Of those, the write transactions: each holds the database's one write lock.
    var writeTransactionsPerPhoto: Double
    var claimsPerPhoto: Double
    var claimMeanMs: Double
    var providerRequestsPerPhoto: Double
    var workersCPUMsPerPhoto: Double
    /// The whole machine's CPU in use during the phase, every process's (the benchmark shares it with others).
    var machineCPUBusyPercent: Double
    var loadAverageAtStart: Double
    var exitStatuses: [Int32]
}

/// A look at the shared queue from the benchmark's own connection.
struct Sample {
    var at: ContinuousClock.Instant
    var queued: Int
    var finished: Int
    var busyWorkers: Int
}

struct Report: Encodable {
    var photos: Int
    var latencyMs: Int
    var concurrency: Int
    var batchSize: Int
    var phases: [Phase]
}

func runBenchmark() async throws {
    let photos = try number("--photos", default: 200)
    let latencyMs = try number("--latency-ms", default: 1000)
    let concurrency = try number("--concurrency", default: 4)
    let batchSize = try number("--batch-size", default: 5)
    guard concurrency <= 16, batchSize <= 5 else {
        throw BenchError("--concurrency is 1…16 and --batch-size 1…5, as in shelfd.toml")
    }
    let workerCounts = try (option("--workers") ?? "1,2,4").split(separator: ",").map { word in
        guard let n = Int(word), (1...16).contains(n) else {
            throw BenchError("--workers takes counts of 1…16 separated by commas")
        }
        return n
    }
    let keep = CommandLine.arguments.contains("--keep")
    let binary =
        option("--shelfd").map { URL(fileURLWithPath: $0) }
        ?? {
            let me =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
            return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("shelfd")
        }()
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
        throw BenchError("no shelfd at \(binary.path): build it ('swift build -c release') or pass --shelfd PATH")
    }

    let base = FileManager.default.temporaryDirectory.appendingPathComponent(
        "shelfd-bench-workers-\(UUID().uuidString.prefix(8))")
    defer { if keep { print("Kept \(base.path)") } else { try? FileManager.default.removeItem(at: base) } }
    let books = [
        GeminiEmulator.Book(
            title: "Dune", author: "Frank Herbert", isbn: "978-0-441-17271-9", confidence: 0.93,
            box2D: [120, 410, 880, 450]),
        GeminiEmulator.Book(
            title: "The Hobbit", author: "J. R. R. Tolkien", confidence: 0.88, box2D: [100, 500, 900, 540]),
        GeminiEmulator.Book(title: "Solaris", author: "Stanisław Lem", confidence: 0.81, box2D: [130, 560, 890, 590]),
    ]
    let gemini = try GeminiEmulator.start(script: .init(latency: .milliseconds(latencyMs), reply: .books(books)))
    defer { gemini.stop() }
    let server = try await PostgresServer.start()
    defer { server.close() }
    let http = HTTPClient(maxConcurrent: 4)
    let jpegs = (0..<photos).map { JPEGFactory.shelf(seed: 9_000 + $0) } // made before any clock starts

    print(
        "shelfd-bench-workers: \(photos) photos per phase, provider latency \(latencyMs) ms, concurrency \(concurrency) "
            + "and batch size \(batchSize) in each worker; \(ProcessInfo.processInfo.activeProcessorCount) cores, "
            + "load average \(fixed(loadAverage(), 2)) at start")

    let plan = [("sqlite", 1)] + workerCounts.map { ("postgres", $0) }
    var phases: [Phase] = []
    for (index, (engine, count)) in plan.enumerated() {
        let ideal = Double(count * concurrency) / (Double(latencyMs) / 1000)
        print(
            "\(engine == "sqlite" ? "SQLite" : "PostgreSQL"), \(count) worker\(count == 1 ? "" : "s"): ideal \(fixed(ideal, 2)) photos/s…"
        )
        let database = engine == "sqlite" ? nil : try server.createDatabase()
        let storeURL = database.map { server.url(database: $0) }
        let folder = base.appendingPathComponent("\(index)-\(engine)-\(count)")
        var workers: [Worker] = []
        defer { for worker in workers where worker.process.isRunning { _ = worker.stop() } }
        for i in 0..<count {
            workers.append(
                try Worker(
                    binary, folder: folder.appendingPathComponent("worker-\(i + 1)"), storeURL: storeURL,
                    geminiURL: gemini.baseURL, concurrency: concurrency, batchSize: batchSize))
            // The first creates the database; the others start once it is there.
            if i == 0 { try await workers[0].waitUntilReady(http) }
        }
        for worker in workers.dropFirst() { try await worker.waitUntilReady(http) }
        let queue: Store
        if let database {
            queue = try PostgresStore.open(
                .init(host: server.host, port: server.port, user: server.user, database: database, tls: .disable))
        } else {
            guard let store = try Store.openForReading(path: workers[0].database) else {
                throw BenchError("the SQLite worker made no database")
            }
            queue = store
        }

        let loadAtStart = loadAverage()
        var before = Activity()
        for worker in workers { before = before + (try await worker.activity(http)) }
        let requestsBefore = gemini.requests.count
        let cpuBefore = workers.map { cpuSeconds($0.process.processIdentifier) }.reduce(0, +)
        let ticksBefore = machineTicks()
        let dropped = ContinuousClock.now
        for (i, jpeg) in jpegs.enumerated() {
            try Data(jpeg).write(to: workers[0].incoming.appendingPathComponent(String(format: "shelf-%04d.jpg", i)))
        }

        // The shared queue, every 50 ms: photos queued, finished (done, review or dead), and workers holding photos.
        var samples: [Sample] = []
        let deadline = dropped + .seconds(3 * Double(photos) / ideal + 120)
        while samples.last?.finished ?? 0 < photos {
            guard ContinuousClock.now < deadline else {
                throw BenchError("the photos were not done in time:\n\(workers[0].tail())")
            }
            if let stopped = workers.first(where: { !$0.process.isRunning }) {
                throw BenchError("a worker stopped:\n\(stopped.tail())")
            }
            let counts = try queue.status.queueCounts(now: Date())
            let busy = try queue.workers.all().filter { $0.inFlight > 0 }.count
            samples.append(
                Sample(
                    at: .now,
                    queued: counts.pending + counts.leased + counts.done + counts.review + counts.failed + counts.dead,
                    finished: counts.done + counts.review + counts.dead, busyWorkers: busy))
            if counts.dead > 0 { throw BenchError("\(counts.dead) photos failed for good:\n\(workers[0].tail())") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let end = samples.last!.at
        let ticksAfter = machineTicks()
        let cpuAfter = workers.map { cpuSeconds($0.process.processIdentifier) }.reduce(0, +)
        var after = Activity()
        for worker in workers { after = after + (try await worker.activity(http)) }
        let requests = gemini.requests.dropFirst(requestsBefore).filter { $0.photoSHA256 != nil }.count
        let statuses = workers.map { $0.stop() }

        let firstQueued = samples.first { $0.queued > 0 }?.at ?? dropped
        // Every worker holding photos: the rate they sustain together, from one latency after the last one joined (its
        // first answers are still on their way before that) to the last moment all of them held photos.
        let busy = samples.filter { $0.busyWorkers == count }
        let steady = busy.first.map { joined in busy.filter { $0.at >= joined.at + .milliseconds(latencyMs) } } ?? []
        let window: (first: Sample, last: Sample)? = steady.count >= 2 ? (steady[0], steady[steady.count - 1]) : nil
        let busyRate = window.flatMap { window in
            window.last.at > window.first.at
                ? Double(window.last.finished - window.first.finished) / (window.last.at - window.first.at).seconds
                : nil
        }
        let spent = after - before
        let perPhoto = Double(photos)
        let phase = Phase(
            engine: engine, workers: count, photos: photos, idealPhotosPerS: ideal,
            queuedToDoneS: (end - firstQueued).seconds, dropToQueuedS: (firstQueued - dropped).seconds,
            photosPerS: perPhoto / (end - firstQueued).seconds,
            ratioToIdeal: perPhoto / (end - firstQueued).seconds / ideal,
            everyWorkerBusyAfterS: busy.first.map { ($0.at - firstQueued).seconds },
            busyPhotosPerS: busyRate, busyRatioToIdeal: busyRate.map { $0 / ideal },
            busyWindowS: window.map { ($0.last.at - $0.first.at).seconds },
            statementsPerPhoto: spent.statements / perPhoto, transactionsPerPhoto: spent.transactions / perPhoto,
            writeTransactionsPerPhoto: spent.writeTransactions / perPhoto,
            claimsPerPhoto: spent.claims / perPhoto,
            claimMeanMs: spent.claims > 0 ? spent.claimSeconds / spent.claims * 1000 : 0,
            providerRequestsPerPhoto: Double(requests) / perPhoto,
            workersCPUMsPerPhoto: (cpuAfter - cpuBefore) * 1000 / perPhoto,
            machineCPUBusyPercent: 100 * (ticksAfter.busy - ticksBefore.busy)
                / max(1, ticksAfter.total - ticksBefore.total),
            loadAverageAtStart: loadAtStart, exitStatuses: statuses)
        print(
            "  \(fixed(phase.photosPerS, 2)) photos/s (\(fixed(phase.ratioToIdeal, 3)) of ideal); per photo "
                + "\(fixed(phase.statementsPerPhoto, 1)) statements, \(fixed(phase.transactionsPerPhoto, 2)) transactions of which "
                + "\(fixed(phase.writeTransactionsPerPhoto, 2)) write; claims \(fixed(phase.claimMeanMs, 2)) ms on average"
        )
        phases.append(phase)
    }

    print()
    printTable(phases, latencyMs: latencyMs, concurrency: concurrency)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    print(
        String(
            decoding: try encoder.encode(
                Report(
                    photos: photos, latencyMs: latencyMs, concurrency: concurrency,
                    batchSize: batchSize, phases: phases)), as: UTF8.self))
}

func printTable(_ phases: [Phase], latencyMs: Int, concurrency: Int) {
    guard let baseline = phases.first else { return }
    func row(_ label: String, _ value: (Phase) -> String) {
        print(
            label.padding(toLength: 44, withPad: " ", startingAt: 0)
                + phases.map { String(repeating: " ", count: max(0, 13 - value($0).count)) + value($0) }.joined())
    }
    row("") { $0.engine == "sqlite" ? "SQLite" : "PostgreSQL" }
    row("workers") { "\($0.workers)" }
    row("ideal workers × \(concurrency) ÷ \(latencyMs) ms (photos/s)") { fixed($0.idealPhotosPerS, 2) }
    row("photos/s, first queued → all done") { fixed($0.photosPerS, 2) }
    row("  ÷ ideal") { fixed($0.ratioToIdeal, 3) }
    row("  ÷ SQLite, 1 worker") { fixed($0.photosPerS / baseline.photosPerS, 3) }
    row("every worker holding photos after (s)") { fixed($0.everyWorkerBusyAfterS, 2) }
    row("photos/s, every worker holding photos") { fixed($0.busyPhotosPerS, 2) }
    row("  ÷ ideal") { fixed($0.busyRatioToIdeal, 3) }
    row("  over (s)") { fixed($0.busyWindowS, 1) }
    row("statements (round trips) per photo") { fixed($0.statementsPerPhoto, 1) }
    row("  ÷ SQLite") { fixed($0.statementsPerPhoto / baseline.statementsPerPhoto, 3) }
    row("transactions per photo") { fixed($0.transactionsPerPhoto, 2) }
    row("  of which write (the one write lock)") { fixed($0.writeTransactionsPerPhoto, 2) }
    row("claims per photo") { fixed($0.claimsPerPhoto, 3) }
    row("claim, mean (ms)") { fixed($0.claimMeanMs, 2) }
    row("  ÷ SQLite") { fixed($0.claimMeanMs / baseline.claimMeanMs, 2) }
    row("provider requests per photo") { fixed($0.providerRequestsPerPhoto, 3) }
    row("workers' CPU per photo (ms)") { fixed($0.workersCPUMsPerPhoto, 1) }
    row("machine CPU in use, all processes (%)") { fixed($0.machineCPUBusyPercent, 0) }
    row("load average at start") { fixed($0.loadAverageAtStart, 2) }
    row("workers' exit status on SIGTERM") { $0.exitStatuses.map(String.init).joined(separator: ",") }
}

do {
    try await runBenchmark()
} catch {
    FileHandle.standardError.write(Data("shelfd-bench-workers: \(error)\n".utf8))
    exit(1)
}
