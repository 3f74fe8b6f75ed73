import CZlib
import Foundation
import ShelfCore
import ShelfMatching
import ShelfStore
import ShelfTesting
import Testing
@testable import ShelfEnrichment

/// A fresh store in a temporary folder, an importer on it, and a way to write the files to import.
private struct Fixture {
    let folder: URL
    let store: Store
    var importer: CatalogueImporter { CatalogueImporter(catalogue: store.catalogue) }

    func file(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// The file written, then imported.
    func importing(_ name: String, _ text: String) throws -> CatalogueImportReport {
        try importer.importFile(try file(name, text))
    }

    /// Written through zlib, as OpenLibrary publishes its dumps.
    func gzip(_ name: String, _ text: String) -> String {
        let path = folder.appendingPathComponent(name).path
        let file = gzopen(path, "wb")
        _ = Array(text.utf8).withUnsafeBytes { gzwrite(file, $0.baseAddress, UInt32($0.count)) }
        gzclose(file)
        return path
    }

    func record(isbn: String) throws -> CatalogueRecord? { try store.catalogue.record(isbn13: ISBN(isbn)!.isbn13) }

    func search(_ text: String) throws -> [CatalogueRecord] {
        try CatalogueSource(catalogue: store.catalogue).search(SpineQuery(text: text), limit: 10)
    }
}

private func withFixture(_ body: (Fixture) throws -> Void) async throws {
    try await withTemporaryDirectory { folder in
        try body(Fixture(folder: folder, store: try Store.open(path: folder.appendingPathComponent("shelfd.db").path)))
    }
}

@Suite struct CatalogueImportTests {
    @Test(
        "A plain CSV: header in any case, a BOM, CRLF, quoted commas and line breaks; a row without title is skipped and said"
    )
    func plainCSV() async throws {
        try await withFixture { fixture in
            let report = try fixture.importing(
                "books.csv",
                "\u{FEFF}TITLE,Author,isbn,Year\r\n"
                    + "Dune,\"Herbert, Frank\",0441172717,1965\r\n"
                    + "\"Good Omens: The Nice and Accurate Prophecies of Agnes Nutter, Witch\",\"Pratchett, Terry\",,1990\r\n"
                    + "\"A Title\r\nOn Two Lines\",\"Someone \"\"Quoted\"\"\",,\r\n"
                    + ",Nobody,,\r\n"
                    + "\r\n")
            #expect(report.format == "csv")
            #expect(report.imported == 3 && report.duplicates == 0 && report.skipped == 1)
            #expect(report.skipReasons == ["line 6: no title"])
            let dune = try #require(try fixture.record(isbn: "0441172717"))
            #expect(dune.title == "Dune" && dune.author == "Herbert, Frank" && dune.year == 1965)
            #expect(dune.isbn13 == "9780441172719" && dune.isbn10 == "0441172717")
            let omens = try #require(try fixture.search("good omens").first)
            #expect(omens.title == "Good Omens: The Nice and Accurate Prophecies of Agnes Nutter, Witch")
            let twoLines = try #require(try fixture.search("title two lines").first)
            #expect(twoLines.title == "A Title\nOn Two Lines" && twoLines.author == "Someone \"Quoted\"")
        }
    }

    @Test("A Goodreads export: ISBNs written as =\"…\", the author, the publication year")
    func goodreadsExport() async throws {
        try await withFixture { fixture in
            let header =
                "Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,"
                + "Binding,Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,"
                + "Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Owned Copies"
            let report = try fixture.importing(
                "goodreads_library_export.csv",
                header + "\n"
                    + "2767052,\"The Hunger Games (The Hunger Games, #1)\",Suzanne Collins,\"Collins, Suzanne\",,\"=\"\"0439023483\"\"\","
                    + "\"=\"\"9780439023481\"\"\",5,4.33,Scholastic Press,Hardcover,374,2008,2008,2019/03/02,2018/12/01,,,read,,,,1,0\n"
                    + "234225,Dune,Frank Herbert,\"Herbert, Frank\",,=\"0441172717\",=\"9780441172719\",0,4.25,Ace,Paperback,604,"
                    + "1990,1965,,2020/01/05,to-read,to-read (#1),to-read,,,,0,0\n"
                    + "1,Untitled Draft,Anon,\"Anon, \",,=\"\",=\"\",0,0,,,,,,,2020/01/05,,,to-read,,,,0,0\n")
            #expect(report.format == "goodreads")
            #expect(report.imported == 3 && report.skipped == 0)
            let hunger = try #require(try fixture.record(isbn: "9780439023481"))
            #expect(hunger.title == "The Hunger Games (The Hunger Games, #1)" && hunger.author == "Suzanne Collins")
            #expect(hunger.year == 2008)
            let dune = try #require(try fixture.record(isbn: "9780441172719"))
            #expect(dune.year == 1965, "the original publication year, not the edition's")
            #expect(try fixture.search("untitled draft").first?.isbn13 == nil)
        }
    }

