import Foundation
import ShelfDigest
import ShelfStore

/// A photo's bytes found by its hash, wherever this node can see them: the one rule that review/'s crops, the photo
/// pages' pictures and the review desk follow. In order: an original whose hash is the photo's, where shelfd saw it
/// or under processed/ after a move; on a shared store, the provider-ready image kept when the photo was found
/// (upright, scaled for the provider); the upright copy review/ keeps while a book of the photo waits.
package struct PhotoLocator: Sendable {
    package let store: any LibraryStore
    /// incoming/: a photo seen under it is looked for under processed/ at the same place after a move.
    package let incoming: URL?
    package let processed: URL
    /// review/photos/, where the upright copies are.
    package let reviewCopies: URL

    package init(store: any LibraryStore, incoming: URL?, processed: URL, reviewCopies: URL) {
        self.store = store; self.incoming = incoming; self.processed = processed; self.reviewCopies = reviewCopies
    }

    /// The photo's bytes, by the rule above; nil when none is left.
    /// `confined`: only originals under incoming/ and processed/ once links are followed (what a web page may read).
    package func bytes(sha256: String, relativePath: String, confined: Bool = false) -> [UInt8]? {
        if let original = original(sha256: sha256, relativePath: relativePath, confined: confined) { return original }
        if let stored = try? store.photoImage(sha256: sha256) { return stored }
        if case .success(let copy) = PhotoFile.read(reviewCopy(sha256: sha256).path) { return copy }
        return nil
    }

    /// The original as shelfd found it, or nil: only bytes whose hash is the photo's.
    package func original(sha256: String, relativePath: String, confined: Bool = false) -> [UInt8]? {
        let seen = (try? store.photoLocations(sha256: sha256)) ?? []
        let moved = ([relativePath] + seen.compactMap { path in incoming.flatMap { relative(to: $0, path) } })
            .map { processed.appendingPathComponent($0).path }
        var tried = Set<String>()
        for path in seen + moved where tried.insert(path).inserted && (!confined || isInside(path)) {
            if case .success(let bytes) = PhotoFile.read(path), SHA256.hex(of: bytes) == sha256 { return bytes }
        }
        return nil
    }

    /// The upright copy review/ keeps of a photo.
    package func reviewCopy(sha256: String) -> URL { reviewCopies.appendingPathComponent("\(sha256).jpg") }

    /// True for a file under incoming/ or processed/ once links are followed.
    private func isInside(_ path: String) -> Bool {
        let real = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        return ([incoming, processed].compactMap { $0 }).contains { folder in
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
