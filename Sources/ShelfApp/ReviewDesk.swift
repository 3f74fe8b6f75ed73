import Foundation
import Logging
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
    private let writer: FilesWriter?
    private let store: (any ReviewStore)?
    private let incoming: URL
    /// False on a node that leaves the files to another (`FilesRole`): that node follows the decision itself.
    private let writesFiles: Bool

    /// Decisions on a database already open (the web page shares the daemon's, and its `writer`); without a
    /// writer the files are written before `decide` returns.
    package init(config: Configuration, store: Store?, logger: Logger, writer: FilesWriter? = nil) {
        let files = store.map { LibraryFiles(config: config, store: $0.library, logger: logger) }
        self.files = files
        self.writer = writer ?? files.map { FilesWriter(files: $0, immediately: true) }
        self.store = store?.library
        incoming = URL(fileURLWithPath: config.paths.incoming)
        writesFiles = FilesRole.writesFiles(config: config, shared: store?.isShared ?? false)
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
        guard !writesFiles, let files, let box = item.book.box,
              let image = try? files.store.photoImage(sha256: item.photo.sha256) else { return nil }
        return try? Preprocessor.crop(image, box: box)
    }

    /// Whether `cropJPEG` has a crop to give.
    package func hasCrop(_ item: ReviewItem) -> Bool {
        if cropPath(item) != nil { return true }
        guard !writesFiles, item.book.box != nil, let files else { return false }
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
        let resolution = try store.decide(id, verdict, now: Date())
        if writesFiles { writer?.changed(resolution.files) }
        return resolution
    }

    /// A decision for many of one photo's items at once (`shelfd review reject --photo`,
    /// `shelfd review accept --photo --candidate 1`).
    package enum Bulk: Sendable, Equatable {
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
    package func plan(_ bulk: Bulk, photo: String) throws -> [Planned] {
        guard let store else { throw Self.nothingOpen(photo) }
        return try store.openReviewItems(photo: photo).compactMap { item -> Planned? in
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
        let resolutions = try store.decide(plan.map { ($0.item.id, $0.verdict) }, now: Date())
        if writesFiles { writer?.changed(resolutions.reduce(into: FilesChange()) { $0.formUnion($1.files) }) }
        return resolutions
    }

    private static func nothingOpen(_ id: String) -> ReviewError {
        ReviewError(code: .notFound, message: "No open review item \(id): shelfd has not catalogued any photo yet.")
    }
}

extension LibraryFiles {
    /// The files of the configured root (library.json, review/, exports/), kept by any process that changes the library.
    package init(config: Configuration, store: any LibraryStore, logger: Logger) {
        let paths = config.paths
        self.init(libraryFile: URL(fileURLWithPath: paths.libraryFile), review: URL(fileURLWithPath: paths.review),
                  processed: URL(fileURLWithPath: paths.processed), exports: URL(fileURLWithPath: paths.exports),
                  exclusiveShelf: config.export.exclusiveShelf, filesLock: URL(fileURLWithPath: paths.filesLock),
                  store: store, logger: logger)
    }
}

extension PhotoLocator {
    /// Where the configured root keeps photos: incoming/, processed/ and review/'s copies.
    package init(config: Configuration, store: any LibraryStore) {
        let paths = config.paths
        self.init(store: store, incoming: URL(fileURLWithPath: paths.incoming), processed: URL(fileURLWithPath: paths.processed),
                  reviewCopies: URL(fileURLWithPath: paths.review).appendingPathComponent("photos"))
    }
}
