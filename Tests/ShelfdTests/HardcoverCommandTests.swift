import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Hardcover through the binary: the token from the environment, `watch` adding a work as it verifies it, and
/// `shelfd hardcover push`'s words and exit codes. What a push does on Hardcover is proven in `ShelfHardcoverTests`.
@Suite("shelfd and Hardcover", .serialized)
struct HardcoverCommandTests {
    /// Dune's edition and book as the emulated Hardcover knows them.
    static let duneEdition = HardcoverEmulator.Edition(id: 30_420, bookID: 312_460, isbn13: "9780441172719")

    @Test(
        "watch adds a work to Hardcover as it verifies it; push then has nothing to add; a refused token exits 1 and shows in status",
        .timeLimit(.minutes(4)))
    func watchPushesAndTheCommandReports() async throws {
        try await withHardcoverEmulator(.init(editions: [Self.duneEdition])) { hardcover in
            try await withGeminiEmulator(.always(.books([dune, hobbit]))) { gemini in
                let root = try ShelfRoot(
                    geminiURL: gemini.baseURL,
                    overrides: [
                        "enrich": ["sources": "[]"], "hardcover": ["url": "\"\(hardcover.url)\""],
                    ])
                root.environment["HARDCOVER_TOKEN"] = "Bearer hc-token" // as Hardcover's settings page shows it
                let daemon = try root.startDaemon()
                try root.drop(JPEGFactory.shelf(seed: 7), as: "den/IMG_0001.jpg")
                try await waitUntil("Dune is in the Hardcover library", timeout: .seconds(60)) {
                    hardcover.listBooks(named: "Owned").contains { $0.bookID == Self.duneEdition.bookID }
                }
                #expect(hardcover.userBooks.map(\.bookID) == [Self.duneEdition.bookID])
                #expect(try await daemon.stop() == 0)

                let push = try await root.shelfd("hardcover", "push")
                #expect(push.status == 0, "\(push.stderr)")
                #expect(push.stdout.contains("Hardcover user: reader"))
                #expect(push.stdout.contains("without an ISBN (add them on Hardcover by hand) (1):\n  The Hobbit"))
                #expect(!push.stdout.contains("added"))
                #expect(hardcover.userBooks.count == 1 && hardcover.duplicateInserts == 0)
                #expect(try await root.shelfd("doctor").stdout.contains("the token is reader's"))

                hardcover.set(token: "revoked")
                let refused = try await root.shelfd("hardcover", "push", "--json")
                #expect(refused.status == 1)
                let report = try JSONStyle.decoder().decode(HardcoverPushDocument.self, from: Data(refused.stdout.utf8))
                #expect(report.stopped?.code == "hardcover_token")
                #expect(
                    !refused.stdout.contains("hc-token") && !refused.stderr.contains("hc-token"),
                    "the token is never printed")
                let doctor = try await root.shelfd("doctor")
                #expect(doctor.status != 0 && doctor.stdout.contains("Hardcover refused the token"))
                let status = try await root.shelfd("status")
                #expect(status.status == 0, "a paused push does not degrade the photos' status")
                #expect(status.stdout.contains("Hardcover refused the token"))
            }
        }
    }

    @Test("Without a token, push says where to get one and exits 2")
    func noToken() async throws {
        let root = try ShelfRoot()
        let push = try await root.shelfd("hardcover", "push", "--dry-run")
        #expect(push.status == 2)
        #expect(push.stderr.contains("HARDCOVER_TOKEN"))
    }
}