    @Test("A StoryGraph export: several authors in one field, ISBN/UID")
    func storyGraphExport() async throws {
        try await withFixture { fixture in
            let report = try fixture.importing(
                "storygraph.csv",
                "Title,Authors,Contributors,ISBN/UID,Format,Read Status,Date Added,"
                    + "Last Date Read,Dates Read,Read Count,Moods,Pace,Character- or Plot-Driven?,Star Rating,Review,Tags,Owned?\n"
                    + "Good Omens,\"Terry Pratchett, Neil Gaiman\",,9780060853983,paperback,read,2021/04/01,,,1,funny,fast,,4.5,,,Yes\n"
            )
            #expect(report.format == "storygraph" && report.imported == 1)
            let omens = try #require(try fixture.record(isbn: "9780060853983"))
            #expect(omens.author == "Terry Pratchett; Neil Gaiman")
            #expect(TextNormalization.surname(omens.author) == "pratchett")
        }
    }

    @Test("A LibraryThing export, tab-separated: ISBN in brackets, several ISBNs, the date's year")
    func libraryThingExport() async throws {
        try await withFixture { fixture in
            let columns = [
                "Book Id", "Title", "Sort Character", "Primary Author", "Primary Author Role", "Secondary Author",
                "Publication", "Date", "Review", "Rating", "Tags", "Collections", "LC Classification", "ISBN",
                "ISBNs", "Dewey Decimal", "Other Call Number",
            ]
            let rows = [
                [
                    "1", "Dune", "1", "Herbert, Frank", "", "", "Ace (1990), Paperback", "1965", "", "5", "sf, classic",
                    "Your library", "PS3558.E63 D8", "[0441172717]", "0441172717, 9780441172719", "813.54", "SF Her",
                ],
                [
                    "2", "Neuromancer", "1", "Gibson, William", "", "", "Ace (1984)", "1984", "", "", "",
                    "Your library", "",
                    "", "0441569595, 9780441569595", "813.54", "",
                ],
            ]
            let text = ([columns] + rows).map { $0.joined(separator: "\t") }.joined(separator: "\n") + "\n"
            let report = try fixture.importing("LibraryThing_export.tsv", text)
            #expect(report.format == "librarything" && report.imported == 2)
            let dune = try #require(try fixture.record(isbn: "0441172717"))
            #expect(dune.author == "Herbert, Frank" && dune.year == 1965 && dune.tag == "SF Her")
            #expect(try fixture.record(isbn: "9780441569595")?.title == "Neuromancer")
        }
    }

    @Test("A library inventory with call numbers and series; an ISBN with a note after it still counts")
    func inventoryWithCallNumbers() async throws {
        try await withFixture { fixture in
            #expect(
                try fixture.importing(
                    "catalogue.csv",
                    "title,author,tag,series,isbn\n"
                        + "Mecanoscrit del segon origen ,\"Pedrolo, Manuel de\",N Ped,,9788497662406 (Eumo)\n"
                        + "\"Las Pseudociencias : ¡vaya timo! \",\"Bunge, Mario, 1919-2020\",001 Bun,¡Vaya timo!   14,9788492422241\n"
                ).imported == 2)
            let novel = try #require(try fixture.record(isbn: "9788497662406"))
            #expect(novel.tag == "N Ped" && novel.series == nil)
            let bunge = try #require(try fixture.search("001 Bun pseudociencias").first)
            #expect(bunge.tag == "001 Bun" && bunge.series == "¡Vaya timo!   14")
        }
    }

