import Foundation
import Logging
import Synchronization
import ShelfConfig
import ShelfCore
import ShelfImaging
import ShelfOutputs
import ShelfStore

/// `shelfd review`: the open items, and a person's decisions, after each of which library.json and review/
/// follow the database (handed to the process's `FilesWriter`: on the web page the answer does not wait for them;
/// the command writes them before it exits). Works while the daemon runs (WAL; a decision is one BEGIN IMMEDIATE
/// transaction).
package struct ReviewDesk: Sendable {
    /// Nil before anything was ever queued: nothing to review.
    private let files: LibraryFiles?
    /// Where a decision's changes go, as every desk's do.
    private let deskFiles: DeskFiles?
    private let store: (any ReviewStore)?
    private let incoming: URL
    /// The decisions of the last minute, which the review page may take back.
    private let undoable = UndoableDecisions()
    /// The date decisions are taken at, and their minute of undo counted on.
    private let time: TimeSource

    /// Decisions on a database already open (the web page shares the daemon's, and its `writer` and `time`); without
    /// a writer the files are written before `decide` returns.
    package init(
        config: Configuration, store: Store?, logger: Logger, writer: FilesWriter? = nil, time: TimeSource = .system
    ) {
        deskFiles = store.map { DeskFiles(config: config, store: $0, logger: logger, writer: writer) }
        files = deskFiles?.library
        self.store = store?.library
        incoming = URL(fileURLWithPath: config.paths.incoming)
        self.time = time
    }

    /// Every open item, oldest first.
    package func items() throws -> [ReviewItem] {
        try store?.openReviewItems() ?? []
    }

    /// The first open item, oldest first.
    package func firstID() throws -> String? {
        try store?.firstOpenReviewID()
    }

    /// Where `item` stands among the open items, and its neighbours.
    package func place(of item: ReviewItem) throws -> ReviewPlace {
        try store?.reviewPlace(of: item) ?? ReviewPlace(position: 1, total: 1, previous: nil, next: nil)
    }

    /// The open item after `item`, wrapping round; nil when no other is open.
    package func nextID(after item: ReviewItem) throws -> String? {
        try store?.openReviewID(after: item)
    }

    /// The open item `id` names (or starts).
    package func item(_ id: String) throws -> ReviewItem {
        guard let store else { throw Self.nothingOpen(id) }
        return try store.reviewItem(id)
    }

    /// As written to review/<id>.json (the crop named when it has been cut).
    package func document(_ item: ReviewItem) -> ReviewDocument {
        files?.document(item) ?? item.document(crop: nil)
    }

    /// The spine's crop, when it could be cut.
    package func cropPath(_ item: ReviewItem) -> String? {
        files.map { $0.cropURL(id: item.id).path }.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
    }

    /// The spine's crop as JPEG for the web page: the file review/ holds, or, on a node that leaves the files to
    /// another (so has no review/), cut now from the image the shared store keeps of the photo.
    package func cropJPEG(_ item: ReviewItem) -> [UInt8]? {
        if let path = cropPath(item), let data = FileManager.default.contents(atPath: path) { return Array(data) }
        guard deskFiles?.writesFiles == false, let files, let box = item.book.box,
            let image = try? files.store.photoImage(sha256: item.photo.sha256)
        else { return nil }
        return try? Preprocessor.crop(image, box: box, readAcross: true, textRun: item.book.textRun)
    }

    /// Whether `cropJPEG` has a crop to give.
    package func hasCrop(_ item: ReviewItem) -> Bool {
        if cropPath(item) != nil { return true }
        guard deskFiles?.writesFiles == false, item.book.box != nil, let files else { return false }
        return (try? files.store.hasPhotoImage(sha256: item.photo.sha256)) == true
    }

    /// The whole photo: the original where it was found, else the copy kept for review.
    package func photoPath(_ item: ReviewItem) -> String? {
        let original = incoming.appendingPathComponent(item.photo.path).path
        let copy = files?.contextURL(sha256: item.photo.sha256).path
        return [original, copy].compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Carries out a decision, then hands library.json and the item's files to the writer.
    package func decide(_ id: String, _ verdict: ReviewVerdict) throws -> ReviewResolution {
        guard let store else { throw Self.nothingOpen(id) }
        let resolution = try store.decide(id, verdict, now: time.now)
        deskFiles?.changed(resolution.files)
        return resolution
    }

    /// A decision for many of one photo's items at once (`shelfd review reject --photo`,
    /// `shelfd review accept --photo --candidate 1`).
    package enum Bulk: Sendable, Equatable {
        /// The confidence a scrap is under unless a person says otherwise (`--below`, the page's field).
        package static let scrapThreshold = 0.5

        /// Not books: every open item of the photo, or with `unmatchedBelow` only those with no candidate and a
        /// confidence under it (the scraps a glance at the photo dismisses).
        case notBooks(unmatchedBelow: Double?)
        /// Each item that has candidates takes its first.
        case firstCandidates
    }

    /// One item of a bulk decision and the verdict it gets.
    package typealias Planned = (item: ReviewItem, verdict: ReviewVerdict)

    /// The open items of `photo` (its sha256 or the start of it) that `bulk` decides, each with its verdict, in the
    /// order the spines stand: what a person is shown before `apply` carries it out.
    /// `among`: only these items (those a person selected), when given.
    package func plan(_ bulk: Bulk, photo: String, among selected: Set<String>? = nil) throws -> [Planned] {
        guard let store else { throw Self.nothingOpen(photo) }
        return try store.openReviewItems(photo: photo).compactMap { item -> Planned? in
            if let selected, !selected.contains(item.id) { return nil }
            switch bulk {
            case .notBooks(let below):
                if let below, !item.candidates.isEmpty || item.book.confidence >= below { return nil }
                return (item, .reject)
            case .firstCandidates:
                return item.candidates.isEmpty ? nil : (item, .pick(1))
            }
        }
    }

    /// Carries out a plan in one transaction, each item recorded as a decision of its own (its history, and
    /// remembered when the photo is read again); then the files follow once for all of them.
    package func apply(_ plan: [Planned]) throws -> [ReviewResolution] {
        guard let store, !plan.isEmpty else { return [] }
        let resolutions = try store.decide(plan.map { ($0.item.id, $0.verdict) }, now: time.now)
        deskFiles?.changed(resolutions.reduce(into: FilesChange()) { $0.formUnion($1.files) })
        return resolutions
    }

    // MARK: A photo at a time (the web page `/photos/<sha>/review`)

    /// One photo's open items in the order its spines stand, the photos of its shelf that have open items, and the
    /// photo to review after it: the shelf's next, else the queue's first elsewhere.
    package func photoReview(sha256: String) throws -> PhotoReview? {
        guard let store else { return nil }
        let items = try store.openReviewItems(photo: sha256)
        let photo = items.first?.photo
        let shelf = photo?.shelf
        let shelfPhotos = photo == nil ? [] : try store.openReviewPhotos(shelf: shelf)
        var next =
            shelfPhotos.first { $0.photo.path > (photo?.path ?? "") }?.photo
            ?? shelfPhotos.first { $0.photo.sha256 != sha256 }?.photo
        if next == nil {
            // The queue's next item after this photo's last (its items came in one commit: they stand together).
            let after =
                try items.max { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.map {
                    try store.openReviewID(after: $0)
                }
                ?? store.firstOpenReviewID()
            next = try after.map { try store.reviewItem($0).photo }.flatMap { $0.sha256 == sha256 ? nil : $0 }
        }
        return PhotoReview(sha256: sha256, photo: photo, items: items, shelfPhotos: shelfPhotos, next: next)
    }

    /// Keeps decisions for `UndoableDecisions.window` and returns the token that takes them back.
    package func keepForUndo(_ resolutions: [ReviewResolution]) -> String {
        undoable.keep(resolutions.compactMap(\.undo), now: time.now)
    }

    /// Takes back the decisions `token` names: their items open again as they were, and the files follow.
    /// Returns the ids of the items open again.
    package func undo(_ token: String) throws -> [String] {
        guard let store, let decisions = undoable.take(token, now: time.now) else {
            throw ReviewError(
                code: .notFound,
                message: "Too late to undo: decisions can be taken back for a minute. "
                    + "Find the book in the library to change it.")
        }
        let change = try store.reopen(decisions, now: time.now)
        deskFiles?.changed(change)
        return decisions.map(\.item.id).filter(change.openedItems.contains)
    }

    private static func nothingOpen(_ id: String) -> ReviewError {
        ReviewError(code: .notFound, message: "No open review item \(id): shelfd has not catalogued any photo yet.")
    }
}

extension LibraryFiles {
    /// The files of the configured root (library.json, review/, exports/), kept by any process that changes the library.
    package init(config: Configuration, store: any LibraryStore, logger: Logger) {
        let paths = config.paths
        self.init(
            libraryFile: URL(fileURLWithPath: paths.libraryFile), review: URL(fileURLWithPath: paths.review),
            processed: URL(fileURLWithPath: paths.processed), exports: URL(fileURLWithPath: paths.exports),
            exclusiveShelf: config.export.exclusiveShelf, filesLock: URL(fileURLWithPath: paths.filesLock),
            store: store, logger: logger)
    }
}

extension PhotoLocator {
    /// Where the configured root keeps photos: incoming/, processed/ and review/'s copies.
    package init(config: Configuration, store: any LibraryStore) {
        let paths = config.paths
        self.init(
            store: store, incoming: URL(fileURLWithPath: paths.incoming),
            processed: URL(fileURLWithPath: paths.processed),
            reviewCopies: URL(fileURLWithPath: paths.review).appendingPathComponent("photos"))
    }
}

/// Decisions kept for a minute so that a person can take them back (the review page's "Undo"), by a random token.
/// In memory: the page that took them holds the token, and a restart forgets them.
package final class UndoableDecisions: Sendable {
    package static let window: TimeInterval = 60
    /// A script deciding thousands a minute through the API keeps this many at most, the newest.
    package static let limit = 1_000
    private let kept = Mutex<[String: (until: Date, decisions: [ReviewUndo])]>([:])

    package init() {}

    package func keep(_ decisions: [ReviewUndo], now: Date) -> String {
        let token = UUID().uuidString.lowercased()
        kept.withLock { kept in
            kept = kept.filter { $0.value.until > now } // what is past its minute goes
            if kept.count >= Self.limit, let oldest = kept.min(by: { $0.value.until < $1.value.until })?.key {
                kept.removeValue(forKey: oldest)
            }
            kept[token] = (now.addingTimeInterval(Self.window), decisions)
        }
        return token
    }

    /// The decisions `token` names while their minute lasts, once.
    package func take(_ token: String, now: Date) -> [ReviewUndo]? {
        kept.withLock { kept in
            guard let entry = kept.removeValue(forKey: token), entry.until > now else { return nil }
            return entry.decisions
        }
    }
}
