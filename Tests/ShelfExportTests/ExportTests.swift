import Foundation
import ShelfCore
import ShelfExport
import Testing

/// Each export compared with its file in Golden/. After a deliberate change of format, rewrite them with
/// `SHELFD_RECORD_GOLDEN=1 swift test --filter ShelfExportTests` and read the diff before committing it.
func expectGolden(_ data: Data, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/\(name)")
    if ProcessInfo.processInfo.environment["SHELFD_RECORD_GOLDEN"] == "1" { try data.write(to: url) }
    let golden = try Data(contentsOf: url)
    #expect(
        String(decoding: data, as: UTF8.self) == String(decoding: golden, as: UTF8.self), "differs from Golden/\(name)",
        sourceLocation: sourceLocation)
    #expect(data == golden, sourceLocation: sourceLocation)
}

func export(
    _ format: ExportFormat, _ library: [LibraryDocument.Entry] = Fixtures.library,
    options: ExportOptions = Fixtures.options
) throws -> ExportResult {
    try LibraryExport.export(
        format, library: library, reviews: Fixtures.reviews, options: options,
        generatedAt: Fixtures.date("2024-03-09T09:00:00Z"))
}

func lines(_ result: ExportResult) -> [String] {
    String(decoding: result.data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(
        String.init)
}

@Suite("Export headers, byte for byte")
struct HeaderTests {
    @Test("Goodreads: the header of its library export")
    func goodreads() throws {
        #expect(
            try export(.goodreads, []).data
                == Data(
                    """
                    Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,Binding,\
                    Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,\
                    Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Owned Copies

                    """.utf8))
    }

    @Test("StoryGraph: the header of its library export")
    func storygraph() throws {
        #expect(
            try export(.storygraph, []).data
                == Data(
                    """
                    Title,Authors,Contributors,ISBN/UID,Format,Read Status,Date Added,Last Date Read,Dates Read,Read Count,\
                    Moods,Pace,Character- or Plot-Driven?,Strong Character Development?,Loveable Characters?,Diverse Characters?,\
                    Flawed Characters?,Star Rating,Review,Content Warnings,Content Warning Description,Tags,Owned?

                    """.utf8))
    }

    @Test("LibraryThing: the tab-separated header of its export, 54 columns")
    func librarything() throws {
        let header = """
            Book Id\tTitle\tSort Character\tPrimary Author\tPrimary Author Role\tSecondary Author\tSecondary Author Roles\tPublication\t\
            Date\tReview\tRating\tComment\tPrivate Comment\tSummary\tMedia\tPhysical Description\t\
            Weight\tHeight\tThickness\tLength\tDimensions\tPage Count\tLCCN\tAcquired\t\
            Date Started\tDate Read\tBarcode\tBCID\tTags\tCollections\tLanguages\tOriginal Languages\t\
            LC Classification\tISBN\tISBNs\tSubjects\tDewey Decimal\tDewey Wording\tOther Call Number\tCopies\t\
            Source\tEntry Date\tFrom Where\tOCLC\tWork id\tLending Patron\tLending Status\tLending Start\t\
            Lending End\tList Price\tPurchase Price\tValue\tCondition\tISSN

            """
        #expect(header.split(separator: "\t").count == 54)
        #expect(try export(.librarything, []).data == Data(header.utf8))
    }

    @Test("Libib: the header of its CSV export")
    func libib() throws {
        #expect(
            try export(.libib, []).data
                == Data(
                    """
                    item_type,title,creators,first_name,last_name,collection,ean_isbn13,upc_isbn10,description,publisher,\
                    publish_date,group,tags,notes,price,length,number_of_discs,number_of_players,age_group,ensemble,\
                    aspect_ratio,esrb,rating,review,review_date,status,began,completed,added,copies

                    """.utf8))
    }

    @Test("Review: the queue's own columns")
    func review() throws {
        let result = try LibraryExport.export(.review, library: [], reviews: [], generatedAt: Date())
        #expect(
            result.data
                == Data(
                    """
                    id,photo,title,author,isbn13,confidence,reasons,best_title,best_author,best_isbn13,best_score,candidates,crop,created_at

                    """.utf8))
    }

    @Test(
        "No byte-order mark, LF line ends, no CR anywhere",
        arguments: [ExportFormat.goodreads, .storygraph, .librarything, .libib, .review])
    func plainUTF8(_ format: ExportFormat) throws {
        let data = try export(format).data
        #expect(!data.starts(with: [0xEF, 0xBB, 0xBF]))
        #expect(!data.contains(0x0D))
        #expect(data.last == 0x0A)
    }
}

