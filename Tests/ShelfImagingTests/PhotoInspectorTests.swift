import Foundation
import ShelfCore
import ShelfImaging
import ShelfTesting
import Testing

@Suite struct PhotoInspectorTests {
    @Test("A generated JPEG inspects with its size, no orientation and its byte count")
    func generatedJPEG() throws {
        let jpeg = JPEGFactory.shelf(width: 640, height: 480)
        let info = try PhotoInspector.inspect(jpeg)
        #expect(info == PhotoInfo(format: .jpeg, width: 640, height: 480, orientation: 1, byteCount: jpeg.count))
        #expect(info.displayWidth == 640 && info.displayHeight == 480)
    }

    @Test("Different seeds make different files")
    func seedsDiffer() {
        #expect(JPEGFactory.shelf(seed: 1) != JPEGFactory.shelf(seed: 2))
        #expect(JPEGFactory.shelf(seed: 3) == JPEGFactory.shelf(seed: 3))
    }

    @Test("Reads the EXIF orientation; 5…8 swap the displayed width and height", arguments: 1...8)
    func orientation(_ orientation: Int) throws {
        let jpeg = JPEGFactory.withOrientation(JPEGFactory.shelf(width: 320, height: 200), orientation)
        let info = try PhotoInspector.inspect(jpeg)
        #expect(info.orientation == orientation)
        #expect(info.width == 320 && info.height == 200)
        let swapped = orientation >= 5
        #expect(info.displayWidth == (swapped ? 200 : 320))
        #expect(info.displayHeight == (swapped ? 320 : 200))
    }

    @Test("Refuses a truncated JPEG as unreadable", arguments: [0.1, 0.5, 0.9, 0.999])
    func truncatedJPEG(_ fraction: Double) {
        let jpeg = JPEGFactory.truncated(JPEGFactory.shelf(), keeping: fraction)
        let error = expectPhotoError(.unreadableImage) { try PhotoInspector.inspect(jpeg) }
        #expect(error?.message.contains("truncated or corrupt") == true)
    }

    @Test("Refuses a JPEG cut just before its end marker")
    func missingEndMarker() {
        let jpeg = Array(JPEGFactory.shelf().dropLast(2))
        let error = expectPhotoError(.unreadableImage) { try PhotoInspector.inspect(jpeg) }
        #expect(error?.message.contains("truncated or corrupt") == true)
    }

    @Test("Accepts zero padding and a trailer after the end marker")
    func dataAfterEndMarker() throws {
        let jpeg = JPEGFactory.shelf()
        #expect(try PhotoInspector.inspect(jpeg + [UInt8](repeating: 0, count: 512)).width == 640)
        #expect(try PhotoInspector.inspect(jpeg + Array("\0\0\0\u{18}ftypmp42 a motion photo".utf8)).width == 640)
    }

    @Test("Refuses a text file named .jpg, saying it is text")
    func textFile() {
        let text = Array("These are my notes about the books on the shelf.\n".utf8)
        let error = expectPhotoError(.unreadableImage) { try PhotoInspector.inspect(text) }
        #expect(error?.message.hasPrefix("not an image: starts with text") == true)
    }

    @Test("Refuses an empty file")
    func emptyFile() {
        let error = expectPhotoError(.unreadableImage) { try PhotoInspector.inspect([]) }
        #expect(error?.message.hasPrefix("empty file (0 bytes)") == true)
    }

    @Test("Refuses PNG as not supported yet, suggesting JPEG")
    func png() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 64)
        let error = expectPhotoError(.unsupportedFormat) { try PhotoInspector.inspect(png) }
        #expect(error?.message.hasPrefix("PNG photos are recognised but not supported yet; convert to JPEG") == true)
    }

    @Test("Refuses a HEIC that is only a file type box as unreadable, saying it is HEIC")
    func brokenHEIC() {
        // brands heic, mif1
        let fileType = [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
        let heic = fileType + [UInt8](repeating: 0, count: 64)
        let error = expectPhotoError(.unreadableImage) { try PhotoInspector.inspect(heic) }
        #expect(error?.message.hasPrefix("truncated or corrupt HEIC/HEIF") == true)
    }

    @Test("Refuses a 100-megapixel header before decoding anything")
    func decompressionBomb() {
        let bomb = JPEGFactory.huge(width: 10_000, height: 10_000)
        let error = expectPhotoError(.photoTooLarge) { try PhotoInspector.inspect(bomb) }
        #expect(error?.message.contains("10000×10000 = 100000000 pixels (100.0 MP)") == true)
        #expect(error?.message.contains("limit of 64000000 pixels (64.0 MP)") == true)
    }

    @Test("Honours a lower pixel limit")
    func customLimit() {
        let jpeg = JPEGFactory.shelf(width: 640, height: 480)
        expectPhotoError(.photoTooLarge) { try PhotoInspector.inspect(jpeg, maxPixels: 640 * 480 - 1) }
        #expect(throws: Never.self) { try PhotoInspector.inspect(jpeg, maxPixels: 640 * 480) }
    }

    @Test("Refuses a CMYK JPEG as not supported")
    func cmyk() {
        let error = expectPhotoError(.unsupportedFormat) { try PhotoInspector.inspect(JPEGFactory.cmyk()) }
        #expect(error?.message.hasPrefix("CMYK JPEGs") == true)
    }

    @Test("Never crashes on a JPEG with random bytes overwritten")
    func mutatedJPEGs() {
        let original = JPEGFactory.withOrientation(JPEGFactory.shelf(width: 64, height: 48), 6)
        for jpeg in mutations(of: original, count: 300, seed: 42, truncating: true) {
            do {
                let info = try PhotoInspector.inspect(jpeg)
                #expect((1...8).contains(info.orientation))
            } catch {
                #expect(error.disposition == .dead)
            }
        }
    }

    /// The photo from the shared data set (`SharedData`); nil when absent, and the test is then skipped.
    static let realPhotoURL = SharedData.file("data/library-dataset/one_shelf_example.jpg")

    @Test("Inspects the real phone photo of a shelf", .enabled(if: realPhotoURL != nil, "shared data set not found"))
    func realPhoto() throws {
        let url = try #require(Self.realPhotoURL)
        let info = try PhotoInspector.inspect(Array(try Data(contentsOf: url)))
        #expect(info.format == .jpeg)
        #expect(info.width == 4624 && info.height == 3468)
        #expect(info.orientation == 1) // its EXIF says 1 (top-left)
    }
}

/// `count` copies of `jpeg`, each with one to eight bytes overwritten at random and, when `truncating`, about
/// half of them cut short; the generator is seeded, so a failure comes back on the next run.
func mutations(of jpeg: [UInt8], count: Int, seed: UInt64, truncating: Bool = false) -> [[UInt8]] {
    var random = SeededGenerator(seed: seed)
    return (0..<count).map { _ in
        var mutated = jpeg
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
        }
        if truncating && Bool.random(using: &random) {
            mutated = Array(mutated.prefix(Int.random(in: 0...mutated.count, using: &random)))
        }
        return mutated
    }
}

/// Runs `body`, expecting a `PhotoError` with `code` and disposition `.dead`; returns it for further checks.
@discardableResult
func expectPhotoError<T>(
    _ code: PhotoError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> T
) -> PhotoError? {
    do {
        let result = try body()
        Issue.record("expected \(code.rawValue), got \(result)", sourceLocation: sourceLocation)
        return nil
    } catch let error as PhotoError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.disposition == .dead, sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a PhotoError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
