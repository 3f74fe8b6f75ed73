import Foundation

/// `<photo name>.truth.json` beside a photo: the books it really shows, left to right, for `shelfd eval`
/// and the samples.
package struct TruthDocument: Codable, Sendable, Equatable {
    package struct Book: Codable, Sendable, Equatable {
        package var title: String
        package var author, isbn13: String?
        /// Normalised to the photo as displayed (after EXIF orientation), origin top-left, like a result's.
        package var box: Box?
    }

    package var schema = "shelfd.truth/1"
    /// The photo's file name, in the same folder.
    package var photo: String
    package var books: [Book]
    /// What makes this photo hard, in words ("stored sideways with EXIF orientation 6", "blurred").
    package var notes: [String]?

    package init(photo: String, books: [Book], notes: [String]? = nil) {
        self.photo = photo; self.books = books; self.notes = notes
    }
}

extension TruthDocument {
    /// One book of a person's own list of a photo's books: `<photo>.truth.json` holding a bare JSON array
    /// `[{"title": "…", "authors": ["…"]}]`, the photo being the image of the same name beside it. No boxes.
    package struct ListedBook: Decodable, Sendable, Equatable {
        package var title: String
        package var authors: [String]?
        package init(title: String, authors: [String]?) { self.title = title; self.authors = authors }
    }

    /// A list of books as a truth document. Several authors go in one field, "; " between them, as a catalogue
    /// import keeps a list of authors: the first is the one scored (`TextNormalization.surname`).
    package init(photo: String, listed: [ListedBook]) {
        self.init(
            photo: photo,
            books: listed.map { book in
                let authors = (book.authors ?? []).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                    !$0.isEmpty
                }
                return Book(title: book.title, author: authors.isEmpty ? nil : authors.joined(separator: "; "))
            })
    }

    /// Whether a truth file holds a list of books (a JSON array) rather than a shelfd.truth/1 document (an object).
    package static func isList(_ json: some Collection<UInt8>) -> Bool {
        json.first {
            ![UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), 0xEF, 0xBB, 0xBF].contains(
                $0)
        }
            == UInt8(ascii: "[")
    }
}
