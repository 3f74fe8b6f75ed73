import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Process these photos (or every photo under these folders) now and print the books found.",
        discussion: "They are queued like any other photo; a photo already catalogued is not sent again.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var reading: ReadingOptions
    @Argument(help: ArgumentHelp("Photo files or folders.", valueName: "path")) var paths: [String]

    func validate() throws {
        if paths.isEmpty {
            throw ValidationError("Give at least one photo or folder, e.g. 'shelfd scan ~/Pictures/shelf.jpg'.")
        }
    }

    func run() async throws {
        let (runtime, logger) = try reading.start(global)
        announce(runtime.chosen, config: runtime.config)
        let (report, photos) = try await OneShot(runtime: runtime, logger: logger).scan(paths: paths)
        try PhotoReport.print(photos, results: PhotoResults(store: runtime.store), report: report, json: reading.json)
    }
}

/// What `scan` and `rescan` print: each photo's books (or why it has none), then the pass's warning.
enum PhotoReport {
    static func print(
        _ photos: [(path: String, sha256: String?)], results: PhotoResults, report: OneShot.Report, json: Bool
    ) throws {
        var documents: [ResultDocument] = []
        var failed = false
        for (path, sha) in photos {
            let outcome = try sha.map(results.outcome) ?? .unknown
            guard case .read(let document) = outcome else {
                failed = true
                let reason =
                    if case .unread(let reason) = outcome { reason } else { "could not be read (see 'shelfd status')" }
                FileHandle.standardError.write(Data("shelfd: \(path): \(reason)\n".utf8))
                continue
            }
            documents.append(document)
            if !json { Swift.print(Self.table(path: path, document: document)) }
        }
        if json { try printJSON(documents) }
        if let warning = report.warning { FileHandle.standardError.write(Data("shelfd: \(warning)\n".utf8)) }
        if failed { throw ExitCode(3) }
    }

    static func table(path: String, document: ResultDocument) -> String {
        var lines = [
            "\(path): \(document.books.count) book\(document.books.count == 1 ? "" : "s") (\(document.provider), \(document.model))"
        ]
        for book in document.books {
            let confidence = String(format: "%.2f", book.confidence)
            let review = book.status != .needsReview ? "" : book.reviewID.map { "  [review \($0)]" } ?? "  [reviewed]"
            lines.append(
                "  \(book.title)\(book.author.map { " — \($0)" } ?? "")\(book.isbn13.map { "  ISBN \($0)" } ?? "")  \(confidence)\(review)"
            )
        }
        for suggestion in document.suggestions {
            lines.append("  tip (\(suggestion.type.rawValue)): \(suggestion.message)")
        }
        return lines.joined(separator: "\n")
    }
}
