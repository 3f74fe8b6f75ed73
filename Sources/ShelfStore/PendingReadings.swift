import Foundation
import ShelfCore

/// A photo's sightings and history steps in a batch commit, written together, one statement each, once the photo's
/// readings are in (on a server every statement is a round trip, and a shelf photo holds tens of books). The rows
/// and their order are those one reading at a time would write: the buffer is written first whenever something
/// could see it (a later reading that shares an ISBN, a record or a title with a pending sighting; a merge, which
/// moves a work's sightings and history; a decided reading; the photo's refresh).
final class PendingReadings {
    private struct Sighting {
        var bookID: Int64, sha256: String, box: String?, confidence: Double, shelf: String?, seenAt: Date
        var verified: Bool, title: String, author: String?, titleKey: String
        var isbn13: String?, isbn10: String?, isbnSource: String?, decided: Bool, matchKey: String?
    }

    private var sightings: [Sighting] = []
    /// The keys the pending sightings could be found by (ISBN, record, title).
    private var pendingKeys: Set<String> = []
    private var history: [(bookID: Int64, step: LibraryDocument.Decision)] = []
    /// The works linked to the photo's readings, read for them all at once before the first (`LibraryRecords.linkedWorks`).
    private var links: [LibraryRecords.WorkLookup: [Row]] = [:]
    /// What the readings taken since could have changed: the works they were linked to or went to, and their keys. A
    /// reading whose links or keys meet these is looked up again.
    private var touchedWorks: Set<Int64> = []
    private var takenKeys: Set<String> = []

    /// Reads the links of the photo's readings in one query.
    func readLinks(of books: [Book], _ db: any DatabaseConnection) throws {
        links = try LibraryRecords.linkedWorks(db, books.map(LibraryRecords.WorkLookup.init))
        touchedWorks = []; takenKeys = []
    }

    /// The links read for this reading, while nothing taken since could have changed them; nil: look them up.
    func linkedWorks(for lookup: LibraryRecords.WorkLookup) -> [Row]? {
        guard let rows = links[lookup], takenKeys.isDisjoint(with: lookup.keys),
            !rows.contains(where: { touchedWorks.contains($0.int("id") ?? -1) })
        else { return nil }
        return rows
    }

    /// A reading was taken: its links and keys, and the work it went to, may have changed.
    func taken(_ lookup: LibraryRecords.WorkLookup, linked: [Row], work: Int64) {
        touchedWorks.formUnion(linked.compactMap { $0.int("id") })
        touchedWorks.insert(work)
        takenKeys.formUnion(lookup.keys)
    }

    /// Something outside the buffer changed the library (a decided reading): every link is looked up again.
    func forgetLinks() { links = [:] }

    /// Whether the lookup of `book`'s work could find a pending sighting (`LibraryRecords.work(for:)`'s arms on book_sighting).
    func mayBeSeen(by book: Book) -> Bool { !pendingKeys.isDisjoint(with: LibraryRecords.WorkLookup(book).keys) }

    /// A sighting to write. Two readings of one photo on the same work share it, as the statement's ON CONFLICT
    /// would have them: the best confidence, verified or decided if either was, the first ISBN and record kept.
    func add(
        bookID: Int64, sha256: String, box: String?, confidence: Double, shelf: String?, seenAt: Date, verified: Bool,
        title: String, author: String?, titleKey: String, isbn13: String?, isbn10: String?, isbnSource: String?,
        decided: Bool, matchKey: String?
    ) {
        pendingKeys.formUnion([isbn13, matchKey, titleKey].compactMap { $0 })
        if let index = sightings.firstIndex(where: { $0.bookID == bookID && $0.sha256 == sha256 }) {
            var shared = sightings[index]
            shared.confidence = max(shared.confidence, confidence)
            shared.verified = shared.verified || verified
            shared.decided = shared.decided || decided
            if shared.isbn13 == nil { (shared.isbn10, shared.isbnSource) = (isbn10, isbnSource) }
            shared.isbn13 = shared.isbn13 ?? isbn13
            shared.matchKey = shared.matchKey ?? matchKey
            sightings[index] = shared
            return
        }
        sightings.append(
            Sighting(
                bookID: bookID, sha256: sha256, box: box, confidence: confidence, shelf: shelf, seenAt: seenAt,
                verified: verified, title: title, author: author, titleKey: titleKey, isbn13: isbn13,
                isbn10: isbn10, isbnSource: isbnSource, decided: decided, matchKey: matchKey))
    }

    func add(_ steps: [LibraryDocument.Decision], of bookID: Int64) {
        history += steps.map { (bookID, $0) }
    }

    /// Writes what is pending: the sightings in one statement, then the history in one.
    func flush(_ db: any DatabaseConnection) throws(StoreError) {
        if !sightings.isEmpty {
            try LibraryRecords.insertSightings(
                db,
                sightings.map { s in
                    [
                        s.bookID, s.sha256, s.box, s.confidence, s.shelf, s.seenAt,
                        (s.verified ? Book.Status.verified : .needsReview).rawValue, s.title, s.author, s.titleKey,
                        s.isbn13, s.isbn10, s.isbnSource, s.decided, s.matchKey,
                    ]
                })
            sightings = []; pendingKeys = []
        }
        if !history.isEmpty {
            try LibraryRecords.recordHistory(db, history)
            history = []
        }
    }
}
