import Foundation
import ShelfCore
import ShelfEnrichment
import ShelfRuntimeTesting
import Testing

private func matchLines(_ output: String) throws -> [SpineMatchLine] {
    try output.split(separator: "\n").map { try JSONDecoder().decode(SpineMatchLine.self, from: Data($0.utf8)) }
}

@Suite("The local catalogue on the command line", .serialized)
struct CatalogueCommandTests {
    static let books = """
        Title,Author,ISBN,Year
        Dune,"Herbert, Frank",0441172717,1965
        Dune Messiah,"Herbert, Frank",,1969
        Emma,Jane Austen,,1815
        Emma,Alexander McCall Smith,,2014
        Poems,Emily Dickinson,,1890

        """

    @Test("import, stats and match: text arguments in order, a readable line each, exit 0")
    func importThenMatch() async throws {
        let root = try ShelfRoot()
        let empty = try await root.shelfd("catalogue", "match", "DUNE")
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("shelfd catalogue import"))

        let file = root.base.appendingPathComponent("books.csv")
        try Self.books.write(to: file, atomically: true, encoding: .utf8)
        let imported = try await root.shelfd("catalogue", "import", file.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("5 imported, 0 already there, 0 skipped"))
        let again = try await root.shelfd("catalogue", "import", file.path)
        #expect(again.stdout.contains("0 imported, 5 already there"))

        let stats = try await root.shelfd("catalogue", "stats")
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("entries:  5 (1 with an ISBN, 0 with a call number)"))
        #expect(stats.stdout.contains(file.path))

        let text = try await root.shelfd("catalogue", "match", "HERBERT FRANK DUNE", "EMMA", "qqq zzz")
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("accepted") && lines[0].contains("Dune — Herbert, Frank (9780441172719)"))
        #expect(lines[1].hasPrefix("review") && lines[1].contains("Emma"))
        #expect(lines[2].hasPrefix("none") && lines[2].contains("no plausible match"))
    }

    @Test("match --json: one object per spine, from arguments or standard input, in input order")
    func matchJSON() async throws {
        let root = try ShelfRoot()
        let file = root.base.appendingPathComponent("books.csv")
        try Self.books.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await root.shelfd("catalogue", "import", file.path).status == 0)

        let arguments = try await root.shelfd(
            "catalogue", "match", "--json", "POEMS EMILY DICKINSON", "EMMA", "qqq zzz")
        #expect(arguments.status == 0)
        let answers = try matchLines(arguments.stdout)
        #expect(answers.map(\.text) == ["POEMS EMILY DICKINSON", "EMMA", "qqq zzz"])
        #expect(answers.map(\.decision) == [.accepted, .review, .none])
        let poems = try #require(answers[0].match)
        #expect(poems.title == "Poems" && poems.author == "Emily Dickinson" && poems.source == "catalogue")
        #expect(poems.key.hasPrefix("catalogue:") && poems.score == nil)
        #expect(answers[0].score == answers[0].candidates.first?.score)
        #expect(
            answers[1].candidates.prefix(2).map(\.author).compactMap { $0 }.sorted() == [
                "Alexander McCall Smith", "Jane Austen",
            ])
        #expect(answers[2].match == nil && answers[2].candidates.isEmpty)

        let (process, out, err) = try root.process(["catalogue", "match", "--json", "-"], logName: "stdin")
        let input = Pipe()
        process.standardInput = input
        try process.run()
        input.fileHandleForWriting.write(Data("dune herbert\n\nEMMA JANE AUSTEN\nDUNE MESSIAH\n".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\((try? String(contentsOf: err, encoding: .utf8)) ?? "")")
        let piped = try matchLines(try String(contentsOf: out, encoding: .utf8))
        #expect(piped.map(\.text) == ["dune herbert", "", "EMMA JANE AUSTEN", "DUNE MESSIAH"])
        #expect(piped.map(\.decision) == [.accepted, .none, .accepted, .accepted])
        #expect(piped[0].match?.isbn == "9780441172719")
        #expect(piped[2].match?.author == "Jane Austen")
        #expect(piped[3].match?.title == "Dune Messiah")
    }

    @Test(
        "Usage errors exit 2; an unreadable or unknown file exits 1 and says why",
        arguments: [
            ["catalogue", "import"], ["catalogue", "match"], ["catalogue", "match", "-", "DUNE"],
            ["catalogue", "frob"],
        ])
    func usageErrors(arguments: [String]) async throws {
        let root = try ShelfRoot()
        let result = try await root.shelfd(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(!result.stderr.isEmpty)
    }

    @Test("A file that cannot be imported exits 1; the others given with it are still imported")
    func badFiles() async throws {
        let root = try ShelfRoot()
        let good = root.base.appendingPathComponent("books.csv"), odd = root.base.appendingPathComponent("photos.csv")
        try Self.books.write(to: good, atomically: true, encoding: .utf8)
        try "name,size\nIMG_1.jpg,2048\n".write(to: odd, atomically: true, encoding: .utf8)
        let missing = root.base.appendingPathComponent("missing.csv").path
        let result = try await root.shelfd("catalogue", "import", missing, odd.path, good.path)
        #expect(result.status == 1)
        #expect(result.stderr.contains("Cannot read \(missing)"))
        #expect(result.stderr.contains("no \"title\" column"))
        #expect(result.stdout.contains("5 imported"))
    }
}

@Suite("doctor on the book sources", .serialized)
struct DoctorSourcesTests {
    @Test(
        "doctor warns while the catalogue is empty and counts it once filled; an OpenLibrary without contact is named")
    func catalogueAndContact() async throws {
        let root = try ShelfRoot(
            apiKey: nil,
            overrides: [
                "enrich": [
                    "sources": "[\"catalogue\", \"openlibrary\"]",
                    "openlibrary_base_url": "\"http://127.0.0.1:9\"",
                ]
            ])
        let empty = try await root.shelfd("doctor")
        #expect(empty.stdout.contains("! catalogue: empty: import the books you own"), "\(empty.stdout)")
        #expect(empty.stdout.contains("! openlibrary: enrich.contact is empty"))

        let file = root.base.appendingPathComponent("books.csv")
        try CatalogueCommandTests.books.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await root.shelfd("catalogue", "import", file.path).status == 0)
        let filled = try await root.shelfd("doctor")
        #expect(filled.stdout.contains("✓ catalogue: 5 books to match spines against"), "\(filled.stdout)")
    }
}
