import ShelfImaging
import ShelfTesting
import Testing

@Suite struct EXIFOrientationTests {
    /// An EXIF TIFF structure with some entries before the orientation, in either byte order.
    static func tiff(orientation: Int, littleEndian: Bool) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] {
            littleEndian ? [UInt8(value & 0xFF), UInt8(value >> 8)] : [UInt8(value >> 8), UInt8(value & 0xFF)]
        }
        func u32(_ value: Int) -> [UInt8] {
            littleEndian ? u16(value & 0xFFFF) + u16(value >> 16) : u16(value >> 16) + u16(value & 0xFFFF)
        }
        let header = (littleEndian ? Array("II".utf8) : Array("MM".utf8)) + u16(42) + u32(8)
        let make = u16(0x010F) + u16(2) + u32(4) + Array("ACME".utf8) // Make, ASCII, fits in the value
        let orientation = u16(0x0112) + u16(3) + u32(1) + u16(orientation) + u16(0)
        return header + u16(2) + make + orientation + u32(0)
    }

    @Test("Reads the orientation in both byte orders", arguments: [false, true])
    func byteOrders(littleEndian: Bool) {
        for orientation in 1...8 {
            #expect(
                EXIFOrientation.read(fromTIFF: Self.tiff(orientation: orientation, littleEndian: littleEndian))
                    == orientation)
        }
    }

    @Test("Ignores an orientation outside 1…8 and a JPEG without EXIF")
    func outOfRange() {
        #expect(EXIFOrientation.read(fromTIFF: Self.tiff(orientation: 0, littleEndian: true)) == nil)
        #expect(EXIFOrientation.read(fromTIFF: Self.tiff(orientation: 9, littleEndian: false)) == nil)
        #expect(EXIFOrientation.read(fromJPEG: JPEGFactory.shelf(width: 32, height: 32)) == nil)
        #expect(
            EXIFOrientation.read(fromJPEG: JPEGFactory.withOrientation(JPEGFactory.shelf(width: 32, height: 32), 7))
                == 7)
    }

    @Test("Never crashes or reads out of bounds on random bytes")
    func fuzzRandomBytes() {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<1000 {
            let noise = (0..<Int.random(in: 0..<300, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            let tiffHeader: [UInt8] =
                Bool.random(using: &random) ? [0x49, 0x49, 0x2A, 0x00] : [0x4D, 0x4D, 0x00, 0x2A]
            let exifSegment: [UInt8] =
                [
                    0xFF, 0xD8, 0xFF, 0xE1, UInt8.random(in: 0...255, using: &random),
                    UInt8.random(in: 0...255, using: &random),
                ] + Array("Exif".utf8) + [0, 0]
            for bytes in [noise, tiffHeader + noise, exifSegment + tiffHeader + noise, [0xFF, 0xD8] + noise] {
                let fromTIFF = EXIFOrientation.read(fromTIFF: bytes)
                let fromJPEG = EXIFOrientation.read(fromJPEG: bytes)
                #expect(fromTIFF.map { (1...8).contains($0) } ?? true)
                #expect(fromJPEG.map { (1...8).contains($0) } ?? true)
            }
        }
    }

    @Test("Never crashes on a real EXIF segment with random bytes overwritten")
    func fuzzMutatedSegment() {
        let original = Array(JPEGFactory.withOrientation(JPEGFactory.shelf(width: 32, height: 32), 3).prefix(80))
        var random = SeededGenerator(seed: 11)
        for _ in 0..<1000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<48, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            let orientation = EXIFOrientation.read(fromJPEG: bytes)
            #expect(orientation.map { (1...8).contains($0) } ?? true)
        }
    }
}
