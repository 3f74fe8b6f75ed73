import ShelfImaging
@testable import ShelfOCR
import Testing

/// The detector's second look: where most of the print it found is small, it reads the picture again at its own size
/// and adds the lines it missed.
@Suite("Looking again where the print is small", .serialized)
struct SmallPrintTests {
    /// Left to right, as Fixtures/small-print.jpg shows them (scripts/make-ocr-fixtures.sh).
    static let titles = [
        "Middlemarch", "The Trial", "Persuasion", "Siddhartha", "The Bell Jar", "Lolita", "Rebecca", "Ulysses",
        "Cannery Row", "Catch-22", "Dracula", "Frankenstein", "The Hobbit", "Walden", "Beloved", "Moby-Dick",
        "Jane Eyre", "Hamlet", "The Stranger", "Candide", "Dubliners", "Emma", "Kindred", "Solaris",
    ]

    static func titlesRead(in lines: [TextLine]) -> [String] {
        titles.filter { title in
            lines.contains { PPOCRReaderTests.plain($0.text).contains(PPOCRReaderTests.plain(title)) }
        }
    }

    @Test("Titles in print too small for the detector's size are read by the second look at the picture's own size")
    func secondLookReadsSmallPrint() async throws {
        let image = try PPOCRReaderTests.photo("Tests/ShelfOCRTests/Fixtures/small-print.jpg")
        // At 900 pixels (the picture is 2,400 wide) the lettering is about 4 pixels high, under what the detector
        // finds, as a real shelf's small print is at the detector's usual size: it finds a few lines.
        let side = 900
        let first = try await PPOCRReaderTests.engine.lines(in: image, detectorSide: side, lookCloser: false)
        let both = try await PPOCRReaderTests.engine.lines(in: image, detectorSide: side)
        let missed = Self.titlesRead(in: first), read = Self.titlesRead(in: both)
        #expect(missed.count <= Self.titles.count / 2, "the first look alone read \(missed)")
        #expect(
            read.count >= 2 * missed.count && read.count >= Self.titles.count * 3 / 4, "read \(read) of \(Self.titles)")
        // What the first look found is kept as it was, and nothing is found twice.
        let found = try await PPOCRReaderTests.engine.run { models throws(OCRError) in
            var closerLook = Duration.zero
            return (
                first: try PPOCRReader.detect(
                    image, model: models.detector, side: side, lookCloser: false, closerLook: &closerLook),
                both: try PPOCRReader.detect(
                    image, model: models.detector, side: side, lookCloser: true, closerLook: &closerLook),
                closerLook: closerLook
            )
        }.get()
        #expect(found.both.count > found.first.count)
        #expect(found.closerLook > .zero, "the second look's time is told apart")
        #expect(found.first.allSatisfy(found.both.contains))
        for (i, frame) in found.both.enumerated() {
            #expect(
                !found.both[(i + 1)...].contains { $0.overlaps(frame) }, "a line at \(frame.centre) was found twice")
        }
    }

    @Test("A picture of large print is read once, as at the detector's own size")
    func largePrintIsReadOnce() async throws {
        let image = try PPOCRReaderTests.photo("Tests/ShelfOCRTests/Fixtures/tall-spines.jpg")
        let first = try await PPOCRReaderTests.engine.lines(in: image, detectorSide: 1024, lookCloser: false)
        #expect(!first.isEmpty)
        #expect(try await PPOCRReaderTests.engine.lines(in: image, detectorSide: 1024) == first)
    }

    @Test("The second look covers the small print with its neighbours, and only where most of the print is small")
    func region() throws {
        func line(x: Double, y: Double, thickness: Double) -> LineFrame {
            LineFrame(origin: SIMD2(x, y), along: SIMD2(0, 200), across: SIMD2(-thickness, 0))
        }
        let small = (0..<6).map { line(x: 500 + 40 * Double($0), y: 300, thickness: 24) }
        let large = (0..<6).map { line(x: 1200 + 80 * Double($0), y: 300, thickness: 90) }
        // At a scale of 0.5 the small lines are 12 map pixels thick, the large 45.
        let region = try #require(PPOCRReader.smallPrintRegion(small + large, scale: 0.5, width: 2400, height: 1800))
        #expect(region.x <= 476 - 200 && region.x + region.width >= 700 + 200, "\(region)")
        #expect(region.y <= 100 && region.y + region.height >= 700, "\(region)")
        #expect(region.x + region.width < 1200, "the large print is not looked at again: \(region)")
        #expect(
            PPOCRReader.smallPrintRegion(Array(small.prefix(2)) + large, scale: 0.5, width: 2400, height: 1800) == nil)
        #expect(
            PPOCRReader.smallPrintRegion(small + large + large + large, scale: 0.5, width: 2400, height: 1800) == nil)
        #expect(PPOCRReader.smallPrintRegion(small, scale: 0.9, width: 2400, height: 1800) == nil)
    }
}
