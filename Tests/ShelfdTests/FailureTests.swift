import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("Bad photos and provider trouble", .serialized)
struct FailureTests {
    @Test(
        "Broken files end with a clear reason in status, are never sent, and do not stop good photos",
        .timeLimit(.minutes(2)))
    func badInputIsReportedAndSkipped() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 10), as: "good.jpg")
            try root.drop([], as: "empty.jpg")
            try root.drop(JPEGFactory.truncated(JPEGFactory.shelf(seed: 11)), as: "truncated.jpg")
            try root.drop(Array("shopping list: milk, eggs\n".utf8), as: "notes.jpg")
            try root.drop(JPEGFactory.huge(width: 10_000, height: 10_000), as: "panorama.jpg")
            try root.drop(
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 64), as: "screenshot.jpg")

            let run = try await root.shelfd("run")
            #expect(run.status == 3, "some photos failed: \(run.stderr)")
            #expect(gemini.requests.count == 1, "only the good photo is sent")
            #expect(try root.resultDocuments().map(\.photo.path) == ["good.jpg"])

            let status = try await root.status()
            #expect(status.queue.done == 1 && status.queue.dead == 5)
            let reasons = Dictionary(
                status.problems.compactMap { p in p.path.map { ($0, p) } }, uniquingKeysWith: { a, _ in a })
            #expect(reasons["empty.jpg"]?.code == "unreadable_image")
            #expect(reasons["empty.jpg"]?.message.contains("empty") == true)
            #expect(reasons["truncated.jpg"]?.message.contains("truncated") == true)
            #expect(reasons["notes.jpg"]?.message.contains("not an image") == true)
            #expect(reasons["panorama.jpg"]?.code == "photo_too_large")
            #expect(reasons["panorama.jpg"]?.message.contains("100") == true)
            #expect(reasons["screenshot.jpg"]?.code == "unsupported_format", "recognised by content, not by name")
            #expect(reasons["screenshot.jpg"]?.message.contains("not supported yet") == true)
        }
    }

    @Test(
        "A bad key pauses the provider, shows in status, burns no attempt, and never appears anywhere",
        .timeLimit(.minutes(2)))
    func badKeyPausesWithoutBurningPhotos() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let wrongKey = "AIzaWRONG-\(UUID().uuidString)"
            let root = try ShelfRoot(geminiURL: gemini.baseURL, apiKey: wrongKey)
            for seed in 20..<24 { try root.drop(JPEGFactory.shelf(seed: seed), as: "\(seed).jpg") }

            let run = try await root.shelfd("run", "--log-level", "debug")
            #expect(run.status == 3)
            #expect(run.stderr.contains("API key"))
            #expect(
                gemini.requests.count <= 2,
                "only the requests already in flight (concurrency 2); the pause stops the rest")
            let status = try await root.status()
            #expect(status.provider.state == "paused")
            #expect(status.problems.first?.code == "provider_auth")
            #expect(status.queue.pending == 4 && status.queue.dead == 0 && status.queue.failed == 0)

            // Everything a person or a script can read: the key is in none of it.
            var everything = run.stdout + run.stderr + (try await root.shelfd("status", "--json")).stdout
            everything += (try await root.shelfd("status")).stdout
            everything += String(
                decoding: try Data(contentsOf: root.state.appendingPathComponent("shelfd.db")), as: UTF8.self)
            #expect(!everything.contains(wrongKey))

            // Fixed key: the same photos go through, none was used up.
            root.environment["GEMINI_API_KEY"] = GeminiEmulator.defaultKey
            let again = try await root.shelfd("run")
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try await root.status().queue.done == 4)
        }
    }

    @Test(
        "An unknown model pauses the provider with a message naming the model and the setting",
        .timeLimit(.minutes(1)))
    func unknownModelPauses() async throws {
        try await withGeminiEmulator(GeminiEmulator.Script(models: ["gemini-2.5-flash"], reply: .books([dune]))) {
            gemini in
            let root = try ShelfRoot(
                geminiURL: gemini.baseURL, overrides: ["gemini": ["model": "\"gemini-0.1-retired\""]])
            try root.drop(JPEGFactory.shelf(seed: 30), as: "a.jpg")
            let run = try await root.shelfd("run")
            #expect(run.status == 3)
            let status = try await root.status()
            #expect(status.provider.state == "paused")
            #expect(status.problems.first?.code == "provider_model")
            #expect(status.problems.first?.message.contains("gemini-0.1-retired") == true)
            #expect(status.queue.pending == 1)
        }
    }

    @Test(
        "A 429 with RetryInfo waits the given delay, then the photo goes through without a failed attempt",
        .timeLimit(.minutes(1)))
    func rateLimitHonoursRetryDelay() async throws {
        try await withGeminiEmulator(.failing(times: 1, with: .rateLimited(retryDelay: "2s"), then: .books([dune]))) {
            gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 40), as: "a.jpg")
            let started = ContinuousClock.now
            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(ContinuousClock.now - started >= .seconds(2), "the second request waited for retryDelay")
            #expect(gemini.requests.map(\.status) == [429, 200])
            let status = try await root.status()
            #expect(status.queue.done == 1 && status.queue.failed == 0 && status.provider.state == "ok")
        }
    }

    @Test("A used-up daily quota waits until the reset instead of retrying", .timeLimit(.minutes(1)))
    func dailyQuotaWaitsForReset() async throws {
        try await withGeminiEmulator(.always(.dailyQuotaExhausted)) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            for seed in 50..<54 { try root.drop(JPEGFactory.shelf(seed: seed), as: "\(seed).jpg") }
            let run = try await root.shelfd("run")
            #expect(run.status == 3)
            #expect(run.stderr.contains("wait until"))
            #expect(gemini.requests.count <= 2, "no request after the quota answer beyond those in flight")
            let status = try await root.status()
            #expect(status.provider.state == "backoff")
            let until = try #require(status.provider.backoffUntil)
            #expect(until > Date().addingTimeInterval(60))
            #expect(status.queue.pending == 4 && status.queue.dead == 0)
        }
    }

    @Test(
        "Three 503s then an answer: the provider is probed a few seconds later, and the photo is done with no attempt used",
        .timeLimit(.minutes(2)))
    func overloadedThenRecovers() async throws {
        try await withGeminiEmulator(.failing(times: 3, with: .overloaded, then: .books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["pipeline": ["max_attempts": "1"]])
            try root.drop(JPEGFactory.shelf(seed: 60), as: "a.jpg")
            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(gemini.requests.map(\.status) == [503, 503, 503, 200], "three quick tries, then one probe")
            #expect(try root.resultDocuments().first?.books.first?.title == "Dune")
            #expect(try await root.status().queue.failed == 0)
        }
    }

    @Test(
        "A blocked prompt is a dead photo with the reason; a cut answer is retried, then given up",
        .timeLimit(.minutes(2)))
    func nonAnswersAreClassified() async throws {
        let blocked = JPEGFactory.shelf(seed: 70), cut = JPEGFactory.shelf(seed: 71)
        let script = GeminiEmulator.Script(
            rules: [
                .init(photo: .sha256(sentSHA256(blocked)), replies: [.blockedPrompt("SAFETY")]),
                .init(photo: .sha256(sentSHA256(cut)), replies: [.maxTokensWithoutParts]),
            ], reply: .books([dune]))
        try await withGeminiEmulator(script) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(blocked, as: "blocked.jpg")
            try root.drop(cut, as: "cut.jpg")
            try root.drop(JPEGFactory.shelf(seed: 72), as: "fine.jpg")
            let run = try await root.shelfd("run")
            #expect(run.status == 3)
            let status = try await root.status()
            #expect(status.queue.done == 1 && status.queue.dead == 2)
            let codes = Dictionary(
                status.problems.compactMap { p in p.path.map { ($0, p.code) } }, uniquingKeysWith: { a, _ in a })
            #expect(codes["blocked.jpg"] == "provider_blocked")
            #expect(codes["cut.jpg"] == "provider_truncated")
            let cutRequests = gemini.requests.filter { $0.photoSHA256 == sentSHA256(cut) }.count
            #expect(cutRequests == 3, "max_attempts = 3")
            #expect(gemini.requests.filter { $0.photoSHA256 == sentSHA256(blocked) }.count == 1)
        }
    }
}

