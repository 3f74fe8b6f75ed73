import Foundation
import CPty
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfStore
import ShelfTesting
import Testing

extension ShelfRoot {
    func reviewList() async throws -> [ReviewDocument] {
        let result = try await shelfd("review", "list", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONStyle.decoder().decode([ReviewDocument].self, from: Data(result.stdout.utf8))
    }

    /// The open review item of the book read as `title`.
    func reviewID(_ title: String) async throws -> String {
        try #require(try await reviewList().first { $0.book.title == title }?.id)
    }
}

@Suite("The review queue, through the command line", .serialized)
struct ReviewTests {
    @Test("list and show describe a book waiting for review; review with no verb lists", .timeLimit(.minutes(2)))
    func listAndShow() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 40), as: "den/IMG_1.jpg")
            #expect(try await root.shelfd("run").status == 0, "a book to review is not a failure")
            let items = try await root.reviewList()
            let item = try #require(items.first)
            #expect(items.count == 1 && item.book.title == "Smudged Spine" && item.crop == "\(item.id).jpg")

            let list = try await root.shelfd("review", "list")
            #expect(
                list.stdout.contains(item.id) && list.stdout.contains("Smudged Spine")
                    && list.stdout.contains("low_confidence"))
            let show = try await root.shelfd("review", "show", String(item.id.prefix(6)))
            #expect(show.status == 0, "\(show.stderr)")
            #expect(show.stdout.contains(root.review.appendingPathComponent("\(item.id).jpg").path))
            #expect(show.stdout.contains("candidates:  none"))
            // Not on a terminal, `review` with no verb lists.
            #expect(try await root.shelfd("review").stdout == list.stdout)
        }
    }

    @Test(
        "A decision taken while the daemon runs reaches library.json and stays there after the daemon stops",
        .timeLimit(.minutes(2)))
    func decisionWhileTheDaemonRuns() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 44), as: "IMG_5.jpg")
            let daemon = try root.startDaemon()
            try await waitUntil("the photo waits in review") { try await root.status().queue.review == 1 }
            let id = try await root.reviewID("Smudged Spine")
            let edit = try await root.shelfd(
                "review", "edit", id, "--title", "Dune Messiah", "--author", "Frank Herbert")
            #expect(edit.status == 0, "\(edit.stderr)")
            #expect(try root.library().books.map(\.title).sorted() == ["Dune", "Dune Messiah"])
            try root.drop(JPEGFactory.shelf(seed: 45), as: "IMG_6.jpg") // the daemon commits again
            try await waitUntil("the second photo is in") {
                let queue = try await root.status().queue
                return queue.done == 1 && queue.review == 1 // the first one left review
            }
            #expect(try await daemon.stop() == 0)
            let library = try root.library()
            #expect(library.books.map(\.title).sorted() == ["Dune", "Dune Messiah", "Smudged Spine"])
            #expect(library.books.first { $0.title == "Dune Messiah" }?.status == .verified)
            #expect(try await root.reviewList().map(\.book.title) == ["Smudged Spine"])
        }
    }

    @Test(
        "accept --candidate, edit and reject say what they did, refuse what cannot be done, and exit 1 for an unknown item",
        .timeLimit(.minutes(3)))
    func decisionsAtTheCommandLine() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry, shadow, typo]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 41), as: "IMG_2.jpg")
            #expect(try await root.shelfd("run").status == 0)
            try root.seedCandidates("Smudged Spine", [MatchCandidate(record: hobbitRecord, score: 0.71)])
            let smudged = try await root.reviewID("Smudged Spine")
            let ghost = try await root.reviewID("Shadow")
            let misread = try await root.reviewID("Dnue")

            let noCandidate = try await root.shelfd("review", "accept", ghost, "--candidate", "1")
            #expect(noCandidate.status == 2 && noCandidate.stderr.contains("no candidates"))
            let badISBN = try await root.shelfd("review", "edit", misread, "--isbn", "978-0-441-17271-8")
            #expect(badISBN.status == 2 && badISBN.stderr.contains("checksum"))
            #expect(try await root.shelfd("review", "reject", "abcdef").status == 1)

            let picked = try await root.shelfd("review", "accept", smudged, "--candidate", "1")
            #expect(picked.status == 0, "\(picked.stderr)")
            #expect(picked.stdout.contains("The Hobbit"))
            let edited = try await root.shelfd(
                "review", "edit", misread, "--title", "Dune", "--author", "Frank Herbert")
            #expect(edited.status == 0, "\(edited.stderr)")
            #expect(try await root.shelfd("review", "reject", ghost).status == 0)
            #expect(try root.library().books.map(\.title).sorted() == ["Dune", "The Hobbit"])
            let gone = try await root.shelfd("review", "show", ghost)
            #expect(gone.status == 1 && gone.stderr.contains("No open review item"))
        }
    }

    @Test(
        "One photo's items at once: listed first, the scraps rejected, first candidates taken; each is remembered on a rescan",
        .timeLimit(.minutes(3)))
    func decisionsForAPhotoAtOnce() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry, shadow, typo]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(seed: 43)
            let path = try root.drop(photo, as: "IMG_3.jpg")
            #expect(try await root.shelfd("run").status == 0)
            try root.seedCandidates("Smudged Spine", [MatchCandidate(record: hobbitRecord, score: 0.71)])
            let sha = String(SHA256.hex(of: photo).prefix(10))
            #expect(try await root.reviewList().count == 3)
            let shownItem = try await root.shelfd("review", "show", try await root.reviewID("Dnue"))
            #expect(shownItem.stdout.contains("photo hash:  \(sha)"), "show gives what --photo takes")

            // Shown, not done: the two readings with no candidate under 0.5, in the order they stand (Dnue left of Shadow).
            let shown = try await root.shelfd("review", "reject", "--photo", sha, "--no-candidate", "--dry-run")
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(
                shown.stdout.hasPrefix("Would reject 2 items of IMG_3.jpg (no candidate, confidence below 0.50):"),
                "\(shown.stdout)")
            let dnue = try #require(shown.stdout.range(of: "Dnue")),
                ghost = try #require(shown.stdout.range(of: "Shadow"))
            #expect(dnue.lowerBound < ghost.lowerBound)
            #expect(!shown.stdout.contains("Smudged"), "an item with a candidate is not a scrap")
            #expect(try await root.reviewList().count == 3, "a dry run decides nothing")

            let scraps = try await root.shelfd("review", "reject", "--photo", sha, "--no-candidate", "--below", "0.3")
            #expect(scraps.status == 0, "\(scraps.stderr)")
            #expect(scraps.stdout.contains("Rejecting 1 item of IMG_3.jpg (no candidate, confidence below 0.30):"))
            #expect(try await root.reviewList().map(\.book.title).sorted() == ["Dnue", "Smudged Spine"])
            #expect(!(try root.library().books.contains { $0.title == "Shadow" }))

            let firsts = try await root.shelfd("review", "accept", "--photo", sha, "--candidate", "1")
            #expect(firsts.status == 0, "\(firsts.stderr)")
            #expect(firsts.stdout.contains("Accepting 1 item of IMG_3.jpg as their first candidate:"))
            #expect(firsts.stdout.contains("→  The Hobbit — J. R. R. Tolkien"))
            let hobbit = try #require(try root.library().books.first { $0.title == "The Hobbit" })
            #expect(hobbit.status == .verified && hobbit.history.last?.action == "reviewed_by_user")

            #expect(try await root.shelfd("review", "reject", "--photo", sha).status == 0)
            #expect(try await root.reviewList().isEmpty)
            #expect(root.reviewFiles().isEmpty, "review/ follows: the items and the photo's copy are gone")
            #expect(try await root.status().queue.review == 0)
            #expect(try root.library().books.map(\.title).sorted() == ["Dune", "The Hobbit"])

            // Each item was decided as its own decision: reading the photo again asks nothing.
            #expect(try await root.shelfd("rescan", path.path).status == 0)
            #expect(try await root.reviewList().isEmpty)
            #expect(try root.library().books.map(\.title).sorted() == ["Dune", "The Hobbit"])

            let nothing = try await root.shelfd("review", "reject", "--photo", sha, "--no-candidate")
            #expect(nothing.status == 0 && nothing.stdout.contains("Nothing to reject"))
            #expect(try await root.shelfd("review", "reject").status == 2)
            #expect(
                try await root.shelfd("review", "accept", "--photo", sha).status == 2,
                "accept --photo takes --candidate 1")
            let notAHash = try await root.shelfd("review", "reject", "--photo", "abc")
            #expect(notAHash.status == 1 && notAHash.stderr.contains("not a photo's hash"))
        }
    }

    @Test("On a terminal, review walks the queue one book at a time", .timeLimit(.minutes(2)))
    func interactiveWalk() async throws {
        try await withGeminiEmulator(.always(.books([blurry, shadow, typo]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 42), as: "IMG_3.jpg")
            #expect(try await root.shelfd("run").status == 0)
            try root.seedCandidates("Smudged Spine", [MatchCandidate(record: hobbitRecord, score: 0.71)])

            let session = try TerminalSession(root: root, arguments: ["review"])
            defer { session.close() }
            var walked: [String] = []
            for step in 1...3 {
                let screen = try await session.waitFor(" > ")
                #expect(screen.contains("[\(step)/3] IMG_3.jpg, spine \(step) of 3"), "\(screen)")
                walked += ["Dnue", "Smudged Spine", "Shadow"].filter { screen.contains("  \($0) — ") }
                if screen.contains("Smudged Spine") {
                    #expect(screen.contains("1. The Hobbit — J. R. R. Tolkien (1937)"))
                    #expect(screen.contains("a accept · 1 pick · e edit · r reject · s skip · q quit"))
                    session.send("7") // no such candidate: asked again
                    _ = try await session.waitFor("No candidate 7")
                    _ = try await session.waitFor(" > ")
                    session.send("1")
                } else if screen.contains("Shadow") {
                    session.send("r")
                } else {
                    #expect(screen.contains("Dnue"))
                    session.send("e")
                    _ = try await session.waitFor("title [Dnue]: ")
                    session.send("Dune\n")
                    _ = try await session.waitFor("author [Herbrt]: ")
                    session.send("Frank Herbert\n")
                    _ = try await session.waitFor("ISBN []: ")
                    session.send("12345\n")
                    _ = try await session.waitFor("not a valid ISBN")
                    session.send("9780441172719\n")
                }
                _ = try await session.waitFor("→ ")
            }
            #expect(walked == ["Dnue", "Smudged Spine", "Shadow"], "the photo's spines in the order they stand")
            let summary = try await session.waitFor("left to review.")
            #expect(summary.contains("Decided 3, skipped 0; 0 left to review."))
            #expect(try await session.exitStatus() == 0)

            let library = try root.library()
            #expect(library.books.map(\.title).sorted() == ["Dune", "The Hobbit"])
            #expect(library.books.first { $0.title == "Dune" }?.isbn13 == "9780441172719")
            #expect(library.books.allSatisfy { $0.status == .verified })
            #expect(root.reviewFiles().isEmpty)
        }
    }

    @Test("Skipping leaves a book open, q stops the walk", .timeLimit(.minutes(2)))
    func skipAndQuit() async throws {
        try await withGeminiEmulator(.always(.books([blurry, shadow]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 43), as: "IMG_4.jpg")
            #expect(try await root.shelfd("run").status == 0)

            let session = try TerminalSession(root: root, arguments: ["review"])
            defer { session.close() }
            _ = try await session.waitFor(" > ")
            session.send("s")
            _ = try await session.waitFor("[2/2]")
            _ = try await session.waitFor(" > ")
            session.send("q")
            let summary = try await session.waitFor("left to review.")
            #expect(summary.contains("Decided 0, skipped 1; 2 left to review."))
            #expect(try await session.exitStatus() == 0)
            #expect(try await root.reviewList().count == 2)
        }
    }
}

