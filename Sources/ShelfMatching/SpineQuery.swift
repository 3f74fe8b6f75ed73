import ShelfCore

/// What a spine showed, as a matcher is asked about it: a model's structured reading (title and author)
/// or free text in any word order (OCR, `shelfd catalogue match`).
package struct SpineQuery: Sendable, Hashable {
    package var title: String?
    package var author: String?
    /// Everything read on the spine, in any order; for a structured reading, title and author joined.
    package var text: String
    /// An ISBN that passed its checksum, as a hint only.
    package var isbn: ISBN?

    package init(title: String?, author: String?, isbn: ISBN? = nil) {
        self.title = title; self.author = author; self.isbn = isbn
        text = [title, author].compactMap { $0 }.joined(separator: " ")
    }

    package init(text: String) {
        title = nil; author = nil; isbn = nil; self.text = text
    }
}
