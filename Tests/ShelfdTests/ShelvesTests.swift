import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Shelves as places through the binary (docs/library.md, "Shelves"): photos dropped in incoming/den and incoming/office,
/// read by `shelfd run` with the emulated model, rounds closed with `shelfd shelf close`, and what a person then reads
/// in `shelf show`, `shelf list`, `library find` and library.json. The rules themselves (half a shelf photographed
/// among them), on both engines and a clock the test moves, are in `ShelfRoundsTests`.
@Suite("Shelves through the binary", .serialized)
struct ShelvesTests {
    /// Spines left to right, evenly spread with room at both ends of the photo; each title a work of its own.
    func spines(_ titles: [String]) -> [GeminiEmulator.Book] {
        titles.enumerated().map { index, title in
            let x = 200 + 600 * index / max(1, titles.count - 1)
            return GeminiEmulator.Book(
                title: title, author: "Author \(title)", isbn: nil, confidence: 0.95,
                box2D: [100, x - 20, 900, x + 20])
        }
    }

    /// Drops a photo the model reads as `titles` and runs shelfd over it.
    func shoot(_ root: ShelfRoot, _ gemini: GeminiEmulator, _ name: String, seed: Int, _ titles: [String]) async throws
    {
        gemini.setScript(.always(.books(spines(titles))))
        try root.drop(JPEGFactory.shelf(seed: seed), as: name)
        let run = try await root.shelfd("run")
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
    }

    func close(_ root: ShelfRoot, _ shelf: String) async throws {
        let closed = try await root.shelfd("shelf", "close", shelf)
        #expect(closed.status == 0, "\(closed.stdout) \(closed.stderr)")
    }

    func show(_ root: ShelfRoot, _ shelf: String) async throws -> ShelfDocument {
        let shown = try await root.shelfd("shelf", "show", shelf, "--json")
        #expect(shown.status == 0, "\(shown.stderr)")
        return try JSONStyle.decoder().decode(ShelfDocument.self, from: Data(shown.stdout.utf8))
    }

