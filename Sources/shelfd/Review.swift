import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Review: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decide about the books shelfd was not sure of.",
        discussion: """
            With no verb, on a terminal: one book at a time, with its crop and candidates (a accept, 1-9 pick a \
            candidate, e edit, r reject, s skip, q quit). Not on a terminal: the list. A decision updates library.json, \
            clears review/<id>.json and its crop, and is applied again when the same photo is read again.
            """,
        subcommands: [ReviewList.self, ReviewShow.self, ReviewAccept.self, ReviewEdit.self, ReviewReject.self])

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            return print(ReviewText.list(try global.reviewDesk(writing: false).items()))
        }
        try ReviewWalk(desk: try global.reviewDesk(writing: true)).run()
    }
}

struct ReviewList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The books waiting for a decision, oldest first.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the review documents (schema shelfd.review/1) as a JSON array.") var json = false

    func run() async throws {
        let desk = try global.reviewDesk(writing: false)
        let items = try desk.items()
        if json { try printJSON(items.map(desk.document)) } else { print(ReviewText.list(items)) }
    }
}

struct ReviewShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "One book: what was read, why it is asked, its candidates.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the review document (schema shelfd.review/1) as JSON.") var json = false
    @Argument(
        help: ArgumentHelp(
            "The review id, as 'shelfd review list' shows it (its first characters are enough).", valueName: "id"))
    var id: String

    func run() async throws {
        let desk = try global.reviewDesk(writing: false)
        let item = try desk.item(id)
        if json { try printJSON(desk.document(item)) } else { print(ReviewText.details(item, desk: desk)) }
    }
}

struct ReviewAccept: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accept", abstract: "The book is right: as read, or as one of its candidates.",
        discussion: """
            Without --candidate the reading is kept as it is (with its match, when it had one): the candidates are the \
            matcher's guesses, and taking one is a choice to make by number. With --photo SHA --candidate 1, each open \
            item of that photo that has candidates takes its first: the items are listed, then decided.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var photo: PhotoDecisionOptions
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Take candidate N instead (1 is the best, as 'shelfd review show' numbers them).", valueName: "n"))
    var candidate: Int?
    @Argument(help: ArgumentHelp("The review id.", valueName: "id")) var id: String?

    func validate() throws {
        try photo.validate(id: id)
        if let candidate, candidate < 1 {
            throw ValidationError("--candidate counts from 1 (see 'shelfd review show \(id ?? "<id>")').")
        }
        if photo.photo != nil && candidate != 1 {
            throw ValidationError("With --photo, accept takes each item's first candidate: add --candidate 1.")
        }
    }

    func run() async throws {
        if let id {
            try decide(global, id, candidate.map(ReviewVerdict.pick) ?? .accept)
        } else if let sha = photo.photo {
            try decideMany(global, .firstCandidates, photo: sha, dryRun: photo.dryRun)
        }
    }
}

struct ReviewEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "The book is this one: give its title, author or ISBN in your own words.",
        discussion: """
            What you leave out stays as read. The book is then no longer matched to a catalogue record, and an ISBN \
            that came with that record goes too when your title or author names another book.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var book: BookWords
    @Argument(help: ArgumentHelp("The review id.", valueName: "id")) var id: String

    func validate() throws {
        try book.check(otherwise: " (or use 'shelfd review accept \(id)')")
    }

    func run() async throws {
        try decide(
            global, id,
            .edit(title: book.trimmedTitle, author: book.trimmedAuthor, isbn: book.checkedISBN))
    }
}

