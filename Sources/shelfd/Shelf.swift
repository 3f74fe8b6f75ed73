import ArgumentParser
import Foundation
import ShelfApp
import ShelfCore
import ShelfDaemon

struct Shelf: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Each shelf's books in order, and what changed since its last photos: arrived, missing, moved out, lent.",
        discussion: """
            A shelf is the sub-folder of incoming/ its photos arrive in (den, den/top). Photos of one shelf that arrive \
            within [shelves] round_minutes of each other are one round; once quiet that long, or at 'shelf close', the \
            round is compared with the shelf's books before it. A book not seen is missing only where the photos showed \
            its place; answer for it with 'shelf answer'. Works while the daemon runs.
            """,
        subcommands: [ShelfList.self, ShelfShow.self, ShelfClose.self, ShelfAnswerCommand.self])
}

/// The shelf a command is about.
struct ShelfName: ParsableArguments {
    @Argument(help: ArgumentHelp("The shelf: a sub-folder of incoming/, e.g. den/top.", valueName: "name")) var name:
        String
}

extension GlobalOptions {
    /// The shelves of the configured library.
    func shelves() throws -> ShelfDesk {
        let (config, _, logger) = try load(quiet: true)
        return try ShelfDesk(config: config, logger: logger)
    }
}

struct ShelfList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Each shelf: its books, its last round, what is open.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the shelves as JSON.") var json = false

    func run() async throws {
        let shelves = try global.shelves().list()
        if json { return try printJSON(shelves) }
        guard !shelves.isEmpty else {
            return print("No shelf yet: photos in a sub-folder of incoming/ (incoming/den/…) make one.")
        }
        let width = shelves.map(\.shelf.count).max() ?? 0
        for shelf in shelves {
            var parts = [shelf.books.map { "\($0) book\($0 == 1 ? "" : "s")" } ?? "no round closed yet"]
            if let last = shelf.lastRound {
                parts.append("last round \(Self.time(last.closedAt ?? last.lastPhotoAt)) (\(Self.photos(last.photos)))")
            }
            if let open = shelf.openRound {
                parts.append("round open since \(Self.time(open.openedAt)) (\(Self.photos(open.photos)))")
            }
            if shelf.missing > 0 { parts.append("\(shelf.missing) missing") }
            if shelf.lent > 0 { parts.append("\(shelf.lent) lent") }
            print(shelf.shelf.padding(toLength: width + 2, withPad: " ", startingAt: 0) + parts.joined(separator: ", "))
        }
    }

    static func photos(_ n: Int) -> String { "\(n) photo\(n == 1 ? "" : "s")" }
    static func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }
}

struct ShelfShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "A shelf's books left to right, and what its last round changed.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the shelf as JSON (its books, rounds and \"changes\").") var json = false
    @OptionGroup var shelfName: ShelfName

    func run() async throws {
        let shelf = try global.shelves().show(shelfName.name)
        if json { return try printJSON(shelf) }
        var lines = ["\(shelf.shelf): \(shelf.books.count) book\(shelf.books.count == 1 ? "" : "s"), left to right"]
        let day = { (date: Date) in String(ShelfList.time(date).prefix(10)) }
        for book in shelf.books {
            var line = String(format: "%4d  ", book.position) + book.title + (book.author.map { " — \($0)" } ?? "")
            if let since = book.missingSince { line += "   MISSING since \(day(since))" }
            if let name = book.lentTo {
                line += "   lent to \(name)" + (book.lentSince.map { " since \(day($0))" } ?? "")
            }
            lines.append(line + "   (\(book.work), last seen \(day(book.lastSeen)))")
        }
        if let open = shelf.openRound {
            lines.append(
                "Round open since \(ShelfList.time(open.openedAt)): \(ShelfList.photos(open.photos)); it closes "
                    + "once quiet for [shelves] round_minutes, or with 'shelfd shelf close \(shelf.shelf)'.")
        }
        if let last = shelf.lastRound {
            lines.append(
                "Last round \(ShelfList.time(last.openedAt))–\(ShelfList.time(last.closedAt ?? last.lastPhotoAt)), "
                    + ShelfList.photos(last.photos)
                    + (last.unread > 0 ? ", \(last.unread) unreadable (nothing called missing)" : "") + ":")
            lines += Self.describe(shelf.changes).map { "  " + $0 }
        }
        print(lines.joined(separator: "\n"))
    }

    static func describe(_ changes: ShelfDocument.Changes) -> [String] {
        guard !changes.isEmpty else { return ["no change"] }
        func name(_ change: ShelfDocument.Change) -> String { change.title + (change.author.map { " — \($0)" } ?? "") }
        return changes.arrived.map { "arrived:   \(name($0)) (\($0.from.map { "from \($0)" } ?? "new"))" }
            + changes.missing.map { "missing:   \(name($0)) (\($0.work))" }
            + changes.movedOut.map { "moved out: \(name($0)) (to \($0.to ?? "?"))" }
    }
}

struct ShelfClose: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "close", abstract: "End a shelf's round now and compare it with the shelf's books.",
        discussion: "Photos that arrive afterwards start a new round. Photos of the round still queued are read first.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the round's changes as JSON.") var json = false
    @OptionGroup var shelfName: ShelfName

    func run() async throws {
        let name = shelfName.name
        switch try global.shelves().close(name) {
        case .closed(let changes):
            if json { return try printJSON(changes) }
            print(
                (["Closed the round of \(name):"] + ShelfShow.describe(changes).map { "  " + $0 }).joined(
                    separator: "\n"))
        case .waiting(let photos):
            if json { return try printJSON(["waiting_for_photos": photos] as [String: Int]) }
            print(
                "The round of \(name) ends now; it is compared once its \(ShelfList.photos(photos)) still queued are read."
            )
        case .nothingOpen:
            throw ValidationError("'\(name)' has no open round: its photos were compared already, or none arrived.")
        }
    }
}

struct ShelfAnswerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "answer", abstract: "Say what became of a book: lent to someone, gone for good, or still there.",
        discussion: """
            Each answer is a step of the work's history. A lent book is listed as lent until a photo sees it again on \
            any shelf, which ends the loan by itself. A gone book leaves the shelf; the work stays in the library.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(name: .customLong("lent-to"), help: "Lent to this person.") var lentTo: String?
    @Flag(name: .long, help: "Gone for good: it leaves the shelf's books.") var gone = false
    @Flag(name: .long, help: "Still there: the round misjudged its place.") var here = false
    @Argument(help: ArgumentHelp("The work's key, as library.json and 'shelf show' write it.", valueName: "work"))
    var work: String

    func validate() throws {
        let given = [lentTo != nil, gone, here].filter { $0 }.count
        if given != 1 { throw ValidationError("Give one answer: --lent-to NAME, --gone or --here.") }
        if let lentTo, lentTo.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--lent-to needs a name.")
        }
    }

    func run() async throws {
        let answer: ShelfAnswer =
            if let lentTo { .lent(to: lentTo.trimmingCharacters(in: .whitespaces)) } else if gone { .gone } else {
                .here
            }
        let shelf = try global.shelves().answer(work: work, answer)
        switch answer {
        case .lent(let name): print("Lent to \(name), from \(shelf) (\(work)).")
        case .gone: print("Gone from \(shelf) (\(work)); the work stays in the library.")
        case .here: print("Still on \(shelf) (\(work)).")
        }
    }
}
