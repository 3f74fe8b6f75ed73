import Foundation
import ShelfDigest
import ShelfOutputs
import ShelfStore
import ShelfTesting
import Testing

@Suite("Finding a photo's bytes by its hash")
struct PhotoLocatorTests {
    @Test(
        "Where it was seen, then under processed/ after a move; never another photo at the same path; then review/'s copy"
    )
    func followsThePhotoNotThePath() async throws {
        try await withTemporaryDirectory { root in
            let incoming = root.appendingPathComponent("incoming"), processed = root.appendingPathComponent("processed")
            let copies = root.appendingPathComponent("review/photos")
            for folder in [incoming, processed, copies] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            let store = try Store.open(path: root.appendingPathComponent("shelfd.db").path)
            let original = try Data(contentsOf: writeFakePhoto("den/IMG_1.jpg", in: incoming, bytes: 4096))
            let sha = SHA256.hex(of: Array(original))
            _ = try store.queue.recordSighting(
                path: incoming.appendingPathComponent("den/IMG_1.jpg").path, relativePath: "den/IMG_1.jpg",
                sha256: sha, size: Int64(original.count), mtime: 0, syncConflict: false, provider: "gemini", now: Date()
            )
            let locator = PhotoLocator(
                store: store.library, incoming: incoming, processed: processed, reviewCopies: copies)
            #expect(locator.bytes(sha256: sha, relativePath: "den/IMG_1.jpg") == Array(original))

            // `pipeline.after = "move"` put it under processed/.
            try FileManager.default.createDirectory(
                at: processed.appendingPathComponent("den"), withIntermediateDirectories: true)
            try FileManager.default.moveItem(
                at: incoming.appendingPathComponent("den/IMG_1.jpg"),
                to: processed.appendingPathComponent("den/IMG_1.jpg"))
            #expect(locator.bytes(sha256: sha, relativePath: "den/IMG_1.jpg") == Array(original))

            // The phone reused the name: the file there is another photo, and only the copy review/ kept is this one.
            _ = try writeFakePhoto("den/IMG_1.jpg", in: processed, bytes: 5000)
            #expect(locator.original(sha256: sha, relativePath: "den/IMG_1.jpg") == nil)
            #expect(locator.bytes(sha256: sha, relativePath: "den/IMG_1.jpg") == nil)
            let copy = Array("an upright copy".utf8)
            try Data(copy).write(to: locator.reviewCopy(sha256: sha))
            #expect(locator.bytes(sha256: sha, relativePath: "den/IMG_1.jpg") == copy)
        }
    }

    @Test("Confined, a photo seen outside incoming/ and processed/ is not read, however its hash matches")
    func confinedReadsOnlyTheFolders() async throws {
        try await withTemporaryDirectory { root in
            let incoming = root.appendingPathComponent("incoming"), processed = root.appendingPathComponent("processed")
            let elsewhere = try writeFakePhoto("elsewhere/IMG_2.jpg", in: root)
            let bytes = Array(try Data(contentsOf: elsewhere))
            let sha = SHA256.hex(of: bytes)
            let store = try Store.open(path: root.appendingPathComponent("shelfd.db").path)
            _ = try store.queue.recordSighting(
                path: elsewhere.path, relativePath: "IMG_2.jpg", sha256: sha, size: Int64(bytes.count),
                mtime: 0, syncConflict: false, provider: "gemini", now: Date())
            let locator = PhotoLocator(
                store: store.library, incoming: incoming, processed: processed,
                reviewCopies: root.appendingPathComponent("review/photos"))
            #expect(locator.bytes(sha256: sha, relativePath: "IMG_2.jpg") == bytes)
            #expect(locator.bytes(sha256: sha, relativePath: "IMG_2.jpg", confined: true) == nil)
        }
    }
}
