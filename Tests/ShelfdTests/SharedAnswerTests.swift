import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// A provider's answer is paid for once, whichever worker on whichever machine finishes the photo.
@Suite("Saved answers on a shared store", .serialized)
struct SharedAnswerTests {
    @Test(
        "A worker killed after saving an answer: a worker on another machine replays it from the database, not asking again",
        .timeLimit(.minutes(3)))
    func answerReplayedByAnotherWorker() async throws {
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            try await withGeminiEmulator(.always(.books([dune]))) { gemini in
                let overrides: [String: [String: String]] = ["store": ["url": "\"\(url)\""]]
                let first = try ShelfRoot(geminiURL: gemini.baseURL, overrides: overrides)
                let second = try ShelfRoot(geminiURL: gemini.baseURL, overrides: overrides)
                try first.drop(JPEGFactory.shelf(seed: 9_100), as: "shelf.jpg")

                let dying = try first.startDaemon(environment: ["SHELFD_FAILPOINT": "after_response_saved"])
                _ = try await dying.waitForExit(timeout: .seconds(60))
                #expect(gemini.requests.filter { $0.photoSHA256 != nil }.count == 1)
                // The other machine cannot read this one's responses/ folder.
                try FileManager.default.removeItem(at: first.state.appendingPathComponent("responses"))

                let taking = try second.startDaemon()
                try await waitUntil("the photo is done", timeout: .seconds(60)) {
                    try await second.status().queue.done == 1
                }
                #expect(try await taking.stop() == 0)
                #expect(
                    gemini.requests.filter { $0.photoSHA256 != nil }.count == 1,
                    "the saved answer was replayed, not bought again")
                #expect(try second.library().books.map(\.title) == ["Dune"])
            }
        }
    }
}

@Suite("A database that refuses a photo", .serialized)
struct RefusedPhotoTests {
    @Test(
        "run says which photos the database would not record and exits 3; once it takes them again, the next run does them",
        .timeLimit(.minutes(2)))
    func refusedPhotosAreReported() async throws {
        try await withPostgres { server in
            let database = try server.createDatabase()
            try await withGeminiEmulator(.always(.books([dune]))) { gemini in
                let root = try ShelfRoot(
                    geminiURL: gemini.baseURL, overrides: ["store": ["url": "\"\(server.url(database: database))\""]])
                #expect(try await root.shelfd("status").status == 0) // the tables exist
                try server.psql(
                    """
                    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk quota exceeded'; END $$;
                    CREATE TRIGGER refuse BEFORE INSERT ON photo FOR EACH ROW EXECUTE FUNCTION refuse();
                    """, database: database)
                try root.drop(JPEGFactory.shelf(seed: 9_200), as: "shelf.jpg")
                let refused = try await root.shelfd("run")
                #expect(refused.status == 3, "\(refused.stderr)")
                #expect(
                    refused.stderr.contains("shelf.jpg") && refused.stderr.contains("could not be recorded"),
                    "\(refused.stderr)")

                try server.psql("DROP TRIGGER refuse ON photo", database: database)
                #expect(try await root.shelfd("run").status == 0)
                #expect(try await root.status().queue.done == 1)
            }
        }
    }
}
