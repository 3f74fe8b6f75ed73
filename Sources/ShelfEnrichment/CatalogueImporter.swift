import Foundation
import ShelfCore
import ShelfStore

/// Fills the local catalogue from a library export (CSV or tab-separated: plain `title, author[, isbn][, year]`,
/// Goodreads, StoryGraph, LibraryThing, with optional call number and series columns) or an OpenLibrary dump
/// (`ol_dump_editions|works|authors_*.txt`, gzip or not). Files are streamed; rows are written in batches.
package struct CatalogueImporter: Sendable {
    let catalogue: Catalogue
    /// When each import started and finished, as `catalogue stats` shows them.
    let time: TimeSource
    /// Rows written per transaction.
    var batchSize = 5_000
    static let keptReasons = 5

    package init(catalogue: Catalogue, time: TimeSource = .system) { self.catalogue = catalogue; self.time = time }

    /// The order to import files in so that authors get names: OpenLibrary author dumps first.
    package static func importOrder(_ paths: [String]) -> [String] {
        paths.filter { OpenLibraryDump(path: $0) == .authors } + paths.filter { OpenLibraryDump(path: $0) != .authors }
    }

    package func importFile(_ path: String) throws(CatalogueError) -> CatalogueImportReport {
        let lines = try LineReader(path: path)
        var tally = Tally(path: path, format: "csv")
        let dump = OpenLibraryDump(path: path)
        if let dump { tally.format = dump.format }
        let importID = try database { try catalogue.beginImport(path: path, format: tally.format, now: time.now) }
        if let dump {
            try importDump(dump, lines, into: &tally, importID: importID)
        } else {
            try importDelimited(lines, into: &tally, importID: importID)
        }
        try database {
            try catalogue.finishImport(
                importID, imported: tally.imported, duplicates: tally.duplicates, skipped: tally.skipped, now: time.now)
        }
        return tally.report
    }

    // MARK: CSV and tab-separated exports

    private func importDelimited(_ lines: LineReader, into tally: inout Tally, importID: Int64) throws(CatalogueError) {
        guard let (reader, header) = try DelimitedReader.open(lines) else {
            throw CatalogueError(.unknownFormat, "\(lines.path) is empty.")
        }
        let columns = try Columns(header: header, path: lines.path)
        tally.format = columns.flavour
        var batch: [CatalogueRow] = []
        while let fields = try reader.next() {
            if fields.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) { continue }
            switch columns.row(fields) {
            case .success(let row): batch.append(row)
            case .failure(let reason): tally.skip("line \(lines.lineNumber): \(reason.text)")
            }
            if batch.count >= batchSize { try flush(&batch, into: &tally, importID: importID) }
        }
        try flush(&batch, into: &tally, importID: importID)
    }

    /// Where each field is, by header name (case and spacing ignored).
    struct Columns {
        var title: Int
        var author: Int?
        /// ISBN-13 columns before ISBN-10 ones: the first valid one wins.
        var isbns: [Int]
        var years: [Int]
        var tag: Int?
        var series: Int?
        /// StoryGraph lists several authors as "First Last, First Last".
        var authorsAreAList: Bool
        var flavour: String

        init(header: [String], path: String) throws(CatalogueError) {
            let names = header.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            func first(_ candidates: [String]) -> Int? { candidates.lazy.compactMap { names.firstIndex(of: $0) }.first }
            func all(_ candidates: [String]) -> [Int] { candidates.compactMap { names.firstIndex(of: $0) } }
            guard let title = first(["title", "book title"]) else {
                throw CatalogueError(
                    .unknownFormat,
                    """
                    \(path) has no "title" column (its header is: \(header.prefix(8).joined(separator: ", "))). \
                    Give a CSV with at least title and author columns, a Goodreads, StoryGraph or LibraryThing export, \
                    or an OpenLibrary dump (ol_dump_editions_*.txt.gz).
                    """)
            }
            self.title = title
            author = first(["author", "authors", "primary author", "author l-f", "author (last, first)"])
            authorsAreAList = author.map { names[$0] == "authors" } ?? false
            isbns = all(["isbn13", "isbn 13", "isbn", "isbn/uid", "isbns", "isbn10", "ean"])
            years = all([
                "year", "original publication year", "year published", "publication year", "date",
                "publication date", "published",
            ])
            tag = first(["tag", "call number", "callnumber", "call no", "other call number", "signatura"])
            series = first(["series"])
            flavour =
                if names.contains("exclusive shelf") || names.contains("author l-f") {
                    "goodreads"
                } else if names.contains("isbn/uid") { "storygraph" } else if names.contains("primary author") {
                    "librarything"
                } else { "csv" }
        }

        struct Reason: Error { var text: String }

        func row(_ fields: [String]) -> Result<CatalogueRow, Reason> {
            func field(_ index: Int?) -> String? {
                guard let index, index < fields.count else { return nil }
                let value = fields[index].trimmingCharacters(in: .whitespacesAndNewlines)
                return value.isEmpty ? nil : value
            }
            guard let title = field(title) else { return .failure(Reason(text: "no title")) }
            var author = field(author)
            if authorsAreAList, let list = author {
                author = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.joined(
                    separator: "; ")
            }
            let isbn = isbns.lazy.compactMap { field($0).flatMap(Self.isbn(in:)) }.first
            let year = years.lazy.compactMap { field($0).flatMap(Self.year(in:)) }.first
            return .success(
                CatalogueRow(
                    title: title, author: author, isbn: isbn, year: year, tag: field(tag),
                    series: field(series)))
        }

        /// The first valid ISBN in a field: `="0441172717"` (Goodreads), `[0441172717]` (LibraryThing),
        /// several separated by commas, or one followed by a note ("9788497662406 (Eumo)").
        static func isbn(in text: String) -> ISBN? {
            text.split(whereSeparator: {
                !($0.isASCII && ($0.isNumber || $0 == "X" || $0 == "x" || $0 == "-" || $0 == " "))
            })
            .lazy.compactMap { ISBN(String($0)) }.first
        }

        /// A four-digit year in a date ("1965", "2019/03/02", "March 1965").
        static func year(in text: String) -> Int? {
            text.split(whereSeparator: { !$0.isNumber }).lazy.compactMap { part -> Int? in
                guard part.count == 4, let year = Int(part), (1000...2100).contains(year) else { return nil }
                return year
            }.first
        }
    }

    // MARK: OpenLibrary dumps

    enum OpenLibraryDump: Equatable {
        case editions, works, authors

        /// From the dump's file name, as OpenLibrary publishes it (`ol_dump_editions_2024-01-31.txt.gz`).
        init?(path: String) {
            let name = (path as NSString).lastPathComponent.lowercased()
            if name.hasPrefix("ol_dump_editions") {
                self = .editions
            } else if name.hasPrefix("ol_dump_works") {
                self = .works
            } else if name.hasPrefix("ol_dump_authors") {
                self = .authors
            } else {
                return nil
            }
        }

        var format: String {
            switch self {
            case .editions: "openlibrary-editions";
            case .works: "openlibrary-works";
            case .authors: "openlibrary-authors"
            }
        }
        var type: String {
            switch self {
            case .editions: "/type/edition";
            case .works: "/type/work";
            case .authors: "/type/author"
            }
        }
    }

    private func importDump(
        _ dump: OpenLibraryDump, _ lines: LineReader, into tally: inout Tally,
        importID: Int64
    ) throws(CatalogueError) {
        var rows: [CatalogueRow] = [], authors: [(key: String, name: String)] = []
        while let line = try lines.next() {
            if line.isEmpty { continue }
            // type, key, revision, last modified, JSON
            let fields = line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5 else {
                tally.skip("line \(lines.lineNumber): not 5 tab-separated fields"); continue
            }
            guard fields[0] == dump.type else {
                tally.skip("line \(lines.lineNumber): a \(fields[0]), not a \(dump.type)"); continue
            }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(fields[4].utf8))) as? [String: Any] else {
                tally.skip("line \(lines.lineNumber): the record is not a JSON object"); continue
            }
            let key = String(fields[1])
            if dump == .authors {
                guard let name = (object["name"] as? String)?.trimmingCharacters(in: .whitespaces), !name.isEmpty else {
                    tally.skip("line \(lines.lineNumber): an author without a name"); continue
                }
                authors.append((key, name))
                if authors.count >= batchSize { try flushAuthors(&authors, into: &tally) }
                continue
            }
            guard let row = Self.row(dump, key: key, object) else {
                tally.skip("line \(lines.lineNumber): no title"); continue
            }
            rows.append(row)
            if rows.count >= batchSize { try flush(&rows, into: &tally, importID: importID) }
        }
        try flush(&rows, into: &tally, importID: importID)
        try flushAuthors(&authors, into: &tally)
    }

    /// An edition or work as a catalogue row; authors are named from the authors dump imported before.
    static func row(_ dump: OpenLibraryDump, key: String, _ object: [String: Any]) -> CatalogueRow? {
        guard var title = (object["title"] as? String)?.trimmingCharacters(in: .whitespaces), !title.isEmpty else {
            return nil
        }
        if let subtitle = (object["subtitle"] as? String)?.trimmingCharacters(in: .whitespaces), !subtitle.isEmpty {
            title += ": \(subtitle)"
        }
        let authors = object["authors"] as? [[String: Any]] ?? []
        // Editions: [{"key": "/authors/…"}]; works: [{"author": {"key": "/authors/…"}, "type": …}].
        let authorKeys = authors.compactMap {
            ($0["key"] as? String) ?? (($0["author"] as? [String: Any])?["key"] as? String)
        }
        let isbns = (object["isbn_13"] as? [String] ?? []) + (object["isbn_10"] as? [String] ?? [])
        let date = (object["publish_date"] as? String) ?? (object["first_publish_date"] as? String)
        return CatalogueRow(
            title: title, isbn: isbns.lazy.compactMap(ISBN.init).first, year: date.flatMap(Columns.year(in:)),
            series: (object["series"] as? [String])?.first, originKey: key, authorKeys: authorKeys)
    }

    // MARK: Writing

    struct Tally {
        var path: String
        var format: String
        var imported = 0, duplicates = 0, skipped = 0
        var reasons: [String] = []

        mutating func skip(_ reason: String) {
            skipped += 1
            if reasons.count < CatalogueImporter.keptReasons { reasons.append(reason) }
        }

        var report: CatalogueImportReport {
            CatalogueImportReport(
                path: path, format: format, imported: imported, duplicates: duplicates, skipped: skipped,
                skipReasons: reasons)
        }
    }

    private func flush(_ rows: inout [CatalogueRow], into tally: inout Tally, importID: Int64) throws(CatalogueError) {
        guard !rows.isEmpty else { return }
        let batch = rows
        let (added, duplicates) = try database { try catalogue.addRows(batch, importID: importID) }
        tally.imported += added
        tally.duplicates += duplicates
        rows.removeAll(keepingCapacity: true)
    }

    private func flushAuthors(_ authors: inout [(key: String, name: String)], into tally: inout Tally)
        throws(CatalogueError)
    {
        guard !authors.isEmpty else { return }
        let batch = authors
        try database { try catalogue.addAuthors(batch) }
        tally.imported += batch.count
        authors.removeAll(keepingCapacity: true)
    }

    private func database<T>(_ body: () throws -> T) throws(CatalogueError) -> T {
        do { return try body() } catch {
            throw CatalogueError(.database, "The catalogue could not be written: \(error)")
        }
    }
}
