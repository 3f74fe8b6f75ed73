import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// `shelfd store migrate --from sqlite`, and PostgreSQL's announcements that wake idle workers.
@Suite("Moving to PostgreSQL, and workers woken by it", .serialized)
struct StoreMigrationTests {
    @Test(
        "A machine's SQLite state moves to PostgreSQL once: counted first, copied, the same queue and library, new photos get new ids",
        .timeLimit(.minutes(4)))
    func sqliteStateMovesToPostgres() async throws {
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            try await withGeminiEmulator(.always(.books([dune, hobbit, blurry]))) { gemini in
                let root = try ShelfRoot(geminiURL: gemini.baseURL)
                let onPostgres: [String: [String: String]] = ["store": ["url": "\"\(url)\""]]

                // Not yet: no [store] url, then no SQLite state.
                let noURL = try await root.shelfd("store", "migrate", "--from", "sqlite")
                #expect(noURL.status == 1 && noURL.stderr.contains("[store] url is empty"), "\(noURL.stderr)")
                try root.writeConfig(geminiURL: gemini.baseURL, overrides: onPostgres)
                let nothing = try await root.shelfd("store", "migrate", "--from", "sqlite")
                #expect(nothing.status == 1 && nothing.stderr.contains("no SQLite database"), "\(nothing.stderr)")

                // Three photos catalogued by a watch on SQLite.
                try root.writeConfig(geminiURL: gemini.baseURL)
                let daemon = try root.startDaemon()
                for seed in 0..<3 { try root.drop(JPEGFactory.shelf(seed: 7_100 + seed), as: "shelf-\(seed).jpg") }
                try await waitUntil("three photos are finished", timeout: .seconds(60)) {
                    let queue = try await root.status().queue
                    return queue.done + queue.review == 3
                }
                let before = try await root.status().queue
                // library.json follows the commits off their path, within seconds.
                try await waitUntil("library.json lists the photos' works", timeout: .seconds(30)) {
                    (try? root.library().books.count) ?? 0 >= 3
                }
                let works = try Set(root.library().books.map(\.work))
                #expect(!works.isEmpty)

                // Refused while that watch holds the state folder.
                try root.writeConfig(geminiURL: gemini.baseURL, overrides: onPostgres)
                let busy = try await root.shelfd("store", "migrate", "--from", "sqlite")
                #expect(busy.status == 1 && busy.stderr.contains("shelfd watch is running"), "\(busy.stderr)")
                #expect(try await daemon.stop() == 0)

                // --dry-run counts and changes nothing.
                let dry = try await root.shelfd("store", "migrate", "--from", "sqlite", "--dry-run")
                #expect(dry.status == 0, "\(dry.stderr)")
                #expect(dry.stdout.contains("Would copy"))
                #expect(rows(of: "photo", in: dry.stdout) == 3 && rows(of: "job", in: dry.stdout) == 3, "\(dry.stdout)")
                #expect(dry.stdout.contains("Nothing was changed"))
                let empty = try await root.status().queue
                #expect(empty.done + empty.review + empty.pending + empty.dead == 0, "PostgreSQL is still empty")

                // The copy: every table counted again in PostgreSQL; the catalogue stays.
                let copy = try await root.shelfd("store", "migrate", "--from", "sqlite")
                #expect(copy.status == 0, "\(copy.stderr)")
                #expect(
                    rows(of: "photo", in: copy.stdout) == 3 && rows(of: "job", in: copy.stdout) == 3, "\(copy.stdout)")
                #expect(copy.stdout.contains("counts match"))
                #expect(copy.stdout.contains("The local catalogue (catalogue_"))

                // On PostgreSQL: the same queue; the library file rewritten from PostgreSQL has the same works.
                let after = try await root.status().queue
                #expect(after == before, "status on PostgreSQL: \(after), on SQLite: \(before)")
                try FileManager.default.removeItem(at: root.root.appendingPathComponent("library.json"))
                // A new photo gets a job and rows of its own: the sequences start past the copied ids.
                try root.drop(JPEGFactory.shelf(seed: 7_200), as: "shelf-new.jpg")
                let run = try await root.shelfd("run")
                #expect(run.status == 0, "\(run.stderr)")
                let final = try await root.status().queue
                #expect(final.done + final.review == 4 && final.dead == 0 && final.failed == 0 && final.pending == 0)
                let library = try root.library()
                #expect(Set(library.books.map(\.work)) == works)
                #expect(library.books.first { $0.title == "Dune" }?.sightingsCount == 4)

                // Once only.
                let again = try await root.shelfd("store", "migrate", "--from", "sqlite")
                #expect(again.status == 1 && again.stderr.contains("already holds 4 photos"), "\(again.stderr)")
            }
        }
    }

    @Test(
        "Two idle workers on PostgreSQL take a job another process requeued at once, not at their next poll",
        .timeLimit(.minutes(3)))
    func idleWorkersWakeOnNotification() async throws {
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            try await withGeminiEmulator(.always(.blockedPrompt("OTHER"))) { gemini in
                let overrides: [String: [String: String]] = ["store": ["url": "\"\(url)\""]]
                let roots = try (0..<3).map { _ in try ShelfRoot(geminiURL: gemini.baseURL, overrides: overrides) }
                let daemons = try roots.prefix(2).map { try $0.startDaemon() }
                try await waitUntil("two workers are registered", timeout: .seconds(60)) {
                    try await roots[2].status().workers?.count == 2
                }
                // A photo the provider refuses: dead at once, and both workers idle after it.
                try roots[0].drop(JPEGFactory.shelf(seed: 7_300), as: "refused.jpg")
                try await waitUntil("the photo is dead", timeout: .seconds(60)) {
                    try await roots[2].status().queue.dead == 1
                }

                // Requeued by a command on a third machine: a worker takes it within a deadline well inside the
                // idle poll on PostgreSQL (30 s), which only the announcement can meet.
                gemini.setScript(.always(.books([dune])))
                let retry = try await roots[2].shelfd("retry", "--failed")
                #expect(retry.status == 0 && retry.stdout.contains("Requeued 1 photo"), "\(retry.stderr)")
                try await waitUntil("a worker finished the requeued photo", timeout: .seconds(12)) {
                    try await roots[2].status().queue.done == 1
                }
                for daemon in daemons { #expect(try await daemon.stop() == 0) }
            }
        }
    }

    /// The rows `store migrate` printed for a table ("  photo   3 rows").
    private func rows(of table: String, in output: String) -> Int? {
        for line in output.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 3, words[0] == table, words[2].hasPrefix("row") { return Int(words[1]) }
        }
        return nil
    }
}
