import Foundation

/// A book a person is asked about: one photo's reading of it, as committed.
package struct ReviewItem: Sendable, Equatable {
    package var id: String
    package var photo: ReviewDocument.Photo
    /// The book as read and checked: box, candidates (best first), `review_reasons`, `review_id`.
    package var book: Book
    package var createdAt: Date

    package init(id: String, photo: ReviewDocument.Photo, book: Book, createdAt: Date) {
        self.id = id; self.photo = photo; self.book = book; self.createdAt = createdAt
    }

    package var candidates: [MatchCandidate] { book.candidates ?? [] }
    package var reasons: [String] { book.reviewReasons ?? [] }

    /// As written to review/<id>.json; `crop` names the spine's crop beside it, when one was cut.
    package func document(crop: String?) -> ReviewDocument {
        ReviewDocument(
            id: id, photo: photo, book: book, candidates: candidates, reasons: reasons, crop: crop,
            createdAt: createdAt)
    }
}

/// What a person decided about a review item.
package enum ReviewVerdict: Sendable, Equatable {
    /// The reading is right as it is (with its match, when it had one).
    case accept
    /// Candidate `n`, counted from 1, best first: its title, author, ISBN and record.
    case pick(Int)
    /// The person's own words; nil keeps what was read. The book is then matched to no record.
    case edit(title: String?, author: String?, isbn: ISBN?)
    /// Not a book, or not this one: out of the library, and kept out when the photo is read again.
    case reject
}

/// What a decision did, for the command to report.
package struct ReviewResolution: Sendable, Equatable {
    package var id: String
    package var photoSHA256: String
    /// The book as it is now in the library; nil when rejected.
    package var book: Book?
    /// How the decision reads in the book's history (`accepted as read`, `edited title, author`, `rejected`).
    package var detail: String
    /// What the decision changed of the files for people: its item closed, the works it left and joined.
    package var files = FilesChange()
    /// What undoing it needs (`ReviewStore.reopen`).
    package var undo: ReviewUndo?

    package init(
        id: String, photoSHA256: String, book: Book?, detail: String, files: FilesChange = FilesChange(),
        undo: ReviewUndo? = nil
    ) {
        self.id = id; self.photoSHA256 = photoSHA256; self.book = book; self.detail = detail; self.files = files
        self.undo = undo
    }
}

/// A decision as it can be taken back: the item as it was open, the shelf its reading was seen on, and the work the
/// decision put the reading in (nil when it was rejected).
package struct ReviewUndo: Sendable, Equatable {
    package var item: ReviewItem
    package var shelf: String?
    package var work: Int64?
    package var detail: String

    package init(item: ReviewItem, shelf: String?, work: Int64?, detail: String) {
        self.item = item; self.shelf = shelf; self.work = work; self.detail = detail
    }
}

/// One photo's review on one page: its open items in the order its spines stand, the photos of its shelf that have
/// open items (this one among them), and the photo to review after it.
package struct PhotoReview: Sendable {
    package var sha256: String
    /// Nil when the photo has no open item (any more).
    package var photo: ReviewDocument.Photo?
    package var items: [ReviewItem]
    package var shelfPhotos: [OpenPhoto]
    package var next: ReviewDocument.Photo?

    package init(
        sha256: String, photo: ReviewDocument.Photo?, items: [ReviewItem], shelfPhotos: [OpenPhoto],
        next: ReviewDocument.Photo?
    ) {
        self.sha256 = sha256; self.photo = photo; self.items = items; self.shelfPhotos = shelfPhotos; self.next = next
    }

    /// The open items left on the shelf, this photo's among them.
    package var leftOnShelf: Int { shelfPhotos.reduce(0) { $0 + $1.open } }
}

/// A photo with open review items and how many: a shelf's photos as its review page lists them.
package struct OpenPhoto: Sendable, Equatable {
    package var photo: ReviewDocument.Photo
    package var open: Int
    package init(photo: ReviewDocument.Photo, open: Int) { self.photo = photo; self.open = open }
}

/// A review command that cannot be carried out, with what to do instead.
package struct ReviewError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case notFound = "not_found", ambiguous, noSuchCandidate = "no_such_candidate"
    }
    package var code: Code
    package var message: String
    package var description: String { message }
    package init(code: Code, message: String) { self.code = code; self.message = message }
}

/// Where an open item stands in the review queue (oldest first), as the review page shows it: "3 of 17", with
/// the items before and after it.
package struct ReviewPlace: Sendable, Equatable {
    package var position: Int
    package var total: Int
    package var previous: String?
    package var next: String?
    package init(position: Int, total: Int, previous: String?, next: String?) {
        self.position = position; self.total = total; self.previous = previous; self.next = next
    }
}

extension ReviewItem {
    /// One photo's items in the order its spines stand, left to right; an item without a box comes last.
    package static func standingOrder(_ a: ReviewItem, _ b: ReviewItem) -> Bool {
        (a.book.box?.x1 ?? 2, a.id) < (b.book.box?.x1 ?? 2, b.id)
    }

    /// One photo at a time, the photos in the order their first open item came, each photo's items in the order its
    /// spines stand: how `shelfd review` walks the queue.
    package static func byPhoto(_ items: [ReviewItem]) -> [[ReviewItem]] {
        var photos: [String] = []
        var groups: [String: [ReviewItem]] = [:]
        for item in items {
            if groups[item.photo.sha256] == nil { photos.append(item.photo.sha256) }
            groups[item.photo.sha256, default: []].append(item)
        }
        return photos.map { (groups[$0] ?? []).sorted(by: standingOrder) }
    }
}
