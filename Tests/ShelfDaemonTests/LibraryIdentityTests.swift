import Foundation
import ShelfApp
import ShelfCore
import ShelfDaemon
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// One library entry per book, whatever matched it (ARCHITECTURE.md, "One entry per work"), in the test's own
/// process: photos read one after another by runs of the daemon's machinery (`InProcessSite.run`, which is `shelfd
/// run`), the provider's answer and the enrichment sources changed in between.
@Suite("One library entry per book, whatever matched it")
struct LibraryIdentityTests {
    static let appFormats: [ExportFormat] = [.goodreads, .storygraph, .librarything, .libib]

    /// Enrichment by these sources, OpenLibrary being the emulator.
    func sources(_ names: [String], _ openLibrary: OpenLibraryEmulator?) -> [String: [String: String]] {
        var enrich = ["sources": "[" + names.map { "\"\($0)\"" }.joined(separator: ", ") + "]"]
        if let openLibrary {
            enrich["openlibrary_base_url"] = "\"\(openLibrary.baseURL)\""
            enrich["contact"] = "\"reader@example.org\""
        }
        return ["enrich": enrich]
    }

    /// Drops a new photo the provider reads as `books` and reads it as `shelfd run` does, a run that ends well; the
    /// files follow. The run, for what a person decides next.
    @discardableResult
    func photo(
        _ root: ShelfRoot, _ gemini: GeminiEmulator, seed: Int, shelf: String = "study",
        _ books: [GeminiEmulator.Book]
    ) async throws -> InProcessSite {
        gemini.setScript(.always(.books(books)))
        try root.drop(JPEGFactory.shelf(seed: seed), as: "\(shelf)/shelf-\(seed).jpg")
        let site = try InProcessSite(root)
        let report = try await site.run()
        #expect(report.warning == nil && !report.status.isDegraded, "\(report.warning ?? "") \(report.status)")
        site.desks.flushFiles()
        return site
    }

    /// Writes every export to exports/ under its default name, as `shelfd export --format` does: from then on
    /// shelfd keeps each current.
    func exportAll(_ root: ShelfRoot) throws {
        let site = try InProcessSite(root)
        let exports = site.desks.exports
        for format in Self.appFormats + [.json] {
            _ = try exports.write(
                format, exclusiveShelf: nil, includeUnverified: false, to: .file(exports.defaultFile(for: format)))
        }
    }