@Suite("The hand-made library, against golden files")
struct GoldenTests {
    @Test("Goodreads") func goodreads() throws { try expectGolden(try export(.goodreads).data, "goodreads.csv") }
    @Test("StoryGraph") func storygraph() throws { try expectGolden(try export(.storygraph).data, "storygraph.csv") }
    @Test("LibraryThing") func librarything() throws {
        try expectGolden(try export(.librarything).data, "librarything.tsv")
    }
    @Test("Libib") func libib() throws { try expectGolden(try export(.libib).data, "libib.csv") }
    @Test("JSON") func json() throws { try expectGolden(try export(.json).data, "library.json") }
    @Test("Review queue") func review() throws { try expectGolden(try export(.review).data, "review.csv") }

    @Test(
        "Every row has as many fields as the header", arguments: [ExportFormat.goodreads, .storygraph, .libib, .review])
    func rowsAreComplete(_ format: ExportFormat) throws {
        let table = try CSVTestReader.rows(
            String(decoding: try export(format, options: .init(includeUnverified: true)).data, as: UTF8.self))
        #expect(table.count > 2)
        for row in table { #expect(row.count == table[0].count, "\(row)") }
    }

    @Test("LibraryThing rows have 54 tab-separated fields")
    func tsvRowsAreComplete() throws {
        for line in lines(try export(.librarything)).dropLast() {
            #expect(line.split(separator: "\t", omittingEmptySubsequences: false).count == 54)
        }
    }

    @Test("The JSON export is the library document, every book included")
    func jsonRoundTrips() throws {
        let document = try JSONStyle.decoder().decode(LibraryDocument.self, from: try export(.json).data)
        #expect(document.books == Fixtures.library.map { $0.bounded() })
        #expect(document.schema == "shelfd.library/2")
    }

    @Test("Streamed a page at a time, the export is the bytes of the whole document and of the whole table")
    func streamedInPages() throws {
        for format in [ExportFormat.json, .goodreads, .librarything] {
            var data = Data()
            let result = try LibraryExport.stream(
                format,
                pages: { page in
                    for entry in Fixtures.library { try page([entry]) } // a page per work
                }, options: Fixtures.options, generatedAt: Fixtures.date("2024-03-09T09:00:00Z"), to: { data += $0 })
            let whole = try export(format)
            #expect(data == whole.data, "\(format)")
            #expect(result.count == whole.count)
        }
        let document = LibraryDocument(
            generatedAt: Fixtures.date("2024-03-09T09:00:00Z"), books: Fixtures.library.map { $0.bounded() })
        #expect(try export(.json).data == (try JSONStyle.encoder().encode(document)) + Data("\n".utf8))
    }
}

@Suite("What goes in and what is left out")
struct SelectionTests {
    @Test(
        "Only verified books go to the apps; the ones waiting for review are named",
        arguments: [ExportFormat.goodreads, .storygraph, .librarything, .libib])
    func unverifiedLeftOut(_ format: ExportFormat) throws {
        let result = try export(format)
        #expect(result.unverified.map(\.title) == ["Smudged Spine"])
        #expect(!String(decoding: result.data, as: UTF8.self).contains("Smudged Spine"))
    }

    @Test("--include-unverified adds them")
    func includeUnverified() throws {
        let result = try export(
            .goodreads, options: ExportOptions(includeUnverified: true, timeZone: TimeZone(identifier: "UTC")!))
        #expect(result.unverified.isEmpty && result.count == 6)
        #expect(lines(result).contains { $0.hasPrefix(",Smudged Spine,,,,\"=\"\"\"\"\",") })
    }

