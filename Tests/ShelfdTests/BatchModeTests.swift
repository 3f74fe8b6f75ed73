import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfStore
import ShelfTesting
import Testing

@Suite("Batch mode: Gemini's Batch API through the binary", .serialized)
struct BatchModeTests {
    /// Batch mode with a poll every second, pointed at the emulator.
    func root(_ gemini: GeminiEmulator, mode: String = "batch", poll: Int = 1) throws -> ShelfRoot {
        try ShelfRoot(
            geminiURL: gemini.baseURL, overrides: ["gemini": ["mode": "\"\(mode)\"", "batch_poll_s": "\(poll)"]])
    }

    func script(_ apiScript: BatchAPIScript) -> GeminiEmulator.Script {
        var script = GeminiEmulator.Script.always(.books([dune]))
        script.batchAPI = apiScript
        return script
    }

    /// Every photo has exactly one result, none was read twice (no earlier run kept in results/.history), and the
    /// library holds one entry seen in every photo.
    func expectEachPhotoDoneOnce(_ root: ShelfRoot, photos: Int) throws {
        let results = try root.resultDocuments()
        #expect(results.count == photos)
        #expect(Set(results.map(\.photo.path)).count == photos)
        #expect(results.allSatisfy { $0.books.map(\.title) == ["Dune"] })
        let history = root.results.appendingPathComponent(".history")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: history.path)) ?? []).isEmpty)
        let library = try root.library()
        #expect(library.books.count == 1)
        #expect(library.books.first?.sightingsCount == photos)
    }

    @Test(
        "60 photos, the daemon killed with kill -9 while the Batch API job runs and started again: one job, every photo done once",
        .timeLimit(.minutes(4)))
    func crashWhileBatchRuns() async throws {
        try await withGeminiEmulator(script(BatchAPIScript(pendingFor: .seconds(2), runningFor: .seconds(2)))) {
            gemini in
            // The daemon sends a Batch API job once photos stopped arriving for a poll interval: the 60 go as one.
            let root = try root(gemini, poll: 2)
            for n in 1...60 { try root.drop(JPEGFactory.shelf(seed: 5000 + n), as: "IMG_\(n).jpg") }

            let daemon = try root.startDaemon()
            try await waitUntil("a Batch API job is submitted", timeout: .seconds(60)) {
                gemini.batchAPIJobsCreated.count == 1
            }
            try await daemon.kill9()
            #expect(gemini.batchAPIJobState(gemini.batchAPIJobsCreated[0].name) != "BATCH_STATE_SUCCEEDED")

            let again = try root.startDaemon()
            try await waitUntil("every photo is done", timeout: .seconds(90)) {
                let status = try await root.status()
                return status.queue.done + status.queue.review == 60 && status.batchAPIJobs == nil
            }
            #expect(try await again.stop() == 0)

            #expect(gemini.batchAPIJobsCreated.count == 1)
            #expect(gemini.batchAPIJobsCreated.first?.photos.count == 60)
            #expect(gemini.requests.filter { $0.path.hasSuffix(":generateContent") }.isEmpty) // nothing sent one by one
            try expectEachPhotoDoneOnce(root, photos: 60)
        }
    }

    @Test(
        "Two workers on one PostgreSQL in batch mode, 30 photos at one: each photo in one Batch API job only, all done once",
        .timeLimit(.minutes(3)))
    func batchesOnASharedStore() async throws {
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            try await withGeminiEmulator(
                script(BatchAPIScript(pendingFor: .milliseconds(500), runningFor: .milliseconds(500)))
            ) { gemini in
                let overrides: [String: [String: String]] = [
                    "store": ["url": "\"\(url)\""], "gemini": ["mode": "\"batch\"", "batch_poll_s": "1"],
                ]
                let roots = try (0..<2).map { _ in try ShelfRoot(geminiURL: gemini.baseURL, overrides: overrides) }
                let daemons = try roots.map { try $0.startDaemon() }
                for n in 1...30 { try roots[0].drop(JPEGFactory.shelf(seed: 5_300 + n), as: "IMG_\(n).jpg") }
                try await waitUntil("every photo is done", timeout: .seconds(120)) {
                    let status = try await roots[1].status()
                    return status.queue.done == 30 && status.batchAPIJobs == nil
                }
                for daemon in daemons { #expect(try await daemon.stop() == 0) }

                #expect(
                    gemini.requests.filter { $0.path.hasSuffix(":generateContent") }.isEmpty, "nothing sent one by one")
                #expect(
                    gemini.batchAPIJobsCreated.map(\.photos.count).reduce(0, +) == 30,
                    "each photo in one Batch API job: \(gemini.batchAPIJobsCreated.map(\.photos.count))")
                let library = try roots[0].library()
                #expect(library.books.count == 1)
                #expect(library.books.first?.sightingsCount == 30)
            }
        }
    }

    @Test(
        "Killed between submitting a Batch API job and saving its name: the next run finds it by display name, submits nothing twice",
        .timeLimit(.minutes(2)))
    func crashBeforeTheNameIsSaved() async throws {
        try await withGeminiEmulator(
            script(BatchAPIScript(pendingFor: .milliseconds(300), runningFor: .milliseconds(300)))
        ) { gemini in
            let root = try root(gemini)
            for n in 1...4 { try root.drop(JPEGFactory.shelf(seed: 6000 + n), as: "IMG_\(n).jpg") }
            let crashed = try await root.shelfd(
                ["run"], environment: ["SHELFD_FAILPOINT": "batch_api_job_after_submit"])
            #expect(crashed.status != 0)
            #expect(gemini.batchAPIJobsCreated.count == 1)

            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(gemini.batchAPIJobsCreated.count == 1)
            try expectEachPhotoDoneOnce(root, photos: 4)
        }
    }

    @Test(
        "A results file with a broken line: that photo goes again alone, in a Batch API job of its own, and is done",
        .timeLimit(.minutes(2)))
    func brokenResultLine() async throws {
        let apiScript = BatchAPIScript(
            pendingFor: .milliseconds(200), runningFor: .milliseconds(300), resultsAsFile: true, brokenFirstLine: [1])
        try await withGeminiEmulator(script(apiScript)) { gemini in
            let root = try root(gemini, mode: "sync")
            for n in 1...3 { try root.drop(JPEGFactory.shelf(seed: 7000 + n), as: "IMG_\(n).jpg") }
            let run = try await root.shelfd("run", "--batch")
            #expect(run.status == 0, "\(run.stderr)")

            #expect(gemini.batchAPIJobsCreated.map(\.photos.count) == [3, 1])
            #expect(gemini.batchAPIJobsCreated.last?.photos.first == gemini.batchAPIJobsCreated.first?.photos.first)
            #expect(gemini.requests.contains { $0.path.hasPrefix("/download/v1beta/files/") })
            try expectEachPhotoDoneOnce(root, photos: 3)
        }
    }

    @Test(
        "An error line that is Gemini's trouble (500): that photo goes again, no attempt used, and is done",
        .timeLimit(.minutes(2)))
    func errorResultLine() async throws {
        let apiScript = BatchAPIScript(
            pendingFor: .milliseconds(200), runningFor: .milliseconds(300), errorFirstLine: [1])
        try await withGeminiEmulator(script(apiScript)) { gemini in
            let root = try root(gemini)
            for n in 1...3 { try root.drop(JPEGFactory.shelf(seed: 7400 + n), as: "IMG_\(n).jpg") }
            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(gemini.batchAPIJobsCreated.map(\.photos.count) == [3, 1])
            try expectEachPhotoDoneOnce(root, photos: 3)
            let store = try #require(
                try Store.openForReading(path: root.state.appendingPathComponent("shelfd.db").path))
            #expect(
                try store.read { db in
                    try db.query("SELECT attempts FROM job ORDER BY id").compactMap { $0.int("attempts") }
                } == [1, 1, 1])
        }
    }

    @Test(
        "A bad key: run --batch stops with the provider paused, submits nothing, and the photos stay queued",
        .timeLimit(.minutes(2)))
    func badKey() async throws {
        var script = script(BatchAPIScript())
        script.apiKey = "another-key"
        try await withGeminiEmulator(script) { gemini in
            let root = try root(gemini, mode: "sync")
            for n in 1...2 { try root.drop(JPEGFactory.shelf(seed: 7500 + n), as: "IMG_\(n).jpg") }
            let run = try await root.shelfd("run", "--batch")
            #expect(run.status == 3)
            #expect(run.stderr.contains("paused"), "\(run.stderr)")
            #expect(gemini.batchAPIJobsCreated.isEmpty)
            let status = try await root.status()
            #expect(status.queue.pending == 2 && status.batchAPIJobs == nil)
        }
    }

    @Test(
        "An expired Batch API job puts its photos back, no attempt used; they are done in the next; batch list shows both",
        .timeLimit(.minutes(2)))
    func expiredBatch() async throws {
        let apiScript = BatchAPIScript(
            pendingFor: .milliseconds(200), runningFor: .milliseconds(300), outcomes: ["BATCH_STATE_EXPIRED"])
        try await withGeminiEmulator(script(apiScript)) { gemini in
            let root = try root(gemini)
            for n in 1...2 { try root.drop(JPEGFactory.shelf(seed: 7100 + n), as: "IMG_\(n).jpg") }
            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(gemini.batchAPIJobsCreated.map(\.photos.count) == [2, 2])
            try expectEachPhotoDoneOnce(root, photos: 2)

            let store = try #require(
                try Store.openForReading(path: root.state.appendingPathComponent("shelfd.db").path))
            #expect(
                try store.read { db in try db.query("SELECT attempts FROM job").compactMap { $0.int("attempts") } } == [
                    1, 1,
                ])
            let list = try await root.shelfd("batch", "list")
            #expect(list.status == 0)
            #expect(list.stdout.contains("expired") && list.stdout.contains("succeeded"))
            #expect(list.stdout.contains(gemini.batchAPIJobsCreated[0].name))
        }
    }

    @Test(
        "Back to sync mode with a Batch API job in flight: the daemon still collects it and sends none of its photos one by one",
        .timeLimit(.minutes(2)))
    func syncModeCollectsBatchesInFlight() async throws {
        try await withGeminiEmulator(script(BatchAPIScript(pendingFor: .seconds(2), runningFor: .seconds(1)))) {
            gemini in
            let root = try root(gemini)
            for n in 1...3 { try root.drop(JPEGFactory.shelf(seed: 7300 + n), as: "IMG_\(n).jpg") }
            let (run, _, _) = try root.process(["run"], logName: "batch-run")
            try run.run()
            try await waitUntil("the Batch API job's name is saved", timeout: .seconds(60)) {
                try await root.status().batchAPIJobs?.first?.name != nil
            }
            kill(run.processIdentifier, SIGKILL)
            run.waitUntilExit()

            try root.writeConfig(
                geminiURL: gemini.baseURL, overrides: ["gemini": ["mode": "\"sync\"", "batch_poll_s": "1"]])
            let daemon = try root.startDaemon()
            try await waitUntil("every photo is done", timeout: .seconds(60)) {
                let status = try await root.status()
                return status.queue.done + status.queue.review == 3 && status.batchAPIJobs == nil
            }
            #expect(try await daemon.stop() == 0)
            #expect(gemini.batchAPIJobsCreated.count == 1)
            #expect(gemini.requests.filter { $0.path.hasSuffix(":generateContent") }.isEmpty)
            try expectEachPhotoDoneOnce(root, photos: 3)
        }
    }

    @Test(
        "status shows a Batch API job in flight (text and --json); batch cancel cancels it and its photos go back",
        .timeLimit(.minutes(2)))
    func statusListAndCancel() async throws {
        try await withGeminiEmulator(script(BatchAPIScript(pendingFor: .seconds(600)))) { gemini in
            let root = try root(gemini)
            for n in 1...5 { try root.drop(JPEGFactory.shelf(seed: 7200 + n), as: "IMG_\(n).jpg") }
            let daemon = try root.startDaemon()
            var name = ""
            try await waitUntil("the Batch API job's name is saved", timeout: .seconds(60)) {
                name = try await root.status().batchAPIJobs?.first?.name ?? ""
                return !name.isEmpty
            }
            let status = try await root.status()
            let inFlight = try #require(status.batchAPIJobs?.first)
            #expect(inFlight.photos == 5 && inFlight.state == "pending" && inFlight.ageS >= 0)
            let text = try await root.shelfd("status")
            #expect(
                text.stdout.contains("Batch API job") && text.stdout.contains(name) && text.stdout.contains("5 photos"))
            #expect(try await root.shelfd("batch", "list").stdout.contains(name))

            let cancel = try await root.shelfd("batch", "cancel", name)
            #expect(cancel.status == 0, "\(cancel.stderr)")
            #expect(gemini.batchAPIJobState(name) == "BATCH_STATE_CANCELLED")
            // The daemon sees it cancelled and sends the photos again, in a new Batch API job.
            try await waitUntil("the photos go in a new Batch API job", timeout: .seconds(30)) {
                gemini.batchAPIJobsCreated.count == 2
            }
            #expect(gemini.batchAPIJobsCreated[1].photos.count == 5)
            #expect(try await daemon.stop() == 0)
        }
    }
}