@Suite("Files shelfd may not read", .serialized)
struct PermissionTests {
    @Test(
        "A photo without read permission is reported with the reason, and is taken once it is readable",
        .timeLimit(.minutes(1)))
    func unreadablePhotoIsReportedThenTaken() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            root.asUnprivilegedUser = true
            try root.drop(JPEGFactory.shelf(seed: 80), as: "readable.jpg")
            let locked = try root.drop(JPEGFactory.shelf(seed: 81), as: "locked.jpg")
            // Everything but the locked photo belongs to the user shelfd runs as.
            let everyone = FileManager.default.enumerator(atPath: root.base.path)!.allObjects.compactMap {
                $0 as? String
            }
            for path in [root.base.path] + everyone.map({ root.base.appendingPathComponent($0).path }) {
                chmod(path, 0o777)
            }
            chown(root.base.path, 65534, 65534)
            chmod(locked.path, 0o000)

            let run = try await root.shelfd("run")
            #expect(run.status == 3, "\(run.stderr)")
            let status = try await root.status()
            #expect(status.queue.done == 1)
            let problem = try #require(status.problems.first { $0.path?.hasSuffix("locked.jpg") == true })
            #expect(problem.code == "permission_denied")
            #expect(problem.message.contains("Permission denied"))

            chmod(locked.path, 0o644)
            let again = try await root.shelfd("run")
            #expect(again.status == 0, "\(again.stderr)")
            let fixed = try await root.status()
            #expect(fixed.queue.done == 2 && fixed.problems.isEmpty)
        }
    }
}
