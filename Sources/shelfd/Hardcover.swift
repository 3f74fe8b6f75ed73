import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Hardcover: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Hardcover (hardcover.app): add the works shelfd verified to your library there, as owned.",
        discussion:
            "Needs the secret HARDCOVER_TOKEN (hardcover.app → Settings → API). 'watch' does the same in the background unless [hardcover] push = \"command\".",
        subcommands: [HardcoverPush.self])
}

struct HardcoverPush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract:
            "Add every verified work not yet on Hardcover, found by its ISBN; list those Hardcover does not know.",
        discussion: """
            Each work's edition (the ISBN seen in most photos) is added with the reading status of \
            [export] exclusive_shelf unless you have the book there already, and marked owned; with \
            [hardcover] shelves_as_lists it also goes on a list named after its shelf. What was added is remembered, so \
            running it again adds nothing twice; nothing is ever removed from Hardcover. Exits 1 when Hardcover \
            stopped it (a refused token, a rate limit, an outage).
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Ask Hardcover what is there and say what would be added, without adding anything.") var dryRun = false
    @Flag(name: .long, help: "Print what was done as JSON.") var json = false

    func run() async throws {
        let (config, secrets, _) = try global.load(quiet: true)
        guard
            let desk = HardcoverDesk(
                config: config, secrets: secrets, store: try StoreAccess.open(config: config, secrets: secrets))
        else {
            throw ValidationError(
                "No Hardcover token: make one at hardcover.app (Settings → API) and set it as HARDCOVER_TOKEN or the credential hardcover_token."
            )
        }
        let report = try await desk.pushAll(dryRun: dryRun)
        if json { try printJSON(report) } else { print(Self.text(report), terminator: "") }
        if report.stopped != nil { throw ExitCode(1) }
    }

    static func text(_ report: HardcoverPushDocument) -> String {
        func line(_ work: HardcoverPushDocument.Line) -> String {
            "  \(work.title)" + (work.author.map { " — \($0)" } ?? "") + (work.isbn13.map { " (ISBN \($0))" } ?? "")
                + (work.list.map { ", list «\($0)»" } ?? "")
        }
        func section(_ heading: String, _ works: [HardcoverPushDocument.Line]) -> [String] {
            works.isEmpty ? [] : ["\(heading) (\(works.count)):"] + works.map(line)
        }
        var lines: [String] = report.user.map { ["Hardcover user: \($0)"] } ?? []
        lines += section(report.dryRun ? "would add" : "added", report.added)
        lines += section(
            report.dryRun
                ? "already in your Hardcover library (marked owned where it is not)"
                : "already in your Hardcover library, now owned", report.there)
        lines += section("not on Hardcover (no edition with this ISBN)", report.unknown)
        lines += section("without an ISBN (add them on Hardcover by hand)", report.withoutISBN)
        if report.added.isEmpty && report.there.isEmpty && report.unknown.isEmpty && report.withoutISBN.isEmpty
            && report.stopped == nil
        {
            lines.append("nothing to add: every verified work with an ISBN is on Hardcover")
        }
        if let stopped = report.stopped { lines.append("stopped: \(stopped.message)") }
        return lines.map { $0 + "\n" }.joined()
    }
}
