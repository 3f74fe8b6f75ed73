import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("The command line", .serialized)
struct CommandLineTests {
    @Test(
        "Usage errors exit 2 and say what to type instead",
        arguments: [["retry"], ["retry", "--failed", "3"], ["frobnicate"], ["status", "--bogus"], ["scan"]])
    func usageErrorsExitTwo(arguments: [String]) async throws {
        let root = try ShelfRoot()
        let result = try await root.shelfd(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(!result.stderr.isEmpty)
    }

    @Test("A usage error found while a command runs shows that command's usage, not the list of commands")
    func runningUsageErrorNamesTheCommand() async throws {
        let result = try await ShelfRoot().shelfd(["hardcover", "push", "--dry-run"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("Error: No Hardcover token"), "\(result.stderr)")
        #expect(result.stderr.contains("Usage: shelfd hardcover push ["), "\(result.stderr)")
        #expect(result.stderr.contains("See 'shelfd hardcover push --help'"), "\(result.stderr)")
    }

    @Test(
        "An edit that changes nothing, an empty title or an ISBN whose checksum fails is refused with what to type",
        arguments: [
            (["library", "edit", "dune"], "Nothing to change: give --title, --author or --isbn."),
            (["review", "edit", "3f2a"], "(or use 'shelfd review accept 3f2a')"),
            (["library", "edit", "dune", "--title", " "], "--title cannot be empty."),
            (["review", "edit", "3f2a", "--isbn", "9780441013594"], "'9780441013594' is not a valid ISBN"),
        ])
    func editsAreChecked(arguments: [String], says: String) async throws {
        let result = try await ShelfRoot().shelfd(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(says), "\(result.stderr)")
    }

    @Test("A misspelt configuration key stops every command with the key, the file and a suggestion")
    func unknownConfigKeyIsNamed() async throws {
        let root = try ShelfRoot(overrides: ["pipeline": ["batchsize": "3"]])
        let result = try await root.shelfd("status")
        #expect(result.status == 1)
        #expect(result.stderr.contains("pipeline.batchsize"))
        #expect(result.stderr.contains(root.configFile.path))
        #expect(result.stderr.contains("batch_size"))
    }

    @Test("status works before anything happened and with no daemon; --require-daemon exits 4")
    func statusOnAFreshInstall() async throws {
        let root = try ShelfRoot()
        let status = try await root.status()
        #expect(status.schema == "shelfd.status/1")
        #expect(status.daemon.running == false)
        #expect(status.queue.pending == 0)
        let text = try await root.shelfd("status")
        #expect(text.status == 0)
        #expect(text.stdout.contains("daemon:   not running"))
        #expect(try await root.shelfd("status", "--require-daemon").status == 4)
    }

    @Test("retry puts a failed photo back; the next run finishes it", .timeLimit(.minutes(1)))
    func retryRequeuesFailedPhotos() async throws {
        try await withGeminiEmulator(.always(.blockedPrompt("OTHER"))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 500), as: "a.jpg")
            #expect(try await root.shelfd("run").status == 3)
            let dead = try await root.status()
            let job = try #require(dead.problems.first?.job)
            #expect(dead.queue.dead == 1)

            gemini.setScript(.always(.books([dune])))
            #expect(try await root.shelfd("retry", "999").status == 1, "an unknown job is reported")
            let retry = try await root.shelfd("retry", "\(job)")
            #expect(retry.status == 0)
            #expect(retry.stdout.contains("Requeued 1 photo"))
            #expect(try await root.shelfd("run").status == 0)
            let status = try await root.status()
            #expect(status.queue.done == 1 && status.queue.dead == 0 && status.problems.isEmpty)
        }
    }

