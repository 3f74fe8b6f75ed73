import Dispatch
import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfDigest
import ShelfImaging
import ShelfOutputs
import ShelfStore
import Synchronization

/// The pictures of the web page's photo pages: the upright photo and its thumbnail, made from the original with the
/// pipeline's own Preprocessor (JPEG or HEIC, EXIF orientation applied, so the result's boxes fit them) and
/// kept under `state/web-cache/<sha256>-<size>.jpg`, so a page of thumbnails is made once. The cache is kept
/// within `[web] cache_mb`: past it, the pictures used longest ago go first (a picture's time is set each time
/// it is served).
///
/// A photo is found by its hash only (`PhotoLocator`): where shelfd saw it under incoming/, or under processed/
/// after a move, checked against the hash; else (a shared store) the provider-ready image stored with the photo,
/// else the copy review/ keeps. No original outside those folders is read.
package struct PhotoImages: Sendable {
    package enum Size: String, Sendable {
        case image, thumb

        var preset: ImagePreset {
            switch self {
            case .image: ImagePreset(maxSide: 1600, quality: 85, targetBytes: 0...600_000, minQuality: 70)
            case .thumb: ImagePreset(maxSide: 320, quality: 80, targetBytes: 0...60_000, minQuality: 60)
            }
        }
    }

    let cache: URL
    /// Only originals under incoming/ and processed/ (`confined`): nothing else on the machine is read for a page.
    let locator: PhotoLocator
    let logger: Logger
    /// `[web] cache_mb` in bytes.
    let cacheLimit: Int
    private let cacheSize = CacheSize()

    package init(config: Configuration, store: Store, logger: Logger) {
        cache = URL(fileURLWithPath: config.paths.state).appendingPathComponent("web-cache")
        cacheLimit = config.web.cacheMB * 1_048_576
        locator = PhotoLocator(config: config, store: store.library)
        self.logger = logger
    }

    /// Pictures are made one at a time, off the cooperative pool: decoding a 12-megapixel photo takes a core
    /// for a moment, and the daemon beside the page has photos to process.
    private static let lane = DispatchQueue(label: "shelfd.web.images")

    package func cacheURL(sha256: String, size: Size) -> URL {
        cache.appendingPathComponent("\(sha256)-\(size.rawValue).jpg")
    }

    /// The JPEG, from the cache or made now; nil when no copy of the photo can be found or read.
    /// `relativePath`: where the photo was first seen under incoming/ (where a move put it under processed/).
    package func jpeg(sha256: String, relativePath: String, size: Size) async -> [UInt8]? {
        await withCheckedContinuation { done in
            Self.lane.async { done.resume(returning: make(sha256: sha256, relativePath: relativePath, size: size)) }
        }
    }

    /// A book where it stood in a photo (`box`, of the upright photo), cut from the page's picture of the photo and
    /// kept in the cache beside it: the shelf page's missing books and the library's "where is it".
    package func crop(sha256: String, relativePath: String, box: Box) async -> [UInt8]? {
        await withCheckedContinuation { done in
            Self.lane.async { done.resume(returning: makeCrop(sha256: sha256, relativePath: relativePath, box: box)) }
        }
    }

    private func makeCrop(sha256: String, relativePath: String, box: Box) -> [UInt8]? {
        let place = SHA256.hex(of: Array("\(box.x1) \(box.y1) \(box.x2) \(box.y2)".utf8)).prefix(16)
        return cached(
            cache.appendingPathComponent("\(sha256)-crop-\(place).jpg"), sha256: sha256, making: "cut a book from"
        ) {
            try make(sha256: sha256, relativePath: relativePath, size: .image).map {
                try Preprocessor.crop($0, box: box, margin: 0.01)
            }
        }
    }

    private func make(sha256: String, relativePath: String, size: Size) -> [UInt8]? {
        cached(cacheURL(sha256: sha256, size: size), sha256: sha256, making: "make a picture of") {
            try locator.bytes(sha256: sha256, relativePath: relativePath, confined: true).map {
                try Preprocessor.prepare($0, preset: size.preset).jpeg
            }
        }
    }

    /// The picture at `url` in the cache, or `produce`d now and kept there; nil when there is nothing to make it from
    /// or it cannot be made (logged: "Cannot \(making) a photo").
    private func cached(_ url: URL, sha256: String, making: String, _ produce: () throws -> [UInt8]?) -> [UInt8]? {
        if let cached = FileManager.default.contents(atPath: url.path), !cached.isEmpty {
            utimes(url.path, nil) // used now: the last to go
            return Array(cached)
        }
        do {
            guard let jpeg = try produce() else { return nil }
            do {
                try AtomicFile.write(Data(jpeg), to: url)
                keepCacheWithinLimit(added: jpeg.count)
            } catch {
                logger.warning(
                    "Cannot keep a picture for the web page", metadata: ["path": "\(url.path)", "error": "\(error)"])
            }
            return jpeg
        } catch {
            logger.warning(
                "Cannot \(making) a photo", metadata: ["photo.sha256": "\(sha256.prefix(12))", "error": "\(error)"])
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
        logger.info(
            "Pictures used longest ago removed from the web page's cache",
            metadata: [
                "event": "web_cache_pruned", "removed": "\(removed)", "kept_mb": "\(kept / 1_048_576)",
            ])
    }

    private func cacheFiles() -> [(path: String, size: Int, used: Date)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []
        return names.compactMap { name in
            let path = cache.appendingPathComponent(name).path
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = attributes[.size] as? Int, let used = attributes[.modificationDate] as? Date
            else { return nil }
            return (path, size, used)
        }
    }
}

/// The cache's size as this process knows it: listed once, then counted as pictures are added.
private final class CacheSize: Sendable {
    private let bytes = Mutex<Int?>(nil)

    /// The new total; `measure` gives the folder's size the first time.
    func add(_ added: Int, measure: () -> Int) -> Int {
        bytes.withLock { total in
            let now = total.map { $0 + added } ?? measure() // the first listing already holds the new picture
            total = now
            return now
        }
    }

    func set(_ value: Int) { bytes.withLock { $0 = value } }
}