    @Test("JSON and the review queue are never filtered")
    func jsonKeepsEverything() throws {
        #expect(try export(.json).count == 6)
        #expect(try export(.review).count == 2)
    }

    @Test("Libib gets the books with an ISBN; the others are listed")
    func libibNeedsISBN() throws {
        let result = try export(.libib)
        #expect(result.count == 4)
        #expect(result.withoutISBN.map(\.title) == ["The Left Hand of Darkness"])
        for line in lines(result).dropFirst().dropLast() { #expect(line.contains(",978") || line.contains(",979")) }
    }

    @Test("The exclusive shelf sets Goodreads' shelf and read count, and StoryGraph's read status")
    func exclusiveShelf() throws {
        var options = Fixtures.options
        options.exclusiveShelf = .read
        let goodreads = try CSVTestReader.rows(
            String(decoding: try export(.goodreads, options: options).data, as: UTF8.self))
        #expect(goodreads.dropFirst().allSatisfy { $0[18] == "read" && $0[22] == "1" })
        let storygraph = try CSVTestReader.rows(
            String(decoding: try export(.storygraph, options: options).data, as: UTF8.self))
        #expect(storygraph.dropFirst().allSatisfy { $0[5] == "read" && $0[9] == "1" })
    }

    @Test("Dates are the day where the person is, not in UTC")
    func datesFollowTheTimeZone() throws {
        let options = ExportOptions(timeZone: TimeZone(secondsFromGMT: 2 * 3600)!)
        let rows = try CSVTestReader.rows(
            String(decoding: try export(.goodreads, options: options).data, as: UTF8.self))
        let leGuin = try #require(rows.first { $0[1] == "The Left Hand of Darkness" })
        #expect(leGuin[15] == "2024/03/07") // 23:30 UTC on the 6th is the 7th at UTC+2
    }

    @Test(
        "Of a work's editions, every app format writes the one the library shows (the one seen most), not the first",
        arguments: [ExportFormat.goodreads, .storygraph, .librarything, .libib])
    func shownEditionIsWritten(_ format: ExportFormat) throws {
        var dune = Fixtures.library[0]
        dune.isbn13 = "9780340960196"; dune.isbn10 = "0340960191" // the second edition, seen in more photos
        let text = String(decoding: try export(format, [dune]).data, as: UTF8.self)
        #expect(text.contains("9780340960196"))
        #expect(!text.contains("9780441172719") || format == .librarything, "only LibraryThing lists every edition")
        if format == .librarything { #expect(text.contains("[9780340960196]")) }
    }

    @Test(
        "Goodreads shelf names are folded to what Goodreads accepts; a book is on the shelf it stands on now, not each it stood on"
    )
    func goodreadsShelves() throws {
        let rows = try CSVTestReader.rows(String(decoding: try export(.goodreads).data, as: UTF8.self))
        #expect(rows.first { $0[1] == "The Left Hand of Darkness" }?[16] == "living-room")
        #expect(rows.first { $0[1] == "Cien años de soledad" }?[16] == "estantería-arriba")
        #expect(rows.first { $0[2] == "Lynne Truss" }?[16] == "study-top")
    }
}

@Suite("CSV and TSV fields")
struct DelimitedTextTests {
    @Test("RFC 4180: commas, quotes and line breaks are quoted, quotes doubled; plain fields are left bare")
    func csvQuoting() {
        let text = DelimitedText.Separator.comma.text([
            ["plain", "a, b", "say \"hi\"", "two\nlines", "", "=\"0441172717\""]
        ])
        #expect(text == "plain,\"a, b\",\"say \"\"hi\"\"\",\"two\nlines\",,\"=\"\"0441172717\"\"\"\n")
    }

    @Test("TSV has no quoting: tabs and line breaks inside a field become spaces")
    func tsvFields() {
        let text = DelimitedText.Separator.tab.text([["a\tb", "say \"hi\"", "two\r\nlines", "x, y"]])
        #expect(text == "a b\tsay \"hi\"\ttwo lines\tx, y\n")
    }
}

@Suite("Author names")
struct AuthorNameTests {
    @Test(
        "Several authors are told apart; a surname-first name is one person",
        arguments: [
            ("Frank Herbert", ["Frank Herbert"]),
            ("Herbert, Frank", ["Frank Herbert"]),
            ("Le Guin, Ursula K.", ["Ursula K. Le Guin"]),
            ("Neil Gaiman & Terry Pratchett", ["Neil Gaiman", "Terry Pratchett"]),
            ("Neil Gaiman, Terry Pratchett", ["Neil Gaiman", "Terry Pratchett"]),
            ("Neil Gaiman and Terry Pratchett", ["Neil Gaiman", "Terry Pratchett"]),
            ("Douglas Preston; Lincoln Child", ["Douglas Preston", "Lincoln Child"]),
            ("Martin Luther King, Jr.", ["Martin Luther King Jr."]),
            ("  J. R. R.   Tolkien ", ["J. R. R. Tolkien"]),
            ("", []),
        ])
    func split(_ text: String, _ expected: [String]) {
        #expect(AuthorNames.split(text) == expected)
    }

    @Test(
        "Surname first, with its particles and after a suffix",
        arguments: [
            ("Frank Herbert", "Herbert, Frank"),
            ("Ursula K. Le Guin", "Le Guin, Ursula K."),
            ("Vincent van Gogh", "van Gogh, Vincent"),
            ("Rosalee de la Foret", "de la Foret, Rosalee"),
            ("Gabriel García Márquez", "Márquez, Gabriel García"),
            ("Martin Luther King Jr.", "King, Martin Luther, Jr."),
            ("Brom", "Brom"),
        ])
    func lastFirst(_ name: String, _ expected: String) {
        #expect(AuthorNames.lastFirst(name) == expected)
    }
}

/// Reads the CSV the exports write (RFC 4180), to look at fields by column.
enum CSVTestReader {
    struct Malformed: Error {}

    static func rows(_ text: String) throws -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = "", quoted = false, afterQuote = false
        for character in text {
            if quoted {
                if character == "\"" { quoted = false; afterQuote = true } else { field.append(character) }
                continue
            }
            switch character {
            case "\"":
                if afterQuote { field.append("\"") } else if !field.isEmpty { throw Malformed() }
                quoted = true; afterQuote = false
            case ",": row.append(field); field = ""; afterQuote = false
            case "\n": row.append(field); rows.append(row); row = []; field = ""; afterQuote = false
            default: field.append(character); afterQuote = false
            }
        }
        if quoted { throw Malformed() }
        return rows
    }
}

@Suite("library.json's bounded entry")
struct BoundedEntryTests {
    @Test("A work seen in many photos keeps the latest sighting on each shelf, its counts, and the latest steps")
    func boundedHowEverOftenSeen() throws {
        let sightings = (0..<300).map { i in
            LibraryDocument.Sighting(
                photo: "\(i % 2 == 0 ? "study" : "hall")/IMG_\(i).jpg", photoSHA256: "sha\(i)", box: nil,
                confidence: 0.9, shelf: i % 2 == 0 ? "study" : "hall",
                seenAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 60))
        }
        let history = (0..<50).map { i in
            LibraryDocument.Decision(
                action: "reviewed_by_user", by: "user", at: Date(timeIntervalSince1970: 1_700_000_000 + Double(i)),
                detail: "edit \(i)")
        }
        let entry = LibraryDocument.Entry(
            work: "title:dune|herbert", title: "Dune", author: "Frank Herbert", isbn13: nil,
            isbn10: nil, confidence: 0.9, status: .verified, source: "gemini",
            firstSeen: sightings[0].seenAt, shelves: ["hall", "study"], sightings: sightings,
            history: history)
        let bounded = entry.bounded()
        #expect(bounded.sightings.map(\.photo) == ["study/IMG_298.jpg", "hall/IMG_299.jpg"])
        #expect(bounded.sightingsCount == 300)
        #expect(bounded.lastSeen == sightings[299].seenAt)
        #expect(bounded.firstSeen == sightings[0].seenAt)
        #expect(bounded.history.count == LibraryDocument.Entry.boundedHistory)
        #expect(bounded.history.last?.detail == "edit 49")
        #expect(bounded.historyCount == 50)
    }
}
