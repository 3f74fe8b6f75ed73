import ArgumentParser
import Foundation
import ShelfApp
import ShelfCore

struct CatalogueMatch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "match",
        abstract: "Match spine texts against the local catalogue, as the pipeline does, and say how sure it is.",
        discussion: """
            Each argument (or each line of standard input, with -) is one spine's text in any word order, as \
            OCR or a model read it. One line out per spine, in input order: the decision (accepted, review or \
            none), the score and the best record, then the runners-up; with --json one object per line.
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "One JSON object per spine: text, match, score, decision, candidates.") var json = false
    @Argument(help: ArgumentHelp("Spine texts, or - to read one per line from standard input.", valueName: "text"))
    var texts: [String] = []

    func validate() throws {
        if texts.isEmpty {
            throw ValidationError(
                "Give spine texts, e.g. 'shelfd catalogue match \"DUNE HERBERT\"', or - to read them from standard input."
            )
        }
        if texts.count > 1 && texts.contains("-") { throw ValidationError("Give spine texts or -, not both.") }
    }

    func run() throws {
        let (config, _, _) = try global.load(quiet: true)
        guard let catalogue = try Catalogue.desk(config, create: false), try catalogue.stats().entries > 0 else {
            FileHandle.standardError.write(
                Data(
                    "shelfd: the local catalogue is empty: import your books first with 'shelfd catalogue import FILE' (a CSV export or an OpenLibrary dump).\n"
                        .utf8))
            throw ExitCode(1)
        }
        let matching = try catalogue.matching()
        let encoder = JSONStyle.encoder(pretty: false)
        func answer(_ text: String) throws {
            let line = try matching.match(text)
            print(json ? String(decoding: try encoder.encode(line), as: UTF8.self) : Self.line(line))
        }
        if texts == ["-"] {
            while let line = readLine(strippingNewline: true) { try answer(line) }
        } else {
            for text in texts { try answer(text) }
        }
    }

    static func line(_ match: SpineMatchLine) -> String {
        let (text, decision) = (match.text, match.decision.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))
        guard let best = match.match else { return "\(decision)       \(quoted(text)): no plausible match" }
        var line = "\(decision) \(String(format: "%.2f", match.score))  \(quoted(text)) → \(describe(best))"
        let others = match.candidates.dropFirst().map { "\(describe($0)) \(String(format: "%.2f", $0.score ?? 0))" }
        if !others.isEmpty { line += "; then " + others.joined(separator: "; ") }
        return line
    }

    private static func quoted(_ text: String) -> String { "\"\(text)\"" }

    private static func describe(_ record: SpineMatchLine.Record) -> String {
        var text = record.title
        if let author = record.author { text += " — \(author)" }
        if let isbn = record.isbn { text += " (\(isbn))" }
        return text + " [\(record.key)]"
    }
}
