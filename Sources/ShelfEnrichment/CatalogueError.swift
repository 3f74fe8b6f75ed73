/// Why a catalogue file could not be imported, or the catalogue not read.
package struct CatalogueError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case unreadableFile = "unreadable_file", unknownFormat = "unknown_format", database
    }
    package var code: Code
    /// For a person: what happened and what to do.
    package var message: String
    package init(_ code: Code, _ message: String) { self.code = code; self.message = message }
    package var description: String { message }
}
