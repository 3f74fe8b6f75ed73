import ShelfCore
import ShelfEnrichment
import ShelfImaging

/// A photo's ISBN barcodes as books, one per book with what the provider read (`[pipeline] barcodes`).
package enum BarcodeBooks {
    /// What a barcode's book says it came from.
    package static let source = "barcode"
    /// The reader a photo read by its barcodes alone names as its model.
    package static let reader = "zbar"

    /// `read` (the provider's checked books) with each barcode's book in place of the reading of the same book: the
    /// one with the barcode's ISBN, or the one whose box holds the symbol (a book lying on its front shows its title
    /// and its barcode on one back). A barcode no reading accounts for is a book of its own.
    package static func merged(_ barcodes: [ISBNBarcode], into read: [Book]) -> [Book] {
        var books = read
        var found: [Book] = []
        for barcode in barcodes {
            let same =
                books.firstIndex { $0.checkedISBN == barcode.isbn }
                ?? books.firstIndex { $0.box.map { holds($0, barcode.box) } ?? false }
            found.append(book(barcode, reading: same.map { books[$0] }))
            if let same { books.remove(at: same) }
        }
        return found + books
    }

    /// `read` with each reading that is an ISBN and nothing else (the digits printed under a barcode, read as text:
    /// `ISBN.printed()`) as an exact book, as a barcode's: a check digit that passes is no guess. It is verified when
    /// a source knows the ISBN, and kept with `isbn_unresolved` otherwise.
    package static func printed(_ read: [Book]) -> [Book] {
        read.map { reading in
            guard reading.form == .spineText, let isbn = ISBN.printed(reading.title) else { return reading }
            var book = Book(
                title: "ISBN \(isbn.isbn13)", author: nil, isbn13: isbn.isbn13, isbn10: isbn.isbn10, confidence: 1,
                box: reading.box, status: .needsReview, source: reading.source, notes: reading.notes)
            book.form = .barcode
            book.textRun = reading.textRun
            book.reviewReasons = [Enricher.Reason.isbnUnresolved]
            return book
        }
    }

    /// The book of a barcode: its ISBN exact, its box the symbol's, for review until a source names the ISBN
    /// (`Enricher.Reason.isbnUnresolved`). Meanwhile the reading of the same book, if any, gives it a title and an
    /// author; otherwise it is titled by its ISBN.
    static func book(_ barcode: ISBNBarcode, reading: Book?) -> Book {
        var book = Book(
            title: reading?.title ?? "ISBN \(barcode.isbn.isbn13)", author: reading?.author,
            isbn13: barcode.isbn.isbn13, isbn10: barcode.isbn.isbn10, confidence: 1, box: barcode.box,
            status: .needsReview, source: source, notes: reading?.notes)
        book.form = .barcode
        book.textRun = reading?.textRun
        book.reviewReasons = [Enricher.Reason.isbnUnresolved]
        return book
    }

    /// Whether `outer` holds the middle of `inner`.
    static func holds(_ outer: Box, _ inner: Box) -> Bool {
        let x = (inner.x1 + inner.x2) / 2, y = (inner.y1 + inner.y2) / 2
        return (outer.x1...outer.x2).contains(x) && (outer.y1...outer.y2).contains(y)
    }
}
