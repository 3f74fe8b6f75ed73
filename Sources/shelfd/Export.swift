import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

extension ExportFormat: ExpressibleByArgument {}
extension ReadingShelf: ExpressibleByArgument {}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the library in a format another app imports, or the review queue as CSV.",
        discussion: """
            goodreads, storygraph and libib are CSV, librarything is tab-separated, json is library.json's document, \
            review lists the books waiting for 'shelfd review'. Only verified books go to the apps unless \
            --include-unverified is given; libib takes books with an ISBN only and the rest are listed on stderr.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The format to write.", valueName: "format"))
    var format: ExportFormat
    @Option(
        help: ArgumentHelp(
            "The file to write, or - for standard output (default: exports/<format>.<csv|tsv|json> under paths.root).",
            valueName: "file"))
    var output: String?
    @Option(
        help: ArgumentHelp(
            "Goodreads' Exclusive Shelf and StoryGraph's Read Status for every book (default: export.exclusive_shelf).",
            valueName: "shelf"))
    var exclusiveShelf: ReadingShelf?
    @Flag(help: "Also export the books still waiting for review.") var includeUnverified = false

    func run() async throws {
        let (config, secrets, _) = try global.load(quiet: true)
        let desk = ExportDesk(config: config, store: try StoreAccess.openForReading(config: config, secrets: secrets))
        let file = output == "-" ? nil : output.map { URL(fileURLWithPath: $0) } ?? desk.defaultFile(for: format)
        let result = try desk.write(
            format, exclusiveShelf: exclusiveShelf, includeUnverified: includeUnverified,
            to: file.map { .file($0) } ?? .standardOutput)
        let destination = file?.path ?? "standard output"

        let noun = format == .review ? "review item" : "book"
        Self.say("wrote \(result.count) \(noun)\(result.count == 1 ? "" : "s") to \(destination)")
        if !result.unverified.isEmpty {
            let n = result.unverified.count
            Self.say(
                "\(n) book\(n == 1 ? "" : "s") still waiting for review \(n == 1 ? "was" : "were") left out; "
                    + "decide on them with 'shelfd review', or add --include-unverified")
        }
        if !result.withoutISBN.isEmpty {
            let n = result.withoutISBN.count
            var lines = [
                "\(n) book\(n == 1 ? "" : "s") without an ISBN \(n == 1 ? "was" : "were") left out (Libib imports by ISBN only):"
            ]
            lines += result.withoutISBN.map { "  \($0.title)" + ($0.author.map { " — \($0)" } ?? "") }
            FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
    }

    private static func say(_ line: String) {
        FileHandle.standardError.write(Data("shelfd: \(line)\n".utf8))
    }
}