    /// The rows of exports/<format> (the header left out), or the books of exports/json.json.
    func exported(_ root: ShelfRoot, _ format: ExportFormat) throws -> [String] {
        let file = root.root.appendingPathComponent("exports").appendingPathComponent(format.defaultFileName)
        if format == .json {
            return try JSONStyle.decoder().decode(LibraryDocument.self, from: Data(contentsOf: file)).books.map(\.title)
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        return Array(text.split(separator: "\n").dropFirst().map(String.init))
    }

    @Test(
        "Matched by OpenLibrary, then by the catalogue imported since, then read with its ISBN alone: one entry, one row in every export",
        .timeLimit(.minutes(3)))
    func oneBookWhateverMatchedIt() async throws {
        try await withGeminiEmulator { gemini in
            try await withOpenLibraryEmulator { openLibrary in
                let root = try ShelfRoot(
                    geminiURL: gemini.baseURL, overrides: sources(["catalogue", "openlibrary"], openLibrary))
                // The catalogue is empty: OpenLibrary decides.
                try await photo(
                    root, gemini, seed: 61,
                    [
                        GeminiEmulator.Book(
                            title: "Dune", author: "Frank Herbert", isbn: "978-0-441-17271-9", confidence: 0.93,
                            box2D: [120, 410, 880, 450])
                    ])
                #expect(try root.resultDocuments().first?.books.first?.match?.source == "openlibrary")
                try exportAll(root)

                try root.importCatalogue("Title,Author,ISBN,Year\nDune,\"Herbert, Frank\",0441172717,1965\n")
                try await photo(
                    root, gemini, seed: 62,
                    [
                        GeminiEmulator.Book(
                            title: "Dune", author: "Frank Herbert", isbn: "9780441172719", confidence: 0.91,
                            box2D: [100, 300, 900, 340])
                    ])
                let second = try #require(try root.resultDocuments().first { $0.photo.path == "study/shelf-62.jpg" })
                #expect(second.books.first?.match?.source == "catalogue")

                // No source asked (enrichment turned off): the spine's title alone would not say it, its ISBN-10 does.
                try root.writeConfig(geminiURL: gemini.baseURL, overrides: sources([], nil))
                try await photo(
                    root, gemini, seed: 63,
                    [
                        GeminiEmulator.Book(
                            title: "DUNE", author: nil, isbn: "0441172717", confidence: 0.88,
                            box2D: [110, 500, 890, 530])
                    ])
                #expect(
                    try root.resultDocuments().first { $0.photo.path == "study/shelf-63.jpg" }?.books.first?.match
                        == nil)

                let library = try root.library()
                #expect(library.books.count == 1, "\(library.books.map(\.work))")
                let dune = try #require(library.books.first)
                #expect(dune.work == "openlibrary:/works/OL893415W", "the entry keeps the key it was first known by")
                #expect(dune.title == "Dune" && dune.author == "Frank Herbert" && dune.status == .verified)
                #expect(dune.sightingsCount == 3)
                #expect(
                    dune.sightings.map(\.photo) == ["study/shelf-63.jpg"],
                    "library.json keeps the latest sighting on each shelf")
                #expect(dune.editions.map(\.isbn13) == ["9780441172719"])
                #expect(dune.history.contains { $0.action == "matched" && $0.by == "openlibrary" })
                #expect(dune.history.contains { $0.action == "matched" && $0.by == "catalogue" })

                for format in Self.appFormats + [.json] {
                    let rows = try exported(root, format)
                    #expect(rows.count == 1, "\(format): \(rows)")
                    #expect(rows.first?.contains("Dune") == true, "\(format)")
                    if format != .json { #expect(rows.first?.contains("9780441172719") == true, "\(format)") }
                }
            }
        }
    }

    @Test(
        "A photo that links two entries merges them; library.json, the exports and review/ follow at once",
        .timeLimit(.minutes(3)))
    func linkingPhotoMergesEntries() async throws {
        try await withGeminiEmulator { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: sources([], nil))
            try await photo(
                root, gemini, seed: 71,
                [
                    GeminiEmulator.Book(
                        title: "Dune", author: "Frank Herbert", isbn: "9780441172719", confidence: 0.93,
                        box2D: [120, 410, 880, 450])
                ])
            // The model could not make out the author nor the ISBN, on another shelf: nothing says it is the same
            // book yet (the library's Dune is offered, not taken).
            let site = try await photo(
                root, gemini, seed: 72, shelf: "hall",
                [
                    GeminiEmulator.Book(
                        title: "DUNE", author: nil, confidence: 0.4, box2D: [100, 300, 900, 340])
                ])
            #expect(try root.library().books.map(\.work) == ["title:dune|herbert", "title:dune|"])
            let review = try site.desks.review.items()
            let item = try #require(review.first)
            #expect(review.count == 1)
            try exportAll(root)
            #expect(try exported(root, .json).count == 2)

            try await photo(
                root, gemini, seed: 73,
                [
                    GeminiEmulator.Book(
                        title: "Dune", author: nil, isbn: "0441172717", confidence: 0.9, box2D: [110, 500, 890, 530])
                ])
            let library = try root.library()
            #expect(library.books.count == 1, "\(library.books.map(\.work))")
            let dune = try #require(library.books.first)
            #expect(dune.title == "Dune" && dune.author == "Frank Herbert")
            #expect(dune.sightingsCount == 3)
            #expect(
                dune.history.contains {
                    $0.action == "merged" && $0.detail?.contains("(title:dune|)") == true
                        && $0.detail?.contains("(title:dune|herbert)") == true
                })
            #expect(dune.reviewID == item.id, "the open review item follows its book")
            #expect(try exported(root, .json) == ["Dune"])
            #expect(try exported(root, .goodreads).count == 1)
            #expect(root.reviewFiles().contains("\(item.id).json"))