/// `shelfd` with a pseudo-terminal as its standard input and output, as a person runs it at a prompt.
final class TerminalSession: @unchecked Sendable { // unchecked: used by one test's task
    private let master: Int32
    private let process: Process
    /// Everything the command printed since the last `waitFor` matched.
    private var unread = ""

    init(root: ShelfRoot, arguments: [String]) throws {
        if let problem = ShelfRoot.staleBinary { throw StaleBinary(description: problem) }
        var master: Int32 = -1, terminal: Int32 = -1
        guard openpty(&master, &terminal, nil, nil, nil) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ENOTTY)
        }
        self.master = master
        defer { Glibc.close(terminal) } // the child has its own copies
        process = Process()
        process.executableURL = ShelfRoot.binary
        process.arguments = arguments + ["--config", root.configFile.path]
        process.environment = root.environment.merging(["TERM": "xterm"]) { $1 }
        let handle = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
    }

    func close() {
        if process.isRunning { process.terminate() }
        Glibc.close(master)
    }

    func send(_ keys: String) {
        _ = keys.utf8CString.withUnsafeBufferPointer { write(master, $0.baseAddress, $0.count - 1) }
    }

    /// Reads until `text` appears; returns what was printed up to and including it.
    func waitFor(_ text: String, timeout: Duration = .seconds(30)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let range = unread.range(of: text) {
                let screen = String(unread[..<range.upperBound])
                unread = String(unread[range.upperBound...])
                return screen
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(master, &buffer, buffer.count)
            if n > 0 {
                unread += String(decoding: buffer[0..<n], as: UTF8.self)
                continue
            }
            guard ContinuousClock.now < deadline, n < 0 && errno == EAGAIN else {
                Issue.record("Never saw \"\(text)\"; the terminal showed: \(unread)")
                throw WaitTimeout(what: text)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func exitStatus() async throws -> Int32 {
        try await waitUntil("shelfd review exits") { !process.isRunning }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
