import Foundation
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("shelfd watch, as systemd runs it", .serialized)
struct DaemonTests {
    @Test(
        "Photos arriving every way a person or a sync tool delivers them are each catalogued once",
        .timeLimit(.minutes(2)))
    func daemonCataloguesPhotosAsTheyArrive() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let early = JPEGFactory.shelf(seed: 100)
            try root.drop(early, as: "before-start.jpg") // there before the daemon starts
            let daemon = try root.startDaemon()
            try await waitUntil("the daemon has started") { try await root.status().daemon.running }
            let running = try await root.status()
            #expect(running.daemon.pid == daemon.process.processIdentifier)
            #expect(running.daemon.watchMode == "inotify")

            try root.drop(JPEGFactory.shelf(seed: 101), as: "copied.jpg")
            try await root.dropSlowly(
                JPEGFactory.shelf(width: 1200, height: 900, seed: 102), as: "slow.jpg",
                chunks: 4, pause: .milliseconds(400))
            try root.dropViaRename(JPEGFactory.shelf(seed: 103), as: "synced.jpg")
            try root.drop(JPEGFactory.shelf(seed: 104), as: "new-shelf/deeper/IMG_9.jpg") // new sub-folders
            try root.drop(early, as: "copy-of-before-start.jpg") // same photo again
            let gone = try root.drop(JPEGFactory.shelf(seed: 105), as: "deleted-at-once.jpg")
            try FileManager.default.removeItem(at: gone) // gone before it settles

            try await waitUntil("five photos are done", timeout: .seconds(60)) {
                try await root.status().queue.done == 5
            }
            try FileManager.default.moveItem(
                at: root.incoming.appendingPathComponent("copied.jpg"),
                to: root.incoming.appendingPathComponent("renamed.jpg"))
            try await Task.sleep(for: .seconds(1)) // give a mistaken second job time to appear

