/// What `shelfd hardcover push` did (or, with `--dry-run`, would do), as `--json` prints it.
package struct HardcoverPushDocument: Codable, Sendable, Equatable {
    /// One work, as Hardcover knows it when it does.
    package struct Line: Codable, Sendable, Equatable {
        package var work, title: String
        package var author, isbn13: String?
        /// Hardcover's ids of the book, its edition, and the person's copy.
        package var hardcoverBook, edition, userBook: Int?
        /// The list named after its shelf it is on (`[hardcover] shelves_as_lists`).
        package var list: String?
        enum CodingKeys: String, CodingKey {
            case work, title, author, isbn13, list, hardcoverBook = "hardcover_book", edition, userBook = "user_book"
        }
        package init(work: String, title: String, author: String?, isbn13: String?) {
            self.work = work; self.title = title; self.author = author; self.isbn13 = isbn13
        }
    }
    package var dryRun: Bool
    /// The Hardcover user the token belongs to (nil when nothing needed asking).
    package var user: String?
    /// Added to the person's Hardcover library (with `--dry-run`: would be).
    package var added: [Line] = []
    /// The person had the book already: it was marked owned (and listed) where it was not.
    package var there: [Line] = []
    /// No Hardcover edition has the work's ISBN: listed, not guessed.
    package var unknown: [Line] = []
    /// Verified works with no ISBN, which Hardcover cannot be asked about.
    package var withoutISBN: [Line] = []
    /// Why the push stopped before the end (`status`'s problem code and its sentence); nil when it finished.
    package var stopped: Problem?
    package struct Problem: Codable, Sendable, Equatable {
        package var code: String
        package var message: String
        package init(code: String, message: String) { self.code = code; self.message = message }
    }
    enum CodingKeys: String, CodingKey {
        case dryRun = "dry_run", user, added, there, unknown, withoutISBN = "without_isbn", stopped
    }
    package init(dryRun: Bool) { self.dryRun = dryRun }
}
