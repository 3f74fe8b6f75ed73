import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Provider trouble as a person at the command line meets it: what `run` prints and where a secret could leak. The
/// rest of the failures, on a manual clock, are in ShelfDaemonTests' FailureOnTheClockTests.
@Suite("Bad photos and provider trouble", .serialized)
struct FailureTests {
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
