/// What a round found changed of a work: stored in `shelf_change`.
package struct ShelfChange: Sendable, Equatable {
    /// `shelf_change.kind`: the raw values are the stored text.
    package enum Kind: String, Sendable, CaseIterable {
        case arrived, missing
        case movedOut = "moved_out"
    }

    package var kind: Kind
    package var bookID: Int64
    /// Where an arrival came from (nil when new to the library), or where a work moved out went.
    package var otherShelf: String?

    package init(_ kind: Kind, _ bookID: Int64, otherShelf: String? = nil) {
        self.kind = kind; self.bookID = bookID; self.otherShelf = otherShelf
    }
}
