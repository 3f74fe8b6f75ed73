import ShelfTesting
import Testing
@testable import ShelfImaging

@Suite struct JPEGMarkersTests {
    @Test("Finds the end marker of a whole JPEG, not of a segment's payload")
    func endOfImage() {
        let jpeg = JPEGFactory.shelf(width: 64, height: 48)
        #expect(JPEGMarkers.reachesEndOfImage(jpeg))
        #expect(!JPEGMarkers.reachesEndOfImage(Array(jpeg.dropLast(2))))
        #expect(!JPEGMarkers.reachesEndOfImage(Array(jpeg.dropLast(1))))
        // An APP2 segment holding FF D9 (as an EXIF thumbnail does) must not count as the end.
        let withThumbnailEnd = Array(jpeg[..<2]) + [0xFF, 0xE2, 0x00, 0x04, 0xFF, 0xD9] + Array(jpeg[2...])
        #expect(JPEGMarkers.reachesEndOfImage(withThumbnailEnd))
        #expect(!JPEGMarkers.reachesEndOfImage(Array(withThumbnailEnd.prefix(withThumbnailEnd.count / 2))))
    }

    @Test("Lists the header segments up to the first scan")
    func headerSegments() {
        let jpeg = JPEGFactory.withOrientation(JPEGFactory.shelf(width: 64, height: 48), 6)
        let markers = JPEGMarkers.headerSegments(of: jpeg).map(\.marker)
        #expect(markers.first == 0xE1) // the EXIF segment, inserted after SOI
        #expect(markers.contains(0xC0)) // SOF0
        #expect(!markers.contains(0xDA))
    }

    @Test("Never crashes on random bytes")
    func fuzz() {
        var random = SeededGenerator(seed: 3)
        for _ in 0..<1000 {
            let noise = (0..<Int.random(in: 0..<300, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            for bytes in [noise, [0xFF, 0xD8] + noise, [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02] + noise] {
                _ = JPEGMarkers.reachesEndOfImage(bytes)
                #expect(JPEGMarkers.headerSegments(of: bytes).allSatisfy { $0.payload.upperBound <= bytes.count })
            }
        }
    }
}
