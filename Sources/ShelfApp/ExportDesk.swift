import Foundation
import ShelfConfig
import ShelfCore
import ShelfOutputs
import ShelfStore

/// `shelfd export`: one export of the library (or of the review queue), built the one way every export is
/// (`LibraryFiles.export`, a page of works at a time), written whole to a file or streamed to standard output.
package struct ExportDesk: Sendable {
    let config: Configuration
    /// Nil before the first photo: the export is then empty.
    let store: Store?
    /// The date an export says it was generated at.
    let time: TimeSource

    package init(config: Configuration, store: Store?, time: TimeSource = .system) {
        self.config = config; self.store = store; self.time = time
    }

    package enum Destination: Sendable {
        case standardOutput
        /// Written atomically: a reader sees the old file or the new one.
        case file(URL)
    }

    /// exports/<format>.<csv|tsv|json> under paths.root: where an export goes unless told, and the files kept current.
    package func defaultFile(for format: ExportFormat) -> URL {
        URL(fileURLWithPath: config.paths.exports).appendingPathComponent(format.defaultFileName)
    }

    package func write(
        _ format: ExportFormat, exclusiveShelf: ReadingShelf?, includeUnverified: Bool,
        to destination: Destination
    ) throws -> ExportResult {
        func write(to append: (Data) throws -> Void) throws -> ExportResult {
            try stream(format, exclusiveShelf: exclusiveShelf, includeUnverified: includeUnverified, to: append)
        }
        switch destination {
        case .standardOutput:
            return try write { FileHandle.standardOutput.write($0) }
        case .file(let url):
            var written: ExportResult?
            try AtomicFile.write(to: url) { append in written = try write(to: append) }
            return written!
        }
    }

    /// The export handed on a piece at a time as it is made (the web page's download); by default as
    /// `shelfd export --format` writes it.
    package func stream(
        _ format: ExportFormat, exclusiveShelf: ReadingShelf? = nil, includeUnverified: Bool = false,
        to append: (Data) throws -> Void
    ) throws -> ExportResult {
        try LibraryFiles.export(
            format, from: store?.library, review: URL(fileURLWithPath: config.paths.review),
            exclusiveShelf: exclusiveShelf ?? config.export.exclusiveShelf,
            includeUnverified: includeUnverified, generatedAt: time.now, to: append)
    }
}