    @Test(
        "Two days of one den and one office, the den in three shots: exactly the books taken away, added and moved, on both shelves; lent, then seen again, ends the loan",
        .timeLimit(.minutes(3)))
    func twoDaysOfShelves() async throws {
        try await withGeminiEmulator { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["enrich": ["sources": "[]"]])
            try await shoot(root, gemini, "den/day1.jpg", seed: 1, ["Alpha", "Bravo", "Charlie", "Delta", "Echo"])
            try await shoot(root, gemini, "office/day1.jpg", seed: 2, ["Xray", "Yankee"])
            try await close(root, "den")
            try await close(root, "office")
            let first = try await show(root, "den")
            #expect(first.books.map(\.title) == ["Alpha", "Bravo", "Charlie", "Delta", "Echo"])
            #expect(first.changes.arrived.count == 5 && first.changes.arrived.allSatisfy { $0.from == nil })

            // Day two: the den in three shots (Charlie taken away, Foxtrot new), Echo moved to the office.
            try await shoot(root, gemini, "den/day2-1.jpg", seed: 3, ["Alpha", "Bravo"])
            let open = try await root.shelfd("shelf", "list")
            #expect(open.stdout.contains("round open"), "\(open.stdout)")
            try await shoot(root, gemini, "den/day2-2.jpg", seed: 4, ["Delta"])
            try await shoot(root, gemini, "den/day2-3.jpg", seed: 7, ["Foxtrot"])
            try await shoot(root, gemini, "office/day2.jpg", seed: 5, ["Xray", "Yankee", "Echo"])
            try await close(root, "den")
            try await close(root, "office")

            // The JSON as a script reads it: `from` is null for a book new to the library.
            let json = try await root.shelfd("shelf", "show", "den", "--json")
            let raw = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let changes = try #require(raw["changes"] as? [String: [[String: Any]]])
            #expect(changes["arrived"]?.map { "\($0["title"]!) from \($0["from"]!)" } == ["Foxtrot from <null>"])
            #expect(changes["missing"]?.map { "\($0["title"]!)" } == ["Charlie"])
            #expect(changes["moved_out"]?.map { "\($0["title"]!) to \($0["to"]!)" } == ["Echo to office"])
            let den = try await show(root, "den")
            #expect(den.lastRound?.photos == 3, "three shots, one round")
            #expect(den.books.map(\.title) == ["Alpha", "Bravo", "Charlie", "Delta", "Foxtrot"])
            let office = try await show(root, "office")
            #expect(office.changes.arrived.map { "\($0.title) from \($0.from ?? "new")" } == ["Echo from den"])
            #expect(office.changes.missing.isEmpty && office.changes.movedOut.isEmpty)

            // Charlie was lent: said once, it is lent in library.json and in the list, not missing.
            let charlieWork = try #require(den.books.first { $0.title == "Charlie" }).work
            let lent = try await root.shelfd("shelf", "answer", charlieWork, "--lent-to", "Sam")
            #expect(lent.status == 0, "\(lent.stderr)")
            #expect(lent.stdout.contains("Lent to Sam, from den"))
            let charlie = try #require(try root.library().books.first { $0.title == "Charlie" })
            #expect(charlie.lentTo == "Sam" && charlie.missingSince == nil)
            #expect(charlie.history.last?.action == "lent")
            let list = try await root.shelfd("shelf", "list")
            #expect(list.stdout.contains("1 lent") && !list.stdout.contains("missing"), "\(list.stdout)")

            // Back, on the office shelf: the loan ends by itself, and find says where it stands now.
            try await shoot(root, gemini, "office/day3.jpg", seed: 6, ["Charlie", "Xray", "Yankee", "Echo"])
            #expect(try root.library().books.first { $0.title == "Charlie" }?.lentTo == nil)
            let found = try await root.shelfd("library", "find", "charlie")
            #expect(found.status == 0, "\(found.stderr)")
            #expect(found.stdout.contains("Charlie — Author Charlie: 1st from the left on office"), "\(found.stdout)")
            try await close(root, "office")
            let history = try #require(try root.library().books.first { $0.title == "Charlie" }).history.map(\.action)
            #expect(history.contains("returned"))
            let echo = try await root.shelfd("library", "find", "echo")
            #expect(echo.stdout.contains("4th from the left on office"), "\(echo.stdout)")

            // Usage mistakes exit 2; a shelf never photographed is 1, with where to look.
            #expect(try await root.shelfd("shelf", "answer", charlieWork).status == 2)
            #expect(try await root.shelfd("shelf", "answer", charlieWork, "--gone", "--here").status == 2)
            #expect(try await root.shelfd("shelf", "close", "den").status == 2, "no open round")
            let unknown = try await root.shelfd("shelf", "show", "attic")
            #expect(unknown.status == 1 && unknown.stderr.contains("shelf list"), "\(unknown.stderr)")
        }
    }

    @Test(
        "The shelf page on a phone: the missing books with where they stood, a key per answer, the arrived book boxed, nothing wider than the screen",
        .timeLimit(.minutes(3)))
    func shelfPageOnAPhone() async throws {
        try await withGeminiEmulator { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["enrich": ["sources": "[]"]])
            try await shoot(root, gemini, "den/day1.jpg", seed: 21, ["Alpha", "Bravo", "Charlie", "Delta", "Echo"])
            try await close(root, "den")
            try await shoot(root, gemini, "den/day2.jpg", seed: 22, ["Alpha", "Delta", "Foxtrot", "Echo"])
            try await close(root, "den")
            let before = try await show(root, "den")
            #expect(before.changes.missing.map(\.title) == ["Bravo", "Charlie"])
            let web = try root.startWeb()
            defer { web.process.terminate() }
            let url = try await root.webURL()

            try await withBrowser(viewport: .phone) { browser in
                try await browser.navigate(to: url + "/shelves")
                try await browser.find("[data-shelves] a").click()
                try await browser.waitForElement("[data-missing]")
                let crops = try await browser.findAll(".shelf-stood")
                #expect(crops.count == 2)
                for crop in crops {
                    try await browser.waitUntil("where a missing book stood to show") {
                        try await crop.property("naturalWidth").int ?? 0 > 0
                    }
                }
                #expect(
                    try await browser.findAll(".shelf-arrived-box").count == 1, "Foxtrot boxed on the round's photo")
                let width = try await browser.pageWidth()
                #expect(!width.overflows, "\(width)")
                try await browser.screenshot("shelf-phone")

                // The first missing book is selected: l, a name, Enter lends it.
                try await browser.pressKeys("l")
                try await browser.pressKeys("Sam\u{E007}")
                try await browser.waitUntil("the page says it was lent") {
                    (try? await browser.find("[role=status]").text())?.contains("lent to Sam") == true
                }
                #expect(
                    try await browser.findAll("[data-missing-item]").count == 1,
                    "Bravo answered: only Charlie is missing")
                try await browser.pressKeys("g")
                try await browser.waitUntil("the page says it is gone") {
                    (try? await browser.find("[role=status]").text())?.contains("gone") == true
                }
                #expect(try await browser.findAll("[data-missing]").isEmpty)

                // The shelves page lists the loan: whose book, to whom, from which shelf.
                try await browser.navigate(to: url + "/shelves")
                let loans = try await browser.waitForElement("[data-lent]").text()
                #expect(
                    loans.contains("Bravo") && loans.contains("lent to Sam") && loans.contains("from den"), "\(loans)")

                // Where is Echo? The library's search says, with where it stood.
                try await browser.navigate(to: url + "/library?q=echo")
                let place = try await browser.waitForElement("[data-where]")
                #expect(
                    try await place.text().contains("5th from the left on den"),
                    "Charlie gone, Bravo lent: Echo is fifth")
                let stood = try await browser.find("[data-where] img")
                try await browser.waitUntil("where Echo stood to show") {
                    try await stood.property("naturalWidth").int ?? 0 > 0
                }
                let errors = try await browser.severeErrors()
                #expect(errors.isEmpty, "\(errors)")
            }
            let den = try await show(root, "den")
            #expect(den.books.first { $0.title == "Bravo" }?.lentTo == "Sam")
            #expect(!den.books.contains { $0.title == "Charlie" }, "gone: no longer on the shelf")
            #expect(try root.library().books.contains { $0.title == "Charlie" }, "but still in the library")
            let api = try await root.shelfd("shelf", "list", "--json")
            #expect(api.stdout.contains("\"lent\" : 1"), "\(api.stdout)")
        }
    }
}
