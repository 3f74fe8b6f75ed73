/// `<photo name>.truth.json` beside a photo: the books it really shows, left to right, for `shelfd eval`
/// and the samples.
package struct TruthDocument: Codable, Sendable, Equatable {
    package struct Book: Codable, Sendable, Equatable {
        package var title: String
        package var author: String?
        package var isbn13: String?
        /// Normalised to the photo as displayed (after EXIF orientation), origin top-left, like a result's.
        package var box: Box?
        package init(title: String, author: String?, isbn13: String? = nil, box: Box? = nil) {
            self.title = title; self.author = author; self.isbn13 = isbn13; self.box = box
        }
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
