import Foundation
import ShelfCore
import ShelfTesting
import Testing

/// Several `shelfd watch` workers, each with folders of its own, sharing one PostgreSQL database (`[store] url`).
@Suite("Workers sharing one PostgreSQL store", .serialized)
struct SharedStoreTests {
    @Test("Three workers, 200 photos dropped at one, one worker killed twice: each photo done once, one library entry, the limit kept",
          .timeLimit(.minutes(6)))
    func threeWorkersOneQueue() async throws {
        let photos = 200, limit = 150
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            // The emulator refuses (429) a request beyond Gemini's per-minute quota: a limit each worker kept alone shows.
            try await withGeminiEmulator(GeminiEmulator.Script(latency: .milliseconds(300), reply: .books([dune]),
                                                               requestsPerMinute: limit)) { gemini in
                let overrides: [String: [String: String]] = [
                    "store": ["url": "\"\(url)\""],
                    "gemini": ["requests_per_minute": "\(limit)"],
                ]
                // Each worker its own root and state, as on three machines: only the first sees the photos.
                let roots = try (0..<3).map { _ in try ShelfRoot(geminiURL: gemini.baseURL, overrides: overrides) }
                for seed in 0..<photos { try roots[0].drop(JPEGFactory.shelf(width: 320, height: 240, seed: 5_000 + seed), as: "shelf-\(seed).jpg") }
                var daemons = try roots.map { try $0.startDaemon() }

                try await waitUntil("three workers are registered", timeout: .seconds(60)) {
                    try await roots[0].status().workers?.count == 3
                }
                let listed = try await roots[1].status()
                #expect(listed.workers?.count == 3, "any worker's status lists all three")
                #expect(Set(listed.workers?.map(\.pid) ?? []).count == 3)
                #expect(listed.limits?.first?.requestsPerMinute == limit, "status shows the shared limit")

                // The second worker is killed twice mid-way, and started again each time.
                for doneBefore in [50, 120] {
                    try await waitUntil("\(doneBefore) photos are done", timeout: .seconds(180)) {
                        try await roots[0].status().queue.done >= doneBefore
                    }
                    try await daemons[1].kill9()
                    daemons[1] = try roots[1].startDaemon()
                }
                try await waitUntil("every photo is done", timeout: .seconds(240)) {
                    try await roots[0].status().queue.done == photos
                }
                let status = try await roots[2].status()
                #expect(status.queue.dead == 0 && status.queue.failed == 0 && status.queue.pending == 0)
                #expect(status.workers?.count == 3, "the killed worker's old record is gone once it started again")
                for daemon in daemons { #expect(try await daemon.stop() == 0) }

                // Every photo has exactly one result, written by whichever worker read it; the workers that never
                // saw the folder read the image the first one stored.
                let results = try roots.flatMap { try $0.resultDocuments() }
                let byPhoto = Dictionary(grouping: results, by: \.photo.sha256)
                #expect(byPhoto.count == photos, "a result for every photo")
                #expect(byPhoto.values.allSatisfy { $0.count == 1 }, "no photo written twice")
                #expect(roots.allSatisfy { root in (try? root.resultDocuments().isEmpty) == false }, "all three workers read photos")

                // One library: one entry for the one book, seen on every photo, whichever worker wrote the file.
                for root in roots {
                    let library = try root.library()
                    #expect(library.books.count == 1, "no duplicate entries")
                    #expect(library.books.first?.sightings.count == photos)
                }

                // The per-minute limit held across the three: the provider refused nothing, no minute held more.
                let sent = gemini.requests.filter { $0.photoSHA256 != nil }
                #expect(sent.allSatisfy { $0.status == 200 }, "the provider refused none for its per-minute quota")
                let arrivals = sent.map(\.arrivedAt).sorted()
                let crowded = zip(arrivals, arrivals.dropFirst(limit)).filter { $1.timeIntervalSince($0) < 59.5 }
                #expect(crowded.isEmpty, "\(crowded.count) minutes held more than \(limit) requests")
                // A lost lease costs at most the photos the killed worker held (its batches of up to five, twice).
                #expect(sent.count <= photos + 2 * 2 * 5, "\(sent.count) requests for \(photos) photos")
            }
        }
    }
}
