import Dispatch
import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfDigest
import ShelfImaging
import ShelfOutputs
import ShelfStore
import Synchronization

/// The pictures of the photo pages: the upright photo and its thumbnail, made from the original with the
/// pipeline's own Preprocessor (JPEG or HEIC, EXIF orientation applied, so the result's boxes fit them) and
/// kept under `state/web-cache/<sha256>-<size>.jpg`, so a page of thumbnails is made once. The cache is kept
/// within `[web] cache_mb`: past it, the pictures used longest ago go first (a picture's time is set each time
/// it is served).
///
/// A photo is found by its hash only: where shelfd saw it (incoming/, or processed/ after a move), checked
/// against the hash, else the copy review/ keeps, else (a shared store) the provider-ready image stored with the
/// photo. Nothing outside those folders is read.
struct PhotoImages: Sendable {
    enum Size: String, Sendable {
        case image, thumb

        var preset: ImagePreset {
            switch self {
            case .image: ImagePreset(maxSide: 1600, quality: 85, targetBytes: 0...600_000, minQuality: 70)
            case .thumb: ImagePreset(maxSide: 320, quality: 80, targetBytes: 0...60_000, minQuality: 60)
            }
        }
    }

    let cache: URL
    let incoming: URL
    let processed: URL
    let files: LibraryFiles
    let store: Store
    let logger: Logger
    /// `[web] cache_mb` in bytes.
    let cacheLimit: Int
    private let cacheSize = CacheSize()

    init(config: Configuration, store: Store, logger: Logger) {
        cache = URL(fileURLWithPath: config.paths.state).appendingPathComponent("web-cache")
        cacheLimit = config.web.cacheMB * 1_048_576
        incoming = URL(fileURLWithPath: config.paths.incoming)
        processed = URL(fileURLWithPath: config.paths.processed)
        files = LibraryFiles(config: config, store: store, logger: logger)
        self.store = store
        self.logger = logger
    }

    /// Pictures are made one at a time, off the cooperative pool: decoding a 12-megapixel photo takes a core
    /// for a moment, and the daemon beside the page has photos to process.
    private static let lane = DispatchQueue(label: "shelfd.web.images")

    func cacheURL(sha256: String, size: Size) -> URL {
        cache.appendingPathComponent("\(sha256)-\(size.rawValue).jpg")
    }

    /// The JPEG, from the cache or made now; nil when no copy of the photo can be found or read.
    /// `relativePath`: where the photo was first seen under incoming/ (where a move put it under processed/).
    func jpeg(sha256: String, relativePath: String, size: Size) async -> [UInt8]? {
        await withCheckedContinuation { done in
            Self.lane.async { done.resume(returning: make(sha256: sha256, relativePath: relativePath, size: size)) }
        }
    }

    private func make(sha256: String, relativePath: String, size: Size) -> [UInt8]? {
        let url = cacheURL(sha256: sha256, size: size)
        if let cached = FileManager.default.contents(atPath: url.path), !cached.isEmpty {
            utimes(url.path, nil)                                  // used now: the last to go
            return Array(cached)
        }
        guard let original = original(sha256: sha256, relativePath: relativePath) else { return nil }
        do {
            let jpeg = try Preprocessor.prepare(original, preset: size.preset).jpeg
            do {
                try AtomicFile.write(Data(jpeg), to: url)
                keepCacheWithinLimit(added: jpeg.count)
            } catch {
                logger.warning("Cannot keep a picture for the web page", metadata: ["path": "\(url.path)", "error": "\(error)"])
            }
            return jpeg
        } catch {
            logger.warning("Cannot make a picture of a photo", metadata: ["photo.sha256": "\(sha256.prefix(12))", "error": "\(error)"])
            return nil
        }
    }

    /// Counts what was added; past `[web] cache_mb`, removes the pictures used longest ago until the cache is
    /// back under nine tenths of it (so the next few pictures do not each start a pruning). The folder is
    /// listed once at the first picture and at each pruning, not at every picture.
    private func keepCacheWithinLimit(added: Int) {
        let total = cacheSize.add(added) { cacheFiles().reduce(0) { $0 + $1.size } }
        guard total > cacheLimit else { return }
        var kept = 0
        var removed = 0
        for file in cacheFiles().sorted(by: { $0.used > $1.used }) {
            if kept + file.size <= cacheLimit * 9 / 10 {
                kept += file.size
            } else if unlink(file.path) == 0 {
                removed += 1
            } else {
                kept += file.size
            }
        }
        cacheSize.set(kept)
        logger.info("Pictures used longest ago removed from the web page's cache", metadata: [
            "event": "web_cache_pruned", "removed": "\(removed)", "kept_mb": "\(kept / 1_048_576)"])
    }

    private func cacheFiles() -> [(path: String, size: Int, used: Date)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []
        return names.compactMap { name in
            let path = cache.appendingPathComponent(name).path
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  attributes[.type] as? FileAttributeType == .typeRegular,
                  let size = attributes[.size] as? Int, let used = attributes[.modificationDate] as? Date else { return nil }
            return (path, size, used)
        }
    }

    /// The photo's bytes: an original whose hash is the photo's, under incoming/ or processed/; else the
    /// upright copy review/ keeps while a book of the photo waits.
    private func original(sha256: String, relativePath: String) -> [UInt8]? {
        let seen = (try? store.photoLocations(sha256: sha256)) ?? []
        let moved = ([relativePath] + seen.compactMap { relative(to: incoming, $0) })
            .map { processed.appendingPathComponent($0).path }
        for path in seen + moved where isInside(path) {
            if case .success(let bytes) = PhotoFile.read(path), SHA256.hex(of: bytes) == sha256 { return bytes }
        }
        if case .success(let bytes) = PhotoFile.read(files.contextURL(sha256: sha256).path) { return bytes }
        // A shared store's node that cannot see the photo's folder: the upright image stored when it was found.
        return try? store.photoImage(sha256: sha256)
    }

    /// True for a file under incoming/ or processed/ once links are followed.
    private func isInside(_ path: String) -> Bool {
        let real = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        return [incoming, processed].contains { folder in
            real.hasPrefix(folder.resolvingSymlinksInPath().path + "/")
        }
    }

    /// `path` relative to `folder`, or nil when it is not under it.
    private func relative(to folder: URL, _ path: String) -> String? {
        let prefix = folder.standardizedFileURL.path + "/"
        let standard = URL(fileURLWithPath: path).standardizedFileURL.path
        return standard.hasPrefix(prefix) ? String(standard.dropFirst(prefix.count)) : nil
    }
}

/// The cache's size as this process knows it: listed once, then counted as pictures are added.
private final class CacheSize: Sendable {
    private let bytes = Mutex<Int?>(nil)

    /// The new total; `measure` gives the folder's size the first time.
    func add(_ added: Int, measure: () -> Int) -> Int {
        bytes.withLock { total in
            let now = total.map { $0 + added } ?? measure()     // the first listing already holds the new picture
            total = now
            return now
        }
    }

    func set(_ value: Int) { bytes.withLock { $0 = value } }
}