    @Test("OpenLibrary dumps, gzip or not: authors name the editions and works; bad lines are skipped and counted")
    func openLibraryDumps() async throws {
        try await withFixture { fixture in
            let authors = try fixture.file(
                "ol_dump_authors_2024-01-31.txt",
                "/type/author\t/authors/OL1A\t1\t2008-04-01T03:28:50\t{\"name\": \"Frank Herbert\", \"key\": \"/authors/OL1A\"}\n"
                    + "/type/author\t/authors/OL2A\t1\t2008-04-01T03:28:50\t{\"key\": \"/authors/OL2A\"}\n")
            let editions = fixture.gzip(
                "ol_dump_editions_2024-01-31.txt.gz",
                "/type/edition\t/books/OL1M\t3\t2010-04-13T00:00:00\t{\"title\": \"Dune\", \"authors\": [{\"key\": \"/authors/OL1A\"}], "
                    + "\"isbn_10\": [\"0441172717\"], \"publish_date\": \"September 1990\", \"key\": \"/books/OL1M\"}\n"
                    + "garbage without any tabs\n"
                    + "/type/edition\t/books/OL2M\t1\t2010-04-13T00:00:00\t{not json\n"
                    + "/type/edition\t/books/OL3M\t1\t2010-04-13T00:00:00\t{\"title\": \"Dune Messiah\", \"subtitle\": \"Dune Chronicles 2\", "
                    + "\"authors\": [{\"key\": \"/authors/OL1A\"}], \"isbn_13\": [\"9780593098233\"], \"series\": [\"Dune Chronicles\"]}\n"
                    + "/type/edition\t/books/OL4M\t1\t2010-04-13T00:00:00\t{\"authors\": []}\n")
            let works = fixture.gzip(
                "ol_dump_works_2024-01-31.txt.gz",
                "/type/work\t/works/OL1W\t2\t2010-04-13T00:00:00\t{\"title\": \"Children of Dune\", \"authors\": [{\"author\": "
                    + "{\"key\": \"/authors/OL1A\"}, \"type\": {\"key\": \"/type/author_role\"}}], \"first_publish_date\": \"1976\"}\n"
            )
            // Editions given first: the authors dump is imported before them all the same.
            let order = CatalogueImporter.importOrder([editions, works, authors])
            #expect(order.first == authors)
            let reports = try order.map { try fixture.importer.importFile($0) }
            #expect(reports.map(\.format) == ["openlibrary-authors", "openlibrary-editions", "openlibrary-works"])
            #expect(reports[0].imported == 1 && reports[0].skipped == 1)
            #expect(reports[1].imported == 2 && reports[1].skipped == 3)
            #expect(
                reports[1].skipReasons == [
                    "line 2: not 5 tab-separated fields", "line 3: the record is not a JSON object",
                    "line 5: no title",
                ])
            #expect(reports[2].imported == 1)
            let dune = try #require(try fixture.record(isbn: "0441172717"))
            #expect(dune.author == "Frank Herbert" && dune.year == 1990)
            let messiah = try #require(try fixture.record(isbn: "9780593098233"))
            #expect(messiah.title == "Dune Messiah: Dune Chronicles 2" && messiah.series == "Dune Chronicles")
            let children = try #require(try fixture.search("children of dune").first)
            #expect(children.author == "Frank Herbert" && children.year == 1976)
        }
    }

    @Test("Importing the same files again adds nothing; a later export with the ISBN completes the entry")
    func reimportAddsNothing() async throws {
        try await withFixture { fixture in
            let plain = try fixture.file(
                "a.csv", "title,author\nDune,Frank Herbert\nEmma,Jane Austen\nEmma,Jane Austen\n")
            let first = try fixture.importer.importFile(plain)
            #expect(first.imported == 2 && first.duplicates == 1)
            let again = try fixture.importer.importFile(plain)
            #expect(again.imported == 0 && again.duplicates == 3)
            let withISBN = try fixture.file(
                "b.csv",
                "title,author,isbn\nDune,\"Herbert, Frank\",0441172717\n"
                    + "Dune,\"Herbert, Frank\",9780441104024\n")
            let completed = try fixture.importer.importFile(withISBN)
            #expect(
                completed.imported == 1 && completed.duplicates == 1,
                "the first fills in the ISBN, the second is another edition")
            #expect(try fixture.record(isbn: "0441172717")?.key == (try fixture.search("dune").map(\.key).min()))
            let stats = try fixture.store.catalogue.stats()
            #expect(stats.entries == 3 && stats.withISBN == 2)
            #expect(stats.imports.map(\.imported) == [2, 0, 1])
            #expect(stats.imports.allSatisfy { $0.finishedAt != nil })
        }
    }

    @Test("A file that is not a catalogue says what a catalogue file looks like; a missing one says so")
    func unusableFiles() async throws {
        try await withFixture { fixture in
            let notACatalogue = try fixture.file("photos.csv", "name,size\nIMG_1.jpg,2048\n")
            #expect {
                try fixture.importer.importFile(notACatalogue)
            } throws: { error in
                let error = error as? CatalogueError
                return error?.code == .unknownFormat && error?.message.contains("no \"title\" column") == true
            }
            #expect {
                try fixture.importer.importFile(fixture.folder.appendingPathComponent("missing.csv").path)
            } throws: { error in
                (error as? CatalogueError)?.code == .unreadableFile
            }
        }
    }
}