struct ReviewReject: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reject",
        abstract: "Not a book, or not this one: out of the library, and kept out when the photo is read again.",
        discussion: """
            With --photo SHA, every open item of that photo at once; with --no-candidate as well, only the items with \
            no candidate and a confidence below --below (0.5 unless given): the scraps a glance at the photo dismisses. \
            The items are listed, then each is rejected as if one at a time.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var photo: PhotoDecisionOptions
    @Flag(name: .long, help: "With --photo: only the items with no candidate and a confidence below --below.")
    var noCandidate = false
    @Option(
        name: .long,
        help: ArgumentHelp("With --no-candidate: the confidence an item must be under (default 0.5).", valueName: "c"))
    var below: Double?
    @Argument(help: ArgumentHelp("The review id.", valueName: "id")) var id: String?

    func validate() throws {
        try photo.validate(id: id)
        if noCandidate && photo.photo == nil { throw ValidationError("--no-candidate goes with --photo SHA.") }
        if let below {
            guard noCandidate else { throw ValidationError("--below goes with --no-candidate.") }
            guard (0...1).contains(below) else { throw ValidationError("--below is a confidence, from 0 to 1.") }
        }
    }

    func run() async throws {
        if let id {
            try decide(global, id, .reject)
        } else if let sha = photo.photo {
            try decideMany(
                global, .notBooks(unmatchedBelow: noCandidate ? below ?? ReviewDesk.Bulk.scrapThreshold : nil),
                photo: sha, dryRun: photo.dryRun)
        }
    }
}

/// One photo's items decided at once: `--photo` instead of a review id.
struct PhotoDecisionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Decide the open items of this photo at once: its sha256, or at least its first 6 characters.",
            valueName: "sha256"))
    var photo: String?
    @Flag(name: .long, help: "With --photo: list the items and what each would become, and decide nothing.")
    var dryRun = false

    func validate(id: String?) throws {
        switch (id, photo) {
        case (nil, nil): throw ValidationError("Give a review id, or --photo SHA for that photo's items at once.")
        case (.some, .some): throw ValidationError("Give a review id or --photo, not both.")
        default: if dryRun && photo == nil { throw ValidationError("--dry-run goes with --photo.") }
        }
    }
}

extension GlobalOptions {
    /// The review queue of the configured library; `writing` when a decision will be made.
    func reviewDesk(writing: Bool) throws -> ReviewDesk {
        let (config, _, logger) = try load(quiet: true)
        return try ReviewDesk(config: config, writing: writing, logger: logger)
    }
}

/// Carries out one decision and says what it did; a candidate that does not exist is a usage error (exit 2).
private func decide(_ global: GlobalOptions, _ id: String, _ verdict: ReviewVerdict) throws {
    let desk = try global.reviewDesk(writing: true)
    do {
        print(ReviewText.resolution(try desk.decide(id, verdict)))
    } catch let error as ReviewError where error.code == .noSuchCandidate {
        throw ValidationError(error.message)
    }
}

/// Lists what a decision for many items will do, then (unless `dryRun`) carries it out and says what it did.
private func decideMany(_ global: GlobalOptions, _ bulk: ReviewDesk.Bulk, photo: String, dryRun: Bool) throws {
    let desk = try global.reviewDesk(writing: !dryRun)
    let plan = try desk.plan(bulk, photo: photo)
    print(ReviewText.plan(plan, bulk, dryRun: dryRun))
    guard !dryRun else { return }
    for resolution in try desk.apply(plan) { print(ReviewText.resolution(resolution)) }
}

/// How review items and decisions read on a terminal.
enum ReviewText {
    static func list(_ items: [ReviewItem]) -> String {
        guard !items.isEmpty else { return "Nothing to review." }
        return items.map { item in
            let count = item.candidates.count
            let candidates = count == 0 ? "" : ", \(count) candidate\(count == 1 ? "" : "s")"
            return
                "\(item.id)  \(String(format: "%.2f", item.book.confidence))  \(book(item.book))  [\(item.photo.path)]  "
                + item.reasons.joined(separator: ", ") + candidates
        }.joined(separator: "\n")
    }

    static func details(_ item: ReviewItem, desk: ReviewDesk) -> String {
        var lines = ["\(item.id)  \(book(item.book))"]
        if let isbn = item.book.isbn13 { lines.append("  ISBN:        \(isbn)") }
        lines.append("  confidence:  \(String(format: "%.2f", item.book.confidence)) (\(item.book.source))")
        lines.append("  why:         \(item.reasons.joined(separator: ", "))")
        if let text = item.book.spineText { lines.append("  read:        «\(text)»") }
        lines.append("  photo:       \(item.photo.path)\(desk.photoPath(item).map { "  (\($0))" } ?? "  (gone)")")
        lines.append("  photo hash:  \(item.photo.sha256.prefix(12))")
        lines.append("  crop:        \(desk.cropPath(item) ?? "none (the photo could not be read)")")
        if item.candidates.isEmpty {
            lines.append("  candidates:  none")
        } else {
            lines.append("  candidates:")
            for (n, candidate) in item.candidates.enumerated() {
                let record = candidate.record
                var line = "    \(n + 1). \(book(title: record.title, author: record.author))"
                if let year = record.year { line += " (\(year))" }
                if let isbn = record.isbn13 { line += "  ISBN \(isbn)" }
                line += "  score \(String(format: "%.2f", candidate.score))  \(record.source) \(record.key)"
                if let label = candidate.libraryLabel { line += "  (\(label))" }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// "Rejecting 3 items of shelf.jpg (no candidate, confidence below 0.50):" and a line per item.
    static func plan(_ plan: [ReviewDesk.Planned], _ bulk: ReviewDesk.Bulk, dryRun: Bool) -> String {
        let (verb, doing, which) =
            switch bulk {
            case .notBooks(let below?):
                ("reject", "Rejecting", " (no candidate, confidence below \(String(format: "%.2f", below)))")
            case .notBooks(nil): ("reject", "Rejecting", "")
            case .firstCandidates: ("accept", "Accepting", " as their first candidate")
            }
        guard let photo = plan.first?.item.photo.path else {
            return "Nothing to \(verb): no open item of that photo fits."
        }
        let count = "\(plan.count) item\(plan.count == 1 ? "" : "s")"
        var lines = ["\(dryRun ? "Would \(verb)" : doing) \(count) of \(photo)\(which):"]
        for (item, verdict) in plan {
            var line = "  \(item.id)  \(String(format: "%.2f", item.book.confidence))  \(book(item.book))"
            if verdict == .pick(1), let record = item.candidates.first?.record {
                line += "  →  \(book(title: record.title, author: record.author))"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func resolution(_ resolution: ReviewResolution) -> String {
        guard let book = resolution.book else { return "Rejected \(resolution.id): it is out of the library." }
        return
            "\(resolution.detail.prefix(1).uppercased())\(resolution.detail.dropFirst()) (\(resolution.id)): \(Self.book(book))."
    }

    static func book(_ book: Book) -> String { self.book(title: book.title, author: book.author) }

    static func book(title: String, author: String?) -> String { "\(title) — \(author ?? "unknown author")" }
}
