import Foundation
import ShelfTesting

/// `--kills`: what a crash costs. Photos wait in incoming/, `shelfd watch` starts, and is killed with SIGKILL after
/// each of the given delays from its start, then started again; after the last kill it runs until every photo has its
/// result. Every request is paid for: the report is how many times each photo was asked (the target is at most two: a
/// photo whose request a kill cut off waits out a pause that restarts seconds apart do not reach), and whether any
/// photo was lost or counted twice.
extension ThroughputBenchmark {
    func measureCrashes(_ binary: URL, named label: String, emulator: GeminiEmulator, seed: Int) throws -> Crashes {
        let root = try BenchRoot(
            geminiURL: emulator.baseURL, apiKey: GeminiEmulator.defaultKey, concurrency: concurrency,
            batchSize: batchSize)
        defer { if keep { print("Kept \(root.base.path)") } else { root.remove() } }
        for i in 0..<photos { try root.drop(JPEGFactory.shelf(seed: seed + i), as: name("crash", i)) }
        let before = emulator.requests.count
        let start = ContinuousClock.now

        var starts = 0
        func started() throws -> Child {
            starts += 1
            return try Child(
                binary, ["watch", "--config", root.configFile.path], environment: root.environment,
                log: root.log("watch-\(starts)"))
        }
        for delay in killDelays {
            let child = try started()
            Thread.sleep(forTimeInterval: delay)
            child.kill()
            guard child.waitForExit(timeout: .seconds(10)) != nil else { throw BenchError("a killed shelfd lingers") }
        }
        let last = try started()
        defer { last.kill(); _ = last.waitForExit(timeout: .seconds(10)) }
        // Until nothing waits: every photo done, to review, or failed for good (lost).
        try waitUntil("the queue to empty after the kills", timeout: phaseTimeout, log: root.log("watch-\(starts)")) {
            guard let queue = queueCounts(binary, root) else { return false }
            return ["pending", "leased", "failed"].allSatisfy { queue[$0, default: 1] == 0 }
        }
        let wall = ContinuousClock.now - start
        last.terminate()
        _ = last.waitForExit(timeout: .seconds(60))

        // Per photo, by the image it sent (the emulator hashes what it decodes); a photo never asked counts 0.
        let asked = Dictionary(
            emulator.requests.dropFirst(before).compactMap(\.photoSHA256).map { ($0, 1) }, uniquingKeysWith: +)
        let counts = asked.values.sorted(by: >) + Array(repeating: 0, count: max(0, photos - asked.count))
        let queue = queueCounts(binary, root) ?? [:]
        let finished = queue["done", default: 0] + queue["review", default: 0]
        let (works, sightings) = librarySightings(root)
        return Crashes(
            binary: label, photos: photos, kills: killDelays.count, requests: counts.reduce(0, +),
            mostAskedPhoto: counts.first ?? 0, photosAskedMoreThanTwice: counts.filter { $0 > 2 }.count,
            askedPerPhoto: counts, finished: finished, lost: photos - finished,
            libraryWorks: works, sightingsPerWork: works == 0 ? 0 : Double(sightings) / Double(works),
            wallS: wall.seconds)
    }

    /// The queue's counts as `shelfd status --json` gives them (read as plain JSON, so an older build's answer reads).
    func queueCounts(_ binary: URL, _ root: BenchRoot) -> [String: Int]? {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["status", "--json", "--config", root.configFile.path]
        process.environment = root.environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let status = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let object = try? JSONSerialization.jsonObject(with: status) as? [String: Any],
            let queue = object["queue"] as? [String: Any]
        else { return nil }
        return queue.compactMapValues { $0 as? Int }
    }

    /// The works in library.json and their sightings: each emulated photo shows the same books, so every work is
    /// seen once per photo when nothing was lost or counted twice.
    func librarySightings(_ root: BenchRoot) -> (works: Int, sightings: Int) {
        let url = root.root.appendingPathComponent("library.json")
        guard let data = try? Data(contentsOf: url),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let books = object["books"] as? [[String: Any]]
        else { return (0, 0) }
        let sightings = books.map { ($0["sightings_count"] as? Int) ?? (($0["sightings"] as? [Any])?.count ?? 0) }
        return (books.count, sightings.reduce(0, +))
    }

    func printCrashes(_ runs: [Crashes]) {
        func row(_ label: String, _ values: [String]) {
            print(label.padding(toLength: 44, withPad: " ", startingAt: 0) + values.map { pad($0, 22) }.joined())
        }
        print()
        print(
            "\(photos) photos, provider latency \(latencyMs) ms, concurrency \(concurrency), batch size \(batchSize); "
                + "kill -9 after \(killDelays.map { fixed($0, 1) }.joined(separator: ", ")) s from each start")
        row("", runs.map(\.binary))
        row("requests (one per photo: \(photos))", runs.map { "\($0.requests)" })
        row("  ÷ photos", runs.map { fixed(Double($0.requests) / Double(photos), 2) })
        row("most requests for one photo (target ≤ 2)", runs.map { "\($0.mostAskedPhoto)" })
        row("photos asked more than twice", runs.map { "\($0.photosAskedMoreThanTwice)" })
        row("requests per photo", runs.map { $0.askedPerPhoto.map(String.init).joined(separator: " ") })
        row("photos lost (not done)", runs.map { "\($0.lost)" })
        row("library works, sightings per work", runs.map { "\($0.libraryWorks), \(fixed($0.sightingsPerWork, 2))" })
        row("wall time (s)", runs.map { fixed($0.wallS, 1) })
    }
}

/// One binary's run of `--kills`.
struct Crashes: Encodable {
    var binary: String
    var photos: Int
    var kills: Int
    var requests: Int
    var mostAskedPhoto: Int
    var photosAskedMoreThanTwice: Int
    var askedPerPhoto: [Int]
    var finished: Int
    var lost: Int
    var libraryWorks: Int
    var sightingsPerWork: Double
    var wallS: Double
}
