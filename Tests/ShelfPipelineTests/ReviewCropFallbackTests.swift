import Foundation
import Logging
import ShelfCore
import ShelfDigest
import ShelfOutputs
@testable import ShelfStore
import ShelfTesting
import Testing

/// One open review item whose original is nowhere to be read, and the image a shared store kept of it.
private struct StoredImageOnly: LibraryStore {
    let item: ReviewItem
    let image: [UInt8]?

    func entries() throws -> [LibraryDocument.Entry] { [] }
    func openReviewItems() throws -> [ReviewItem] { [item] }
    func photoLocations(sha256: String) throws -> [String] { ["/nonexistent/incoming/\(item.photo.path)"] }
    func photoImage(sha256: String) throws -> [UInt8]? { image }
    // Decisions are not this test's concern.
    func reviewItem(_ id: String) throws -> ReviewItem { item }
    func decidedReadings(sha256: String) throws -> Set<String> { [] }
    func decide(_ id: String, _ verdict: ReviewVerdict, now: Date) throws -> ReviewResolution {
        ReviewResolution(id: id, photoSHA256: item.photo.sha256, book: nil, detail: "rejected")
    }
}

@Suite("Review crops where the original cannot be read")
struct ReviewCropFallbackTests {
    @Test(
        "A spine is cut from the stored provider-ready image; without one the item has no crop",
        arguments: [true, false])
    func cropFromTheStoredImage(stored: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-crop-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = JPEGFactory.shelf(width: 640, height: 480, seed: 90)
        let sha = SHA256.hex(of: original)
        // What a shared store keeps: the photo upright and scaled down, a different file from the original.
        let image = JPEGFactory.shelf(width: 320, height: 240, seed: 90)
        let book = Book(
            title: "Smudged Spine", author: nil, isbn13: nil, isbn10: nil, confidence: 0.3,
            box: Box(x1: 0.60, y1: 0.15, x2: 0.63, y2: 0.85), status: .needsReview, source: "gemini")
        let item = ReviewItem(
            id: "abc123", photo: .init(path: "den/IMG_1.jpg", sha256: sha), book: book, createdAt: Date())
        let files = LibraryFiles(
            libraryFile: folder.appendingPathComponent("library.json"),
            review: folder.appendingPathComponent("review"),
            processed: folder.appendingPathComponent("processed"),
            filesLock: folder.appendingPathComponent("files.lock"),
            store: StoredImageOnly(item: item, image: stored ? image : nil), logger: Logger(label: "test"))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        files.update()

        #expect(FileManager.default.fileExists(atPath: files.documentURL(id: item.id).path))
        let crop = FileManager.default.contents(atPath: files.cropURL(id: item.id).path)
        #expect((crop != nil) == stored)
        #expect(files.document(item).crop == (stored ? "abc123.jpg" : nil))
        if let crop {
            // The boxed spine of the 320×240 image, with the small margin: about 16×180 pixels, turned to read across.
            let decoded = try #require(JPEGFactory.decode(Array(crop)))
            #expect(
                (160...200).contains(decoded.width) && (10...40).contains(decoded.height),
                "\(decoded.width)×\(decoded.height)")
        }
    }
}
