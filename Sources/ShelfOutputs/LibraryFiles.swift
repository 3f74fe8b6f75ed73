import Foundation
import Logging
import ShelfCore
import ShelfDigest
import ShelfExport
import ShelfImaging
import ShelfStore

/// The files a person reads, derived from the database (the truth): `library.json` and `review/`.
///
/// `review/` holds, per open item, `<id>.json` (a `ReviewDocument`) and `<id>.jpg` (the spine cut from the
/// upright original), and per photo with an open item `photos/<sha256>.jpg`: the whole photo, upright and
/// smaller, to see a spine among its neighbours. That copy is kept while any book of the photo is open and goes
/// with the last one; a crop that has to be cut again after the original moved or was deleted (a phone-sync
/// folder) is cut from it.
///
/// `FilesWriter` decides when: review/ as soon as a commit changed it, library.json and the exports coalesced off
/// the commit's path. Each write holds an flock: every writer commits first and reads after taking the lock, so the
/// last writer always wrote the newest state. A missing file is made again on the next full update (at start,
/// after a crash between commit and write).
package struct LibraryFiles: Sendable {
    package var libraryFile: URL
    package var review: URL
    /// Where `pipeline.after = move` puts originals.
    package var processed: URL
    /// `exports/`: the exports a person made there under their default names are kept current.
    package var exports: URL?
    package var exclusiveShelf: ReadingShelf
    package var maxPixels: Int
    /// The file every writer of these files holds an flock on (`files.lock` in the state folder).
    package var filesLock: URL
    package let store: any LibraryStore
    package let logger: Logger
    /// Photos already in memory, by hash (the batch just processed): their review crops are cut without
    /// reading and hashing the originals again.
    package var originals: [String: [UInt8]] = [:]
    /// The date library.json says it was generated at: the daemon's time source (`FilesWriter` gives its own).
    package var time: TimeSource = .system

    package init(
        libraryFile: URL, review: URL, processed: URL, exports: URL? = nil, exclusiveShelf: ReadingShelf = .toRead,
        maxPixels: Int = 64_000_000, filesLock: URL, store: any LibraryStore, logger: Logger
    ) {
        self.libraryFile = libraryFile; self.review = review; self.processed = processed; self.maxPixels = maxPixels
        self.exports = exports; self.exclusiveShelf = exclusiveShelf; self.filesLock = filesLock
        self.store = store; self.logger = logger
    }

    /// The context copy of a photo: enough to recognise the shelf, small enough to keep a while.
    static let contextPreset = ImagePreset(maxSide: 1600, quality: 85, targetBytes: 0...400_000, minQuality: 60)

    package var photos: URL { review.appendingPathComponent("photos") }
    package func documentURL(id: String) -> URL { review.appendingPathComponent("\(id).json") }
    package func cropURL(id: String) -> URL { Self.cropURL(id: id, review: review) }
    static func cropURL(id: String, review: URL) -> URL { review.appendingPathComponent("\(id).jpg") }
    package func contextURL(sha256: String) -> URL { locator.reviewCopy(sha256: sha256) }
    /// How this node finds a photo's bytes for the crops (incoming/ is not needed: a photo's place under it is known).
    package var locator: PhotoLocator {
        PhotoLocator(store: store, incoming: nil, processed: processed, reviewCopies: photos)
    }

    /// Rewrites library.json and the exports and brings review/ in line with the open items.
    package func update() {
        withLock {
            syncReview(nil)
            writeLibrary()
        }
    }

    /// Brings review/ in line with the open items: all of them when `change` is nil (a reconcile), else item by
    /// item as a commit reported them (see `syncReview`).
    package func updateReview(_ change: FilesChange? = nil) {
        withLock { syncReview(change) }
    }

    /// Rewrites library.json and the exports kept current in exports/.
    package func updateLibrary() {
        withLock { writeLibrary() }
    }

    /// An export as every door makes it (`shelfd export`, the web page's download, exports/ kept current): the
    /// library streamed a page of works at a time, the review queue as review/ holds it. With the default options
    /// unless given (`export.exclusive_shelf`, verified books only).
    package func export(
        _ format: ExportFormat, exclusiveShelf: ReadingShelf? = nil, includeUnverified: Bool = false,
        to append: (Data) throws -> Void
    ) throws -> ExportResult {
        try Self.export(
            format, from: store, review: review, exclusiveShelf: exclusiveShelf ?? self.exclusiveShelf,
            includeUnverified: includeUnverified, generatedAt: time.now, to: append)
    }

    /// `export`, from a store that may not exist yet (`shelfd export` before the first photo): an empty export.
    package static func export(
        _ format: ExportFormat, from store: (any LibraryStore)?, review: URL, exclusiveShelf: ReadingShelf,
        includeUnverified: Bool, generatedAt: Date, to append: (Data) throws -> Void
    ) throws -> ExportResult {
        let options = ExportOptions(
            exclusiveShelf: exclusiveShelf, includeUnverified: includeUnverified, reviewFolder: review.path)
        return try LibraryExport.stream(
            format, pages: { try store?.libraryPages(size: pageSize, $0) },
            reviews: { page in
                try store?.openReviewPages(size: pageSize) { try page($0.map { document($0, review: review) }) }
            },
            options: options, generatedAt: generatedAt, to: append)
    }

    /// The review document of an open item, naming its crop when one was cut.
    package func document(_ item: ReviewItem) -> ReviewDocument { Self.document(item, review: review) }

    private static func document(_ item: ReviewItem, review: URL) -> ReviewDocument {
        let hasCrop = FileManager.default.fileExists(atPath: cropURL(id: item.id, review: review).path)
        return item.document(crop: hasCrop ? "\(item.id).jpg" : nil)
    }

    /// Rewrites each export found in exports/ under its default name (with the default options), so an
    /// export made once follows every later photo and review decision.
    private func refreshExports() {
        guard let exports else { return }
        for format in ExportFormat.allCases {
            let url = exports.appendingPathComponent(format.defaultFileName)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            do {
                try AtomicFile.write(to: url) { append in _ = try export(format, to: append) }
            } catch {
                logger.warning(
                    "Cannot bring an export up to date", metadata: ["path": "\(url.path)", "error": "\(error)"])
            }
        }
    }

    /// Works read from the database per page while library.json and the exports are written.
    static let pageSize = 250

    private func withLock(_ body: () -> Void) {
        let path = filesLock.path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 {
            logger.warning(
                "Cannot take the files lock; writing without it",
                metadata: [
                    "path": "\(path)",
                    "error": "\(String(cString: strerror(errno)))",
                ])
        } else {
            while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        }
        defer { if fd >= 0 { close(fd) } } // closing drops the lock
        body()
    }

    /// library.json in its bounded form, streamed a page of works at a time; then the exports.
    private func writeLibrary() {
        do {
            try AtomicFile.write(to: libraryFile) { append in
                try LibraryDocument.stream(
                    generatedAt: time.now, pages: { try store.libraryPages(size: Self.pageSize, $0) },
                    to: append)
            }
        } catch {
            logger.error("Cannot write library.json", metadata: ["error": "\(error)"])
            return
        }
        refreshExports()
    }

    /// Brings review/ in line with the open items. `change` nil: every open item is read and its files checked, and
    /// files of no open item go (a reconcile: at start, daily, after a change of another process's). Otherwise item by
    /// item, as the commit reported: the open items of the photos it names are written, the closed items' files go,
    /// and a photo's copy with its last open item; nothing else is read or listed.
    private func syncReview(_ change: FilesChange?) {
        var originals = OriginalCache(locator: locator, known: originals)
        guard let change else {
            // A page of items at a time; only their ids and photos are kept, to know which files are stale.
            var open: Set<String> = [], photosOpen: Set<String> = []
            do {
                try store.openReviewPages(size: Self.pageSize) { items in
                    write(items, originals: &originals)
                    open.formUnion(items.map(\.id)); photosOpen.formUnion(items.map(\.photo.sha256))
                }
            } catch {
                logger.error("Cannot read the review queue", metadata: ["error": "\(error)"])
                return
            }
            removeStale(in: review, keeping: open, extensions: ["json", "jpg"])
            removeStale(in: photos, keeping: photosOpen, extensions: ["jpg"])
            return
        }
        let items: [ReviewItem]
        do { items = try store.openReviewItems(photos: change.photos) } catch {
            logger.error("Cannot read the review queue", metadata: ["error": "\(error)"])
            return
        }
        write(items, originals: &originals)
        let open = Set(items.map(\.id)), photosOpen = Set(items.map(\.photo.sha256))
        for id in change.closedItems where !open.contains(id) {
            try? FileManager.default.removeItem(at: documentURL(id: id))
            try? FileManager.default.removeItem(at: cropURL(id: id))
        }
        for sha in change.photos where !photosOpen.contains(sha) {
            try? FileManager.default.removeItem(at: contextURL(sha256: sha))
        }
    }

    /// Each item's files, and a copy of each of their photos not yet kept.
    private func write(_ items: [ReviewItem], originals: inout OriginalCache) {
        for sha in Set(items.map(\.photo.sha256))
        where !FileManager.default.fileExists(atPath: contextURL(sha256: sha).path) {
            guard let bytes = originals.bytes(of: sha, path: items.first { $0.photo.sha256 == sha }?.photo.path ?? "")
            else { continue }
            attempt("Cannot keep a copy of the photo for review", sha) {
                try AtomicFile.write(
                    Data(try Preprocessor.prepare(bytes, preset: Self.contextPreset, maxPixels: maxPixels).jpeg),
                    to: contextURL(sha256: sha))
            }
        }
        for item in items { write(item, originals: &originals) }
    }

    /// `<id>.json`, and `<id>.jpg` when the box changed or the crop is missing; each written only when different.
    private func write(_ item: ReviewItem, originals: inout OriginalCache) {
        let existing = FileManager.default.contents(atPath: documentURL(id: item.id).path)
        let previous = existing.flatMap { try? JSONStyle.decoder().decode(ReviewDocument.self, from: $0) }
        var crop: String?
        if let box = item.book.box {
            let cropPath = cropURL(id: item.id).path
            if previous?.book.box == box, previous?.crop != nil, FileManager.default.fileExists(atPath: cropPath) {
                crop = previous?.crop
            } else if let bytes = originals.bytes(of: item.photo.sha256, path: item.photo.path) {
                attempt("Cannot cut the spine for review", item.photo.sha256) {
                    try AtomicFile.write(
                        Data(
                            try Preprocessor.crop(
                                bytes, box: box, maxPixels: maxPixels, readAcross: true,
                                textRun: item.book.textRun)), to: cropURL(id: item.id))
                    crop = "\(item.id).jpg"
                }
            }
        }
        let document = item.document(crop: crop)
        attempt("Cannot write a review item", item.photo.sha256) {
            let data = try JSONStyle.encoder().encode(document)
            if data != existing { try AtomicFile.write(data, to: documentURL(id: item.id)) }
        }
    }

    private func removeStale(in folder: URL, keeping names: Set<String>, extensions: Set<String>) {
        guard let files = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        else { return }
        for file in files
        where extensions.contains(file.pathExtension) && !file.lastPathComponent.hasPrefix(".")
            && !names.contains(file.deletingPathExtension().lastPathComponent)
        {
            try? FileManager.default.removeItem(at: file)
        }
        AtomicFile.removeLeftovers(in: folder)
    }

    private func attempt(_ message: Logger.Message, _ sha256: String, _ body: () throws -> Void) {
        do { try body() } catch {
            logger.warning(message, metadata: ["photo.sha256": "\(sha256.prefix(12))", "error": "\(error)"])
        }
    }
}

/// The photo last asked for, found by `PhotoLocator`, kept while the items of one photo are written.
private struct OriginalCache {
    let locator: PhotoLocator
    /// Bytes already known to be the photo of their hash.
    let known: [String: [UInt8]]
    var last: (sha256: String, bytes: [UInt8]?)?

    mutating func bytes(of sha256: String, path relativePath: String) -> [UInt8]? {
        if let bytes = known[sha256] { return bytes }
        if let last, last.sha256 == sha256 { return last.bytes }
        let found = locator.bytes(sha256: sha256, relativePath: relativePath)
        last = (sha256, found)
        return found
    }
}
