import Foundation
import ShelfCore
import ShelfEnrichment
import ShelfImaging
import Testing

/// The shipped samples/ folder: what a new user tries first and what `shelfd eval` measures providers on,
/// so a truth file that is wrong makes every number wrong.
@Suite("The sample shelves")
struct SamplesTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples")

    static func truthFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasSuffix(".truth.json") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func truth(_ url: URL) throws -> TruthDocument {
        try JSONDecoder().decode(TruthDocument.self, from: Data(contentsOf: url))
    }

    /// Matching key of a book: what the matcher compares (normalised title and surname).
    static func key(title: String, author: String?) -> String {
        TextNormalization.title(title) + "|" + TextNormalization.surname(author)
    }

    @Test("Every sample photo has a truth file naming it, with 8–14 books in boxes ordered left to right")
    func truthFilesAreValid() throws {
        let files = try Self.truthFiles()
        #expect(files.count >= 5)
        var titles = Set<String>()
        for file in files {
            let truth = try Self.truth(file)
            let name = file.lastPathComponent
            #expect(truth.schema == "shelfd.truth/1", "\(name)")
            #expect(truth.photo == String(name.dropLast(".truth.json".count)) + ".jpg", "\(name) names \(truth.photo)")
            let photo = Self.folder.appendingPathComponent(truth.photo)
            let bytes = try [UInt8](Data(contentsOf: photo))
            #expect(bytes.count <= 1_200_000, "\(truth.photo) is \(bytes.count) bytes; samples go into git")
            let info = try PhotoInspector.inspect(bytes)
            #expect(max(info.displayWidth, info.displayHeight) >= 2000, "\(truth.photo)")
            #expect((8...14).contains(truth.books.count), "\(name) has \(truth.books.count) books")
            var previous = -1.0
            for book in truth.books {
                titles.insert(Self.key(title: book.title, author: book.author))
                #expect(book.author?.isEmpty == false, "\(name): \(book.title) has no author")
                if let isbn = book.isbn13 { #expect(ISBN(isbn)?.isbn13 == isbn, "\(name): \(book.title) ISBN \(isbn)") }
                guard let box = book.box else { Issue.record("\(name): \(book.title) has no box"); continue }
                for value in [box.x1, box.y1, box.x2, box.y2] {
                    #expect((0...1).contains(value), "\(name): \(book.title)")
                }
                #expect(box.x1 < box.x2 && box.y1 < box.y2, "\(name): \(book.title) box is empty")
                #expect(box.x1 >= previous, "\(name): \(book.title) is out of left-to-right order")
                previous = box.x1
            }
        }
        #expect(titles.count >= 45, "only \(titles.count) distinct sample books")
    }

    @Test("Every sample book is in samples/catalogue.csv, among many others")
    func catalogueHoldsEveryBook() throws {
        let lines = try LineReader(path: Self.folder.appendingPathComponent("catalogue.csv").path)
        let (reader, header) = try #require(try DelimitedReader.open(lines))
        #expect(header.map { $0.lowercased() } == ["title", "author", "isbn", "year"])
        var catalogue = Set<String>(), isbns = Set<String>(), rows = 0
        while let fields = try reader.next() {
            rows += 1
            catalogue.insert(Self.key(title: fields[0], author: fields[1]))
            if !fields[2].isEmpty { isbns.insert(fields[2]) }
        }
        for file in try Self.truthFiles() {
            for book in try Self.truth(file).books {
                // Bools, so a failure names the book rather than printing the whole catalogue.
                let listed = catalogue.contains(Self.key(title: book.title, author: book.author))
                #expect(
                    listed, "\(file.lastPathComponent): \(book.title) by \(book.author ?? "?") is not in the catalogue")
                if let isbn = book.isbn13 {
                    let isbnListed = isbns.contains(isbn)
                    #expect(isbnListed, "\(book.title): \(isbn) is not in the catalogue")
                }
            }
        }
        #expect(rows >= 150, "the catalogue should hold other books too, so matching is a real test")
    }

    @Test("One sample is stored sideways with an EXIF orientation, its truth in displayed coordinates")
    func sidewaysSampleCarriesOrientation() throws {
        var sideways: [String] = []
        for file in try Self.truthFiles() {
            let truth = try Self.truth(file)
            let info = try PhotoInspector.inspect(
                [UInt8](Data(contentsOf: Self.folder.appendingPathComponent(truth.photo))))
            guard info.orientation != 1 else { continue }
            sideways.append(truth.photo)
            // Stored portrait, displayed landscape like the others: the books stand upright once turned.
            #expect(info.isQuarterTurned && info.height > info.width, "\(truth.photo)")
            #expect(truth.notes?.contains { $0.contains("EXIF orientation") } == true, "\(truth.photo) notes")
        }
        #expect(!sideways.isEmpty, "no sample carries an EXIF orientation other than 1")
    }
}