    @Test(
        "doctor passes with a working key and fails, without printing it, with a wrong one",
        .timeLimit(.minutes(1)))
    func doctorChecksTheProvider() async throws {
        try await withGeminiEmulator(.always(.books([]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let good = try await root.shelfd("doctor")
            #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
            #expect(good.stdout.contains("Gemini API key present (from the environment)"))
            #expect(good.stdout.contains("model gemini-2.5-flash is available"))
            #expect(!good.stdout.contains(GeminiEmulator.defaultKey))

            root.environment["GEMINI_API_KEY"] = "AIzaNOPE-123"
            let bad = try await root.shelfd("doctor")
            #expect(bad.status == 1)
            #expect(bad.stdout.contains("✗ provider"))
            #expect(!(bad.stdout + bad.stderr).contains("AIzaNOPE-123"))

            root.environment["GEMINI_API_KEY"] = nil
            let offline = try await root.shelfd("doctor")
            #expect(offline.status == 0, "auto falls back to the offline ocr provider: \(offline.stdout)")
            #expect(offline.stdout.contains("ocr"))
            try root.writeConfig(geminiURL: gemini.baseURL, overrides: ["pipeline": ["provider": "\"gemini\""]])
            let missing = try await root.shelfd("doctor")
            #expect(missing.status == 1)
            #expect(missing.stdout.contains("GEMINI_API_KEY"))
            #expect(gemini.requests.allSatisfy { $0.method == "GET" }, "doctor never pays for a generation")
        }
    }

    @Test("A key from systemd's credentials folder is used before the environment", .timeLimit(.minutes(1)))
    func credentialsDirectoryWins() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, apiKey: "stale-environment-key")
            let credentials = root.base.appendingPathComponent("credentials")
            try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
            try (GeminiEmulator.defaultKey + "\n").write(
                to: credentials.appendingPathComponent("gemini_api_key"),
                atomically: true, encoding: .utf8)
            try root.drop(JPEGFactory.shelf(seed: 510), as: "a.jpg")
            let run = try await root.shelfd("run", environment: ["CREDENTIALS_DIRECTORY": credentials.path])
            #expect(run.status == 0, "\(run.stderr)")
        }
    }

    @Test("after = move puts finished originals in processed/, keeping their sub-folder", .timeLimit(.minutes(1)))
    func afterMoveKeepsSubPaths() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["pipeline": ["after": "\"move\""]])
            try root.drop(JPEGFactory.shelf(seed: 520), as: "study/IMG_1.jpg")
            #expect(try await root.shelfd("run").status == 0)
            #expect(
                FileManager.default.fileExists(
                    atPath: root.root.appendingPathComponent("processed/study/IMG_1.jpg").path))
            #expect(
                !FileManager.default.fileExists(atPath: root.incoming.appendingPathComponent("study/IMG_1.jpg").path))
            #expect(try root.resultDocuments().first?.photo.path == "study/IMG_1.jpg")
        }
    }

    @Test(
        "after = move leaves a new photo written under a finished photo's name, and takes it as new",
        .timeLimit(.minutes(2)))
    func afterMoveLeavesAReusedName() async throws {
        try await withGeminiEmulator(GeminiEmulator.Script(latency: .seconds(3), reply: .books([dune]))) { gemini in
            let root = try ShelfRoot(
                geminiURL: gemini.baseURL,
                overrides: [
                    "pipeline": ["after": "\"move\""],
                    "watch": ["settle_ms": "1000"],
                ])
            let first = JPEGFactory.shelf(seed: 525), second = JPEGFactory.shelf(seed: 526)
            try root.drop(first, as: "IMG_0001.jpg")
            let daemon = try root.startDaemon()
            try await waitUntil("the first photo is at the provider") {
                gemini.requests.contains { $0.photoSHA256 != nil }
            }
            // The phone's next IMG_0001.jpg replaces it, and is still being copied when the first one is done.
            try await root.dropSlowly(second, as: "IMG_0001.jpg", chunks: 16, pause: .milliseconds(250))
            try await waitUntil("the second photo is done too", timeout: .seconds(60)) {
                try await root.status().queue.done == 2
            }
            #expect(try await daemon.stop() == 0)

            let moved = try Data(contentsOf: root.root.appendingPathComponent("processed/IMG_0001.jpg"))
            #expect(Array(moved) == second, "the second photo was moved after its own turn")
            #expect(!FileManager.default.fileExists(atPath: root.incoming.appendingPathComponent("IMG_0001.jpg").path))
            #expect(
                gemini.requests.compactMap(\.photoSHA256).sorted() == [sentSHA256(first), sentSHA256(second)].sorted(),
                "each photo asked about once")
        }
    }

    @Test("scan prints the books it found and, with --json, the result documents", .timeLimit(.minutes(1)))
    func scanPrintsBooks() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let elsewhere = root.base.appendingPathComponent("Pictures")
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            let photo = elsewhere.appendingPathComponent("shelf.jpg")
            try Data(JPEGFactory.shelf(seed: 530)).write(to: photo)

            let table = try await root.shelfd("scan", photo.path)
            #expect(table.status == 0, "\(table.stderr)")
            #expect(table.stdout.contains("2 books"))
            #expect(table.stdout.contains("Dune — Frank Herbert  ISBN 9780441172719  0.93"))
            #expect(table.stdout.contains("Smudged Spine  0.31  [review "), "the review id follows")

            let json = try await root.shelfd("scan", "--json", photo.path)
            let documents = try JSONStyle.decoder().decode([ResultDocument].self, from: Data(json.stdout.utf8))
            #expect(documents.first?.books.count == 2)
            #expect(gemini.requests.count == 1, "scanning the same photo again replays nothing and sends nothing")

            let missing = try await root.shelfd("scan", root.base.appendingPathComponent("nope.jpg").path)
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("no such file"))
        }
    }
}

@Suite("Switching the model", .serialized)
struct ProviderSwitchTests {
    @Test("Changing the configured model logs provider_switched with from and to", .timeLimit(.minutes(1)))
    func switchIsLogged() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 540), as: "a.jpg")
            #expect(try await root.shelfd("run").status == 0)
            try root.writeConfig(
                geminiURL: gemini.baseURL, overrides: ["gemini": ["model": "\"gemini-3-flash-preview\""]])
            try root.drop(JPEGFactory.shelf(seed: 541), as: "b.jpg")
            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stderr.contains("event=provider_switched"))
            #expect(run.stderr.contains("from=gemini/gemini-2.5-flash"))
            #expect(run.stderr.contains("to=gemini/gemini-3-flash-preview"))
            #expect(gemini.requests.last?.model == "gemini-3-flash-preview")
        }
    }
}

@Suite("Logs")
struct LogTests {
    @Test(
        "Under systemd each log line starts with journald's priority; elsewhere with a time and a level",
        .timeLimit(.minutes(1)))
    func logLinesSuitTheirReader() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 550), as: "a.jpg")
            let journal = try await root.shelfd("run", environment: ["JOURNAL_STREAM": "8:12345"])
            let lines = journal.stderr.split(separator: "\n")
            #expect(!lines.isEmpty)
            #expect(lines.allSatisfy { $0.hasPrefix("<") && $0.dropFirst(2).hasPrefix(">shelfd") })
            #expect(lines.contains { $0.hasPrefix("<6>shelfd: Scan completed") && $0.contains("event=scan_completed") })

            try root.drop(JPEGFactory.shelf(seed: 551), as: "b.jpg")
            let terminal = try await root.shelfd("run", "--log-level", "warning")
            #expect(terminal.stderr.isEmpty, "--log-level warning hides a normal run's info lines")
        }
    }
}