            let accepted = try InProcessSite(root)
            _ = try accepted.desks.review.decide(item.id, .accept)
            accepted.desks.flushFiles()
            #expect(try root.library().books.count == 1)
            #expect(try root.library().books.first?.reviewID == nil)
            #expect(!root.reviewFiles().contains("\(item.id).json"))
        }
    }

    @Test(
        "Two editions of one work are one entry with both; the exports write the edition seen most",
        .timeLimit(.minutes(3)))
    func twoEditionsOneEntry() async throws {
        try await withGeminiEmulator { gemini in
            try await withOpenLibraryEmulator { openLibrary in
                let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: sources(["openlibrary"], openLibrary))
                let ace = GeminiEmulator.Book(
                    title: "Dune", author: "Frank Herbert", isbn: "9780441172719", confidence: 0.93,
                    box2D: [120, 410, 880, 450])
                let hodder = GeminiEmulator.Book(
                    title: "Dune", author: "Frank Herbert", isbn: "9780340960196", confidence: 0.9,
                    box2D: [100, 300, 900, 340])
                try await photo(root, gemini, seed: 81, [ace])
                try exportAll(root)
                try await photo(root, gemini, seed: 82, [hodder])
                try await photo(root, gemini, seed: 83, [hodder])

                let library = try root.library()
                #expect(library.books.count == 1, "\(library.books.map(\.work))")
                let dune = try #require(library.books.first)
                #expect(dune.work == "openlibrary:/works/OL893415W")
                #expect(dune.editions.map(\.isbn13) == ["9780441172719", "9780340960196"])
                #expect(dune.isbn13 == "9780340960196", "seen in two photos against one")
                for format in Self.appFormats {
                    let rows = try exported(root, format)
                    #expect(rows.count == 1, "\(format): \(rows)")
                    #expect(rows.first?.contains("9780340960196") == true, "\(format): \(rows)")
                }
            }
        }
    }

    @Test("Two different works that share a title stay two entries", .timeLimit(.minutes(3)))
    func sameTitleTwoWorks() async throws {
        try await withGeminiEmulator { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.importCatalogue(
                """
                Title,Author,ISBN,Year
                Emma,Jane Austen,9780141439587,1815
                Emma,Charlotte Brontë,9780441172719,1860

                """)
            try await photo(
                root, gemini, seed: 91,
                [
                    GeminiEmulator.Book(
                        title: "Emma", author: "Jane Austen", confidence: 0.93, box2D: [120, 410, 880, 450])
                ])
            try await photo(
                root, gemini, seed: 92,
                [
                    GeminiEmulator.Book(
                        title: "Emma", author: "Charlotte Brontë", confidence: 0.9, box2D: [100, 300, 900, 340])
                ])

            let library = try root.library()
            #expect(library.books.count == 2, "\(library.books.map(\.work))")
            #expect(Set(library.books.compactMap(\.author)) == ["Jane Austen", "Charlotte Brontë"])
            #expect(Set(library.books.compactMap(\.isbn13)) == ["9780141439587", "9780441172719"])
            #expect(library.books.allSatisfy { $0.match?.source == "catalogue" && $0.sightingsCount == 1 })
        }
    }

    @Test(
        "The library as evidence: a title read alone on the shelf where its work stands is that work; on another shelf it is offered first",
        .timeLimit(.minutes(3)))
    func libraryIsTheFirstSource() async throws {
        try await withGeminiEmulator { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let titleAlone = GeminiEmulator.Book(
                title: "Dune", author: nil, confidence: 0.4, box2D: [100, 300, 900, 340])
            try await photo(root, gemini, seed: 95, shelf: "living", [dune])

            // The same shelf, a day later: the spine shows its title only. It is the Dune that stands there.
            try await photo(root, gemini, seed: 96, shelf: "living", [titleAlone])
            var library = try root.library()
            #expect(library.books.count == 1, "no twin: \(library.books.map(\.work))")
            let work = try #require(library.books.first)
            #expect(work.status == .verified && work.author == "Frank Herbert" && work.sightingsCount == 2)
            #expect(
                work.history.contains {
                    $0.action == "matched" && $0.by == "library" && $0.detail?.contains("shelf living") == true
                },
                "\(work.history)")
            #expect(try InProcessSite(root).desks.review.items().isEmpty)
            let result = try #require(try root.resultDocuments().first { $0.photo.path == "living/shelf-96.jpg" })
            #expect(result.books.first?.notes?.contains { $0.hasPrefix("library_sighting: «Dune»") } == true)

            // Another shelf: the same title is asked about, the library's Dune first among the candidates.
            let site = try await photo(root, gemini, seed: 97, shelf: "study", [titleAlone])
            let items = try site.desks.review.items()
            let item = try #require(items.first)
            #expect(items.count == 1)
            let first = try #require(item.book.candidates?.first)
            #expect(
                first.record.title == "Dune" && first.record.author == "Frank Herbert" && first.libraryShelf == "living"
            )
            #expect(first.libraryLabel == "in your library, on shelf living", "as the review shows it")

            // Taking it makes the reading a sighting of that work, not a second one.
            _ = try site.desks.review.decide(item.id, .pick(1))
            site.desks.flushFiles()
            library = try root.library()
            #expect(library.books.count == 1, "\(library.books.map(\.work))")
            #expect(library.books.first?.sightingsCount == 3 && library.books.first?.status == .verified)
        }
    }

    @Test(
        "Photos of one shelf read together see each other's works: the title read alone is the work its neighbour verified, no twin",
        .timeLimit(.minutes(3)), arguments: ["SQLite", "PostgreSQL"])
    func photosReadTogether(store: String) async throws {
        if store == "PostgreSQL" {
            try await withPostgres { server in
                let url = server.url(database: try server.createDatabase())
                try await readTogether(overrides: ["store": ["url": "\"\(url)\""]])
            }
        } else {
            try await readTogether(overrides: [:])
        }
    }

    /// One run reads two photos of one shelf: one shows "Dune" with its author, the other its title alone.
    func readTogether(overrides: [String: [String: String]]) async throws {
        let whole = JPEGFactory.shelf(seed: 98), alone = JPEGFactory.shelf(seed: 99)
        let titleAlone = GeminiEmulator.Book(title: "Dune", author: nil, confidence: 0.4, box2D: [100, 300, 900, 340])
        let script = GeminiEmulator.Script(rules: [
            .init(photo: .sha256(sentSHA256(whole)), replies: [.books([dune])]),
            .init(photo: .sha256(sentSHA256(alone)), replies: [.books([titleAlone])]),
        ])
        try await withGeminiEmulator(script) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: overrides)
            // One run, one batch: the title alone is read with, and queued before, the photo that names its author.
            try root.drop(alone, as: "den/a-alone.jpg")
            try root.drop(whole, as: "den/b-whole.jpg")
            let site = try InProcessSite(root)
            let report = try await site.run()
            #expect(report.warning == nil && !report.status.isDegraded, "\(report.status)")
            site.desks.flushFiles()
            let library = try root.library()
            #expect(library.books.count == 1, "no twin: \(library.books.map(\.work))")
            #expect(library.books.first?.status == .verified && library.books.first?.sightingsCount == 2)
            #expect(try site.desks.review.items().isEmpty)
            let result = try #require(try root.resultDocuments().first { $0.photo.path == "den/a-alone.jpg" })
            #expect(
                result.books.first?.notes?.contains { $0.hasPrefix("library_sighting: «Dune»") } == true,
                "\(result.books)")
        }
    }
}
