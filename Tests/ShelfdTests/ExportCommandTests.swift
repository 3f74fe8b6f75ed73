import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("shelfd export, after a run", .serialized)
struct ExportCommandTests {
    /// A run over one photo on the living-room shelf: Dune (with its ISBN), The Hobbit (none) and a smudged
    /// spine below the threshold. Dates are compared in UTC.
    func catalogued(_ body: (ShelfRoot, String) async throws -> Void) async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["enrich": ["sources": "[]"]])
            try root.drop(JPEGFactory.shelf(seed: 1), as: "living-room/IMG_0001.jpg")
            let run = try await root.shelfd("run")
            #expect(run.status == 0, "\(run.stderr)")
            let added = try #require(try root.library().books.first { $0.title == "Dune" }).firstSeen
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let day = calendar.dateComponents([.year, .month, .day], from: added)
            try await body(root, String(format: "%04d/%02d/%02d", day.year!, day.month!, day.day!))
        }
    }

    func export(_ root: ShelfRoot, _ arguments: String...) async throws -> CommandResult {
        try await root.shelfd(["export"] + arguments, environment: ["TZ": "UTC"])
    }

    @Test(
        "Goodreads gets the verified books in its own CSV, the one waiting for review is mentioned",
        .timeLimit(.minutes(2)))
    func goodreads() async throws {
        try await catalogued { root, day in
            let result = try await export(root, "--format", "goodreads", "--output", "-")
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 3)
            #expect(lines.first?.hasPrefix("Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,") == true)
            #expect(
                lines.contains(
                    ",Dune,Frank Herbert,\"Herbert, Frank\",,\"=\"\"0441172717\"\"\",\"=\"\"9780441172719\"\"\",0,,,,,,,,\(day),living-room,,to-read,,,,0,1"
                ))
            #expect(
                lines.contains(
                    ",The Hobbit,J. R. R. Tolkien,\"Tolkien, J. R. R.\",,\"=\"\"\"\"\",\"=\"\"\"\"\",0,,,,,,,,\(day),living-room,,to-read,,,,0,1"
                ))
            #expect(!result.stdout.contains("Smudged Spine"))
            #expect(result.stderr.contains("wrote 2 books to standard output"))
            #expect(result.stderr.contains("1 book still waiting for review was left out"))

            let read = try await export(
                root, "--format", "goodreads", "--output", "-", "--exclusive-shelf", "read", "--include-unverified")
            #expect(read.stdout.split(separator: "\n").count == 4)
            #expect(read.stdout.contains(",Dune,Frank Herbert,") && read.stdout.contains("living-room,,read,,,,1,1"))
            #expect(read.stdout.contains(",Smudged Spine,,,"))
        }
    }

    @Test("Without --output the file goes to exports/ under the root, written whole", .timeLimit(.minutes(2)))
    func defaultPath() async throws {
        try await catalogued { root, _ in
            let stdout = try await export(root, "--format", "storygraph", "--output", "-").stdout
            let result = try await export(root, "--format", "storygraph")
            let file = root.exportFile("storygraph")
            #expect(result.status == 0 && result.stdout.isEmpty)
            #expect(result.stderr.contains("wrote 2 books to \(file.path)"))
            #expect(try String(contentsOf: file, encoding: .utf8) == stdout)

            let json = try await export(root, "--format", "json")
            let document = try JSONStyle.decoder().decode(
                LibraryDocument.self, from: Data(contentsOf: root.root.appendingPathComponent("exports/json.json")))
            #expect(json.status == 0 && document.books.count == 3, "json is the whole library, review included")
            let names = try FileManager.default.contentsOfDirectory(
                atPath: root.root.appendingPathComponent("exports").path)
            #expect(names.sorted() == ["json.json", "storygraph.csv"], "no temporary file is left behind")
        }
    }

    @Test("StoryGraph, LibraryThing and Libib rows; Libib lists the books without an ISBN", .timeLimit(.minutes(2)))
    func otherApps() async throws {
        try await catalogued { root, day in
            let storygraph = try await export(root, "--format", "storygraph", "--output", "-")
            #expect(
                storygraph.stdout.contains(
                    "\nDune,Frank Herbert,,9780441172719,,to-read,\(day),,,0,,,,,,,,,,,,living-room,Yes\n"))

            let librarything = try await export(root, "--format", "librarything", "--output", "-")
            let rows = librarything.stdout.split(separator: "\n").map {
                $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            }
            let header = try #require(rows.first)
            let dune = try #require(rows.first { $0.count > 1 && $0[1] == "Dune" })
            let field = { (name: String) in header.firstIndex(of: name).map { dune[$0] } }
            #expect(field("Primary Author") == "Herbert, Frank")
            #expect(field("ISBN") == "[9780441172719]")
            #expect(field("ISBNs") == "9780441172719, 0441172717")
            #expect(field("Entry Date") == day.replacingOccurrences(of: "/", with: "-"))
            #expect(field("Tags") == "living-room")

            let libib = try await export(root, "--format", "libib", "--output", "-")
            #expect(libib.status == 0)
            #expect(libib.stdout.split(separator: "\n").count == 2)
            #expect(libib.stdout.contains("\nbook,Dune,Frank Herbert,Frank,Herbert,,9780441172719,0441172717,"))
            #expect(
                libib.stderr.contains(
                    "1 book without an ISBN was left out (Libib imports by ISBN only):\n  The Hobbit — J. R. R. Tolkien\n"
                ))
        }
    }

    @Test("The review queue as CSV: the books waiting for a person", .timeLimit(.minutes(2)))
    func reviewQueue() async throws {
        try await catalogued { root, _ in
            let out = root.base.appendingPathComponent("queue.csv")
            let result = try await export(root, "--format", "review", "--output", out.path)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("wrote 1 review item to \(out.path)"))
            let lines = try String(contentsOf: out, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(
                lines.first
                    == "id,photo,title,author,isbn13,confidence,reasons,best_title,best_author,best_isbn13,best_score,candidates,crop,created_at"
            )
            let row = try #require(lines.dropFirst().first)
            let id = String(row.prefix(12))
            #expect(
                row.hasPrefix(
                    "\(id),living-room/IMG_0001.jpg,Smudged Spine,,,0.31,low_confidence,,,,,0,"
                        + root.root.appendingPathComponent("review/\(id).jpg").path + ","))
            #expect(FileManager.default.fileExists(atPath: root.root.appendingPathComponent("review/\(id).json").path))
            #expect(lines.count == 2)
        }
    }

    @Test(
        "An export made once follows the library: a review decision rewrites exports/goodreads.csv",
        .timeLimit(.minutes(2)))
    func exportsFollowDecisions() async throws {
        try await catalogued { root, _ in
            #expect(try await export(root, "--format", "goodreads").status == 0)
            #expect(try !root.exported("goodreads").contains("Smudged Spine"))

            let accepted = try await root.shelfd("review", "accept", try await root.reviewID("Smudged Spine"))
            #expect(accepted.status == 0, "\(accepted.stderr)")
            #expect(try root.exported("goodreads").contains("Smudged Spine"))
            // Formats never exported are not created behind the person's back.
            #expect(!FileManager.default.fileExists(atPath: root.exportFile("libib").path))
        }
    }

    @Test("An unknown format is a usage error (exit 2) naming the formats there are")
    func unknownFormat() async throws {
        let root = try ShelfRoot()
        let result = try await root.shelfd("export", "--format", "kindle")
        #expect(result.status == 2)
        #expect(result.stderr.contains("goodreads") && result.stderr.contains("librarything"))
        #expect(try await root.shelfd("export").status == 2, "--format is required")
    }

    @Test("Before anything was catalogued, an export is the header alone")
    func emptyLibrary() async throws {
        let root = try ShelfRoot()
        let result = try await root.shelfd("export", "--format", "libib", "--output", "-")
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("item_type,title,creators,") && result.stdout.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("wrote 0 books"))
    }
}
