import ArgumentParser
import Foundation
import ShelfApp
import ShelfCore
import ShelfDaemon

struct Library: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "See a work's whole history; correct the library: edit a work, remove one, merge two.",
        discussion: """
            A work is named by its key, as library.json writes it ("work"). Each change is remembered for the \
            photos that showed the work, so reading them again keeps it; library.json, review/ and the exports \
            are rewritten before the command exits. Works while the daemon runs. 'show' prints a work's whole \
            history, which library.json keeps bounded.
            """,
        subcommands: [LibraryShow.self, LibraryFind.self, LibraryEdit.self, LibraryRemove.self, LibraryMerge.self])
}

struct LibraryShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "A work's whole history: every photo it was seen in and every step.",
        discussion:
            "library.json keeps a work's latest sighting on each shelf and its latest steps; the database keeps them all."
    )
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the work as JSON (library.json's entry, with every sighting and step).") var json =
        false
    @Argument(help: ArgumentHelp("The work's key, as library.json writes it.", valueName: "work")) var work: String

    func run() async throws {
        let (config, secrets, logger) = try global.load(quiet: true)
        guard let store = try StoreAccess.openForReading(config: config, secrets: secrets) else {
            throw LibraryError(.notFound, "The library is empty: shelfd has not catalogued any photo yet.")
        }
        let entry = try LibraryDesk(config: config, store: store, logger: logger).work(work)
        if json { return try printJSON(entry) }
        let day = ISO8601DateFormatter()
        var lines = [
            "\(entry.title)" + (entry.author.map { " — \($0)" } ?? "") + " (\(entry.work))",
            "  \(entry.status.rawValue)" + (entry.isbn13.map { ", ISBN \($0)" } ?? "")
                + ", first seen \(day.string(from: entry.firstSeen)), last seen \(day.string(from: entry.lastSeen))",
            "  \(entry.sightingsCount) sighting\(entry.sightingsCount == 1 ? "" : "s"):",
        ]
        lines += entry.sightings.map {
            "    \(day.string(from: $0.seenAt))  \($0.photo)  (\(String(format: "%.2f", $0.confidence)))"
        }
        lines.append("  history:")
        lines += entry.history.map {
            "    \(day.string(from: $0.at))  \($0.action) by \($0.by)" + ($0.detail.map { ": \($0)" } ?? "")
        }
        print(lines.joined(separator: "\n"))
    }
}

struct LibraryFind: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "find", abstract: "Where is my book: the shelf, its place, and the photo that saw it last.",
        discussion:
            "Searches titles, authors and ISBNs. The place is counted from the left, as the shelf's rounds ordered it.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the books found as JSON.") var json = false
    @Argument(help: ArgumentHelp("Words of the title or the author, or an ISBN.", valueName: "text")) var text: String

    func run() async throws {
        let found = try global.shelves().find(text)
        if json { return try printJSON(found) }
        guard !found.isEmpty else { throw LibraryError(.notFound, "No book in the library matches '\(text)'.") }
        for book in found {
            var line = book.title + (book.author.map { " — \($0)" } ?? "") + ": " + book.placeInWords
            if let name = book.lentTo { line += ", lent to \(name)" }
            if book.missingSince != nil { line += ", missing since the last round" }
            print(line + " (last seen in \(book.photo))")
        }
    }
}

struct LibraryEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Give a work's title, author or ISBN in your own words.",
        discussion: "What you leave out stays. A new ISBN that another work has joins the two, as a new photo would.")
    @OptionGroup var options: LibraryChangeOptions
    @OptionGroup var book: BookWords
    @Argument(help: ArgumentHelp("The work's key, as library.json writes it.", valueName: "work")) var work: String

    func validate() throws { try book.check() }

    func run() async throws {
        try change(options) {
            try $0.edit(work, title: book.trimmedTitle, author: book.trimmedAuthor, isbn: book.checkedISBN)
        }
    }
}

struct LibraryRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Take a work out of the library.",
        discussion: """
            The photos that showed it are remembered as not showing it: reading them again does not bring it back. \
            A new photo of the book, or a photo read again as a different book, does.
            """)
    @OptionGroup var options: LibraryChangeOptions
    @Argument(help: ArgumentHelp("The work's key, as library.json writes it.", valueName: "work")) var work: String

    func run() async throws { try change(options) { try $0.remove(work) } }
}

struct LibraryMerge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge", abstract: "Two entries are one book: the first becomes part of the second.",
        discussion: "The second keeps its key, title and record; the first's photos, editions and history join it.")
    @OptionGroup var options: LibraryChangeOptions
    @Argument(help: ArgumentHelp("The work that goes.", valueName: "from")) var from: String
    @Argument(help: ArgumentHelp("The work that stays.", valueName: "into")) var into: String

    func validate() throws {
        if from == into {
            throw ValidationError("Give two different works: the one that goes, then the one that stays.")
        }
    }

    func run() async throws { try change(options) { try $0.merge(from, into: into) } }
}

/// What the library's changes share: the global options, and `--json` for what was done.
struct LibraryChangeOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print what was done as JSON.") var json = false
}

/// Carries out one change and says what it did; a work that is not there exits 1 with what to give instead.
private func change(_ options: LibraryChangeOptions, _ body: (LibraryDesk) throws -> LibraryChange) throws {
    let (config, _, logger) = try options.global.load(quiet: true)
    do {
        let change = try body(try LibraryDesk(config: config, logger: logger))
        if options.json { return try printJSON(change) }
        print(
            "\(change.detail.prefix(1).uppercased())\(change.detail.dropFirst())"
                + (change.work.map { " (\($0))" } ?? "") + ".")
    } catch let error as LibraryError where error.code == .sameWork {
        throw ValidationError(error.message)
    }
}

/// A book in a person's own words, as `library edit` and `review edit` take it.
struct BookWords: ParsableArguments {
    @Option(name: .long, help: "The title.") var title: String?
    @Option(name: .long, help: "The author; an empty string for none.") var author: String?
    @Option(name: .long, help: "An ISBN-10 or ISBN-13 (its checksum is checked).") var isbn: String?

    /// Checked before anything is opened; `otherwise` names another way when nothing was given.
    func check(otherwise: String = "") throws {
        if title == nil && author == nil && isbn == nil {
            throw ValidationError("Nothing to change: give --title, --author or --isbn\(otherwise).")
        }
        if let title, title.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--title cannot be empty.")
        }
        if let isbn, ISBN(isbn) == nil {
            throw ValidationError(
                "'\(isbn)' is not a valid ISBN: its checksum fails. Check the digits on the book's back.")
        }
    }

    var trimmedTitle: String? { title?.trimmingCharacters(in: .whitespaces) }
    var trimmedAuthor: String? { author?.trimmingCharacters(in: .whitespaces) }
    var checkedISBN: ISBN? { isbn.flatMap(ISBN.init) }
}
