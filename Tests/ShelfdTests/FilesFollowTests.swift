import Foundation
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// library.json, review/ and exports/ follow the database off the path of a decision or a batch: a decision answers
/// once it is committed, the files follow within seconds, and what a crash left unwritten is written at the next start.
@Suite("The files follow the database", .serialized)
struct FilesFollowTests {
    static let token = "files-\(UUID().uuidString)"

    /// Three photos of one shelf, each read as Dune and a smudged spine: three review items, one work seen thrice.
    static func catalogued(_ body: (ShelfRoot) async throws -> Void) async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
            shelf.environment["WEB_TOKEN"] = token
            for seed in 81..<84 { try shelf.drop(JPEGFactory.shelf(seed: seed), as: "den/IMG_\(seed).jpg") }
            let run = try await shelf.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            try await body(shelf)
        }
    }

    static func open(_ shelf: ShelfRoot, _ http: RawHTTP) throws -> [ReviewDocument] {
        try JSONStyle.decoder().decode([ReviewDocument].self, from: Data(try get(http, "/api/v1/review").body.utf8))
    }

    static func get(_ http: RawHTTP, _ path: String) throws -> RawHTTP.Answer {
        try http.send("GET", path, headers: [("Authorization", "Bearer \(token)")])
    }

    static func accept(_ http: RawHTTP, _ id: String) throws -> RawHTTP.Answer {
        try http.send(
            "POST", "/api/v1/review/\(id)",
            headers: [
                ("Authorization", "Bearer \(token)"),
                ("Content-Type", "application/json"),
            ],
            body: #"{"decision": "accept"}"#)
    }

    /// review/'s files by name: each open item's document and crop, and the copy of each photo with an open item.
    static func reviewFiles(_ shelf: ShelfRoot) -> Set<String> {
        let review = shelf.root.appendingPathComponent("review")
        let top = ((try? FileManager.default.contentsOfDirectory(atPath: review.path)) ?? []).filter {
            !$0.hasPrefix(".") && $0 != "photos"
        }
        let photos =
            ((try? FileManager.default.contentsOfDirectory(atPath: review.appendingPathComponent("photos").path)) ?? [])
            .filter { !$0.hasPrefix(".") }.map { "photos/\($0)" }
        return Set(top + photos)
    }

    static func expected(_ items: [ReviewDocument]) -> Set<String> {
        Set(items.flatMap { ["\($0.id).json", "\($0.id).jpg", "photos/\($0.photo.sha256).jpg"] })
    }

    /// library.json without the moment it was written.
    static func library(_ shelf: ShelfRoot) throws -> LibraryDocument {
        var document = try shelf.library()
        document.generatedAt = Date(timeIntervalSince1970: 0)
        return document
    }

    /// What a full rewrite would write now: `shelfd export --format json`, the same document.
    static func rewritten(_ shelf: ShelfRoot) async throws -> LibraryDocument {
        let export = try await shelf.shelfd("export", "--format", "json", "--output", "-")
        var document = try JSONStyle.decoder().decode(LibraryDocument.self, from: Data(export.stdout.utf8))
        document.generatedAt = Date(timeIntervalSince1970: 0)
        return document
    }

    @Test(
        "A decision answers while another process holds the files lock; library.json follows once it is free",
        .timeLimit(.minutes(3)))
    func decisionDoesNotWaitForTheFiles() async throws {
        try await Self.catalogued { shelf in
            let daemon = try shelf.startDaemon()
            let http = RawHTTP(url: try await shelf.webURL())
            let item = try #require(try Self.open(shelf, http).first)
            try await waitUntil("the start's rewrite is done") {
                try Self.library(shelf) == (try await Self.rewritten(shelf))
            }

            let lock = Glibc.open(
                shelf.state.appendingPathComponent("files.lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            #expect(lock >= 0 && flock(lock, LOCK_EX) == 0)
            let answer = try Self.accept(http, item.id)
            #expect(answer.status == 200, "the decision answered with the files locked: \(answer.body)")
            try await Task.sleep(for: .seconds(1))
            #expect(
                try shelf.library().books.first { $0.title == "Smudged Spine" }?.status == .needsReview,
                "library.json waits for the lock")
            close(lock)

            try await waitUntil("library.json follows the decision", timeout: .seconds(10)) {
                try shelf.library().books.first { $0.title == "Smudged Spine" }?.history.contains {
                    $0.action == "reviewed_by_user"
                } == true
            }
            #expect(try await daemon.stop() == 0)
        }
    }

    @Test(
        "After a burst of decisions library.json, an export and review/ follow within 10 s, as a full rewrite writes them",
        .timeLimit(.minutes(3)))
    func burstOfDecisions() async throws {
        try await Self.catalogued { shelf in
            #expect(try await shelf.shelfd("export", "--format", "goodreads").status == 0)
            #expect(try await shelf.shelfd("export", "--format", "review").status == 0)
            let daemon = try shelf.startDaemon()
            let http = RawHTTP(url: try await shelf.webURL())
            let items = try Self.open(shelf, http)
            #expect(items.count == 3, "\(items.map(\.photo.path))")
            #expect(
                Self.reviewFiles(shelf) == Self.expected(items), "review/ holds the open items' files, nothing else")

            // One decision: its item's files go, the others stay.
            #expect(try Self.accept(http, items[0].id).status == 200)
            try await waitUntil("review/ follows one decision", timeout: .seconds(10)) {
                Self.reviewFiles(shelf) == Self.expected(Array(items.dropFirst()))
            }
            // The rest at once.
            for item in items.dropFirst() { #expect(try Self.accept(http, item.id).status == 200) }
            try await waitUntil("the files follow the burst", timeout: .seconds(10)) {
                let goodreads = try await shelf.shelfd("export", "--format", "goodreads", "--output", "-").stdout
                let review = try await shelf.shelfd("export", "--format", "review", "--output", "-").stdout
                return try Self.library(shelf) == (try await Self.rewritten(shelf))
                    && (try shelf.exported("goodreads")) == goodreads && (try shelf.exported("review")) == review
                    && Self.reviewFiles(shelf).isEmpty
            }
            #expect(try shelf.library().books.allSatisfy { $0.status == .verified })

            // A photo the daemon reads opens an item: its files, and only its, appear. (On another shelf: in den/ the
            // spine just accepted there would be taken as that book.)
            try shelf.drop(JPEGFactory.shelf(seed: 84), as: "hall/IMG_84.jpg")
            try await waitUntil("review/ follows the new photo's item", timeout: .seconds(30)) {
                let open = try Self.open(shelf, http)
                return open.count == 1 && Self.reviewFiles(shelf) == Self.expected(open)
            }
            #expect(try await daemon.stop() == 0)
        }
    }

    @Test(
        "kill -9 right after a batch's commit: the next start writes library.json and review/ for it",
        .timeLimit(.minutes(3)))
    func crashAfterCommitIsCaughtUp() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
            try shelf.drop(JPEGFactory.shelf(seed: 91), as: "IMG_91.jpg")
            let killed = try await shelf.shelfd("run", environment: ["SHELFD_FAILPOINT": "after_commit"])
            #expect(killed.status == SIGKILL, "\(killed.stderr)")
            #expect(try await shelf.status().queue.review == 1, "the batch was committed")
            #expect((try? shelf.library())?.books.isEmpty ?? true, "and its files not written")

            let daemon = try shelf.startDaemon()
            try await waitUntil("the start catches up", timeout: .seconds(20)) {
                (try? shelf.library())?.books.map(\.title).sorted() == ["Dune", "Smudged Spine"]
                    && Self.reviewFiles(shelf).count == 3
            }
            #expect(gemini.requests.count == 1, "caught up from the database, not by reading the photo again")
            #expect(try await daemon.stop() == 0)
        }
    }

    @Test(
        "library.json keeps a work bounded; 'library show' and /api/v1/library/<work> give its whole history",
        .timeLimit(.minutes(3)))
    func wholeHistoryOnRequest() async throws {
        try await Self.catalogued { shelf in
            let dune = try #require(try shelf.library().books.first { $0.title == "Dune" })
            #expect(dune.sightingsCount == 3)
            #expect(dune.sightings.count == 1, "the latest sighting on its one shelf")
            #expect(dune.lastSeen == dune.sightings.first?.seenAt)

            let show = try await shelf.shelfd("library", "show", "--json", dune.work)
            #expect(show.status == 0, "\(show.stderr)")
            let whole = try JSONStyle.decoder().decode(LibraryDocument.Entry.self, from: Data(show.stdout.utf8))
            #expect(whole.sightings.map(\.photo).sorted() == ["den/IMG_81.jpg", "den/IMG_82.jpg", "den/IMG_83.jpg"])
            #expect(whole.sightingsCount == 3 && whole.bounded() == dune)
            let text = try await shelf.shelfd("library", "show", dune.work)
            #expect(text.stdout.contains("3 sightings") && text.stdout.contains("den/IMG_82.jpg"), "\(text.stdout)")
            let missing = try await shelf.shelfd("library", "show", "title:no such book|")
            #expect(missing.status == 1 && missing.stderr.contains("No work"), "\(missing.stderr)")

            let server = try shelf.startWeb()
            let http = RawHTTP(url: try await shelf.webURL())
            let key = dune.work.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let api = try Self.get(http, "/api/v1/library/\(key)")
            #expect(api.status == 200 && api.body == show.stdout, "\(api.body)")
            #expect(try Self.get(http, "/api/v1/library/nothing").status == 404)
            #expect(try await server.stop() == 0)
        }
    }
}
