import Foundation

/// A library edit that cannot be carried out, with what to do instead.
package struct LibraryError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case notFound = "not_found", sameWork = "same_work", nothingToChange = "nothing_to_change"
    }
    package var code: Code
    package var message: String
    package var description: String { message }
    package init(_ code: Code, _ message: String) { self.code = code; self.message = message }

    package static func noSuchWork(_ key: String) -> LibraryError {
        LibraryError(
            .notFound, "No work '\(key)' in the library: give a work's key as library.json writes it (\"work\").")
    }
}

/// What an edit, a removal or a merge did, for the command and the page to report.
package struct LibraryChange: Sendable, Equatable, Codable {
    /// `edited`, `removed` or `merged`.
    package var action: String
    /// The work's key as it is now (an unmatched work is known by its title, so a new title is a new key);
    /// nil once removed.
    package var work: String?
    package var detail: String
    /// What the edit changed of the files for people (not part of the command's and the API's answer).
    package var files = FilesChange()

    package init(action: String, work: String?, detail: String, files: FilesChange = FilesChange()) {
        self.action = action; self.work = work; self.detail = detail; self.files = files
    }

    enum CodingKeys: String, CodingKey { case action, work, detail }
}