            let results = try root.resultDocuments()
            #expect(
                results.map(\.photo.path) == [
                    "before-start.jpg", "copied.jpg", "new-shelf/deeper/IMG_9.jpg",
                    "slow.jpg", "synced.jpg",
                ])
            #expect(results.first { $0.photo.path == "slow.jpg" }?.photo.width == 1200, "taken only once complete")
            #expect(Set(gemini.requests.compactMap(\.photoSHA256)).count == 5)
            #expect(gemini.requests.count == 5, "a copy, a rename and a re-drop are sightings, not requests")
            let library = try root.library()
            #expect(library.books.map(\.title).sorted() == ["Dune", "The Hobbit"])
            #expect(library.books.first?.sightingsCount == 5)
            let status = try await root.status()
            #expect(status.queue.pending == 0 && status.queue.dead == 0 && status.problems.isEmpty)

            #expect(try await daemon.stop() == 0)
            #expect(try await root.status().daemon.running == false)
        }
    }

    @Test(
        "SIGTERM mid-batch: requests in flight finish, the rest go back to the queue, exit 0, nothing lost",
        .timeLimit(.minutes(2)))
    func sigtermLetsInFlightRequestsFinish() async throws {
        try await withGeminiEmulator(GeminiEmulator.Script(latency: .seconds(2), reply: .books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            for seed in 200..<206 { try root.drop(JPEGFactory.shelf(seed: seed), as: "\(seed).jpg") }
            let daemon = try root.startDaemon()
            try await waitUntil("a request is in flight") { gemini.maxConcurrentRequests >= 1 }
            #expect(try await daemon.stop() == 0)
            let answered = gemini.requests.filter { $0.status == 200 }.count
            #expect(answered >= 1, "the requests in flight were allowed to finish")
            #expect(gemini.maxConcurrentRequests <= 2, "never more requests at once than pipeline.concurrency")

            let afterStop = try await root.status()
            #expect(afterStop.queue.leased == 0 && afterStop.queue.dead == 0)
            #expect(afterStop.queue.done == answered, "every answered photo was committed")
            #expect(afterStop.queue.done + afterStop.queue.pending == 6)

            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try await root.status().queue.done == 6)
            #expect(gemini.requests.count == 6, "no photo was sent twice")
        }
    }

    @Test(
        "SIGTERM while the daemon starts, before it listens for signals: it stops gracefully, exit 0, the photo is read later",
        .timeLimit(.minutes(2)))
    func sigtermDuringStart() async throws {
        try await withGeminiEmulator(GeminiEmulator.Script(latency: .seconds(2), reply: .books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 210), as: "210.jpg")
            for _ in 0..<3 {
                let daemon = try root.startDaemon()
                // "Watching" is logged just before the daemon's services start and its own signal handling begins.
                let deadline = ContinuousClock.now + .seconds(30)
                while !daemon.logText.contains("Watching") && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(1))
                }
                kill(daemon.process.processIdentifier, SIGTERM)
                #expect(try await daemon.waitForExit(timeout: .seconds(40)) == 0, "\(daemon.logText)")
                #expect(daemon.process.terminationReason == .exit, "ended by its own exit, not by the signal")
            }
            let status = try await root.status()
            #expect(!status.daemon.running && status.queue.leased == 0 && status.queue.dead == 0)
            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try root.resultDocuments().map(\.photo.path) == ["210.jpg"], "the photo was not lost to the stops")
        }
    }

    @Test(
        "kill -9 at each failpoint, then a restart: one result per photo, no duplicate, nothing paid twice",
        .timeLimit(.minutes(3)), arguments: ["after_claim", "after_response_saved", "mid_write", "before_commit"])
    func killAtFailpointThenRestart(failpoint: String) async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photos = (300..<303).map { JPEGFactory.shelf(seed: $0) }
            for (index, photo) in photos.enumerated() { try root.drop(photo, as: "shelf-\(index).jpg") }

            let killed = try await root.shelfd("run", environment: ["SHELFD_FAILPOINT": failpoint])
            #expect(killed.status == SIGKILL, "the failpoint killed the process: \(killed.stderr)")
            #expect(killed.stderr.contains("failpoint \(failpoint)"))
            // Answers saved on disk before the kill, named <sha256>-<job>-<attempt>.json.
            let responses = root.state.appendingPathComponent("responses")
            let saved = Set(
                try FileManager.default.contentsOfDirectory(atPath: responses.path).map { String($0.prefix(64)) })
            // Every failpoint past after_claim is reached after an answer was saved.
            if failpoint != "after_claim" { #expect(!saved.isEmpty, "an answer was saved before the kill") }
            // Until the next start, status says who holds the photos still in progress.
            let held = try await root.shelfd("status").stdout
            #expect(
                held.contains("\n          3 photos in progress are held by a process that stopped: the next start"),
                "\(held)")

            let restarted = try await root.shelfd("run")
            #expect(restarted.status == 0, "\(restarted.stderr)")
            let results = try root.resultDocuments()
            #expect(results.count == 3, "exactly one result per photo")
            #expect(Set(results.map(\.photo.sha256)) == Set(photos.map { SHA256.hex(of: $0) }))
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: root.results.path).filter {
                $0.hasSuffix(".tmp")
            }
            #expect(leftovers.isEmpty, "no half-written file is left behind")
            let library = try root.library()
            #expect(library.books.map(\.title).sorted() == ["Dune", "The Hobbit"])
            for photo in photos {
                let asked = gemini.requests.filter { $0.photoSHA256 == sentSHA256(photo) }.count
                if saved.contains(SHA256.hex(of: photo)) {
                    #expect(asked == 1, "an answer saved before the kill is replayed, not paid for again")
                } else {
                    #expect(asked >= 1 && asked <= 2, "asked again only because no answer was saved")
                }
            }
            if failpoint == "after_claim" { #expect(saved.isEmpty) }
            let status = try await root.status()
            #expect(status.queue.done == 3 && status.queue.leased == 0 && status.queue.pending == 0)
        }
    }

    @Test(
        "A photo that kills the process each time it is read stops nothing: the others are read, it is dead after three",
        .timeLimit(.minutes(3)))
    func photoThatKillsTheProcess() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit]))) { gemini in
            let root = try ShelfRoot(
                geminiURL: gemini.baseURL, overrides: ["pipeline": ["batch_size": "1", "concurrency": "1"]])
            let photos = (320..<323).map { JPEGFactory.shelf(seed: $0) }
            for (index, photo) in photos.enumerated() { try root.drop(photo, as: "shelf-\(index).jpg") }
            let deadly = ["SHELFD_FAILPOINT": "reading_photo@shelf-1.jpg"]

            // Each start that reads it dies, with whatever else it had in hand. Those photos go behind the ones that
            // waited; once held at two deaths, each goes alone, so the photos it took down with it are read, and it is
            // read a third time, alone, and dies. The next start finds it dead and reads nothing more (exit 3: a
            // problem to see).
            var starts: [Int32] = []
            while starts.last != 3 && starts.count < 6 {
                starts.append(try await root.shelfd("run", environment: deadly).status)
            }
            #expect(starts.filter { $0 == SIGKILL }.count == 3 && starts.last == 3, "\(starts)")
            #expect(try root.resultDocuments().map(\.photo.path).sorted() == ["shelf-0.jpg", "shelf-2.jpg"])
            let status = try await root.status()
            #expect(status.queue.done == 2 && status.queue.dead == 1 && status.queue.pending == 0)
            let problem = try #require(status.problems.first { $0.path == "shelf-1.jpg" })
            #expect(problem.code == "process_died")
            #expect(problem.message.contains("the process died while this photo was being read, 3 times"))
            let asked = photos.map { photo in gemini.requests.filter { $0.photoSHA256 == sentSHA256(photo) }.count }
            // Never once per restart: at most once for each start that died holding it, and once more.
            #expect(asked[1] == 0 && (1...3).contains(asked[0]) && (1...2).contains(asked[2]), "asked: \(asked)")
        }
    }

    @Test(
        "kill -9 while a request is in flight: the photo is asked again after a pause, and has one result",
        .timeLimit(.minutes(2)))
    func killDuringRequestResendsOnce() async throws {
        try await withGeminiEmulator(GeminiEmulator.Script(latency: .seconds(3), reply: .books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(seed: 400)
            try root.drop(photo, as: "a.jpg")
            let daemon = try root.startDaemon()
            try await waitUntil("the request is in flight") { gemini.maxConcurrentRequests >= 1 }
            try await daemon.kill9()
            gemini.setScript(.always(.books([dune])))
            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try root.resultDocuments().count == 1)
            #expect(gemini.requests.filter { $0.photoSHA256 == sentSHA256(photo) }.count <= 2)
            #expect(try await root.status().queue.done == 1)
        }
    }

    @Test(
        "Under systemd: READY=1 after the startup scan, a STATUS= line, STOPPING=1 on SIGTERM",
        .timeLimit(.minutes(1)))
    func speaksTheNotifyProtocol() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let socket = try NotifySocket(path: root.base.appendingPathComponent("notify.sock").path)
            let daemon = try root.startDaemon(environment: ["NOTIFY_SOCKET": socket.path])
            var messages: [String] = []
            try await waitUntil("READY=1 arrives") {
                messages += socket.receiveAll(); return messages.contains("READY=1")
            }
            #expect(messages.contains { $0.hasPrefix("STATUS=") })
            #expect(try await daemon.stop() == 0)
            messages += socket.receiveAll()
            #expect(messages.contains("STOPPING=1"))
        }
    }

    @Test(
        "WATCHDOG=1 is sent while the scheduler's loop turns, and stops once the loop hangs",
        .timeLimit(.minutes(2)))
    func watchdogFollowsTheSchedulerLoop() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let socket = try NotifySocket(path: root.base.appendingPathComponent("notify.sock").path)
            // systemd's WatchdogSec=2: shelfd pings every second while healthy.
            let daemon = try root.startDaemon(environment: [
                "NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "2000000",
                "SHELFD_FAILPOINT": "scheduler_hang",
            ])
            defer { kill(daemon.process.processIdentifier, SIGKILL) }
            var pings = 0
            try await waitUntil("three WATCHDOG=1 pings arrive from the idle daemon") {
                pings += socket.receiveAll().filter { $0 == "WATCHDOG=1" }.count
                return pings >= 3
            }

            // A photo: the loop claims it and hangs there.
            try root.drop(JPEGFactory.shelf(seed: 420), as: "a.jpg")
            try await waitUntil("the scheduler's loop hangs") {
                daemon.logText.contains("failpoint scheduler_hang reached")
            }
            // The loop counts as alive for WatchdogSec after its last turn; then no ping for 3 × WatchdogSec.
            var quietSince = ContinuousClock.now
            try await waitUntil("the pings stop", timeout: .seconds(60)) {
                if socket.receiveAll().contains("WATCHDOG=1") { quietSince = .now }
                return ContinuousClock.now - quietSince > .seconds(6)
            }
            #expect(daemon.process.isRunning, "the daemon is alive: the pings stopped because its loop hangs")
            #expect(daemon.logText.contains("scheduler_stuck"), "the hang is logged for a person")
            #expect(gemini.requests.isEmpty, "the hung loop sent nothing")
            try await daemon.kill9()
        }
    }
}

/// A bound datagram socket standing in for systemd's notify socket.
final class NotifySocket {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = fcntl(fd, F_SETFL, O_NONBLOCK)
    }

    deinit { close(fd); unlink(path) }

    /// Every datagram waiting now.
    func receiveAll() -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return messages }
            messages.append(String(decoding: buffer[0..<n], as: UTF8.self))
        }
    }
}
