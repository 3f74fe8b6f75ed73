internal import CTurboJPEG

/// Real JPEG files for tests, made with TurboJPEG: no fixtures on disk.
package enum JPEGFactory {
    /// A real JPEG of a synthetic "shelf": vertical coloured stripes (spines) on a background; `seed` varies the colours so different seeds give different bytes/sha256.
    package static func shelf(width: Int = 640, height: Int = 480, seed: Int = 0, quality: Int = 85) -> [UInt8] {
        precondition(width > 0 && height > 0, "JPEGFactory.shelf: width and height must be positive")
        var random = SeededGenerator(seed: UInt64(bitPattern: Int64(seed)))
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        func paint(columns: Range<Int>, rows: Range<Int>, _ color: [UInt8]) {
            for y in rows {
                for x in columns {
                    let index = (y * width + x) * 3
                    pixels[index] = color[0]; pixels[index + 1] = color[1]; pixels[index + 2] = color[2]
                }
            }
        }
        paint(columns: 0..<width, rows: 0..<height, random.color())          // the wall
        let shelfTop = height * 9 / 10
        paint(columns: 0..<width, rows: shelfTop..<height, random.color())   // the shelf board
        // Spines: stripes of random width, height and colour standing on the board.
        var x = width / 20
        while x < width - width / 20 {
            let spineWidth = max(1, width / 80 + Int(random.next() % UInt64(max(1, width / 30))))
            let top = height / 10 + Int(random.next() % UInt64(max(1, height / 4)))
            paint(columns: x..<min(x + spineWidth, width), rows: min(top, shelfTop)..<shelfTop, random.color())
            x += spineWidth + 1
        }
        return compress(pixels, width: width, height: height, quality: quality)
    }

    /// The same JPEG with an APP1 EXIF segment carrying the given orientation inserted after SOI.
    /// The EXIF TIFF structure is big-endian ("MM") with one IFD0 entry, tag 0x0112 (SHORT).
    package static func withOrientation(_ jpeg: [UInt8], _ orientation: Int) -> [UInt8] {
        precondition(jpeg.starts(with: [0xFF, 0xD8]), "JPEGFactory.withOrientation: not a JPEG")
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08]   // "MM", 42, IFD0 at offset 8
            + [0x00, 0x01]                                                    // one entry
            + [0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01]                // orientation, SHORT, count 1
            + [UInt8(truncatingIfNeeded: orientation >> 8), UInt8(truncatingIfNeeded: orientation), 0x00, 0x00]
            + [0x00, 0x00, 0x00, 0x00]                                        // no next IFD
        let payload = Array("Exif".utf8) + [0x00, 0x00] + tiff
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Array(jpeg[..<2]) + segment + Array(jpeg[2...])
    }

    /// Cut to a fraction of its length (a truncated download).
    package static func truncated(_ jpeg: [UInt8], keeping fraction: Double = 0.5) -> [UInt8] {
        Array(jpeg.prefix(Int(Double(jpeg.count) * fraction)))
    }

    /// A JPEG whose header declares `width`×`height` (each 1…65500, libjpeg's limit) without the pixels being made:
    /// a small image is encoded and the dimensions in its SOF0 frame header are patched. The header reads correctly;
    /// the data does not decode to that size. For testing that oversized photos are refused on the header alone.
    package static func huge(width: Int, height: Int) -> [UInt8] {
        precondition((1...65500).contains(width) && (1...65500).contains(height), "JPEGFactory.huge: 1…65500 per side")
        var jpeg = shelf(width: 64, height: 48)
        var index = 2
        while index + 8 < jpeg.count, jpeg[index] == 0xFF {
            let marker = jpeg[index + 1]
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            if marker == 0xC0 {          // SOF0: length (2), precision (1), height (2), width (2), components…
                jpeg[index + 5] = UInt8(height >> 8); jpeg[index + 6] = UInt8(height & 0xFF)
                jpeg[index + 7] = UInt8(width >> 8); jpeg[index + 8] = UInt8(width & 0xFF)
                return jpeg
            }
            index += 2 + length
        }
        preconditionFailure("JPEGFactory.huge: TurboJPEG wrote no SOF0 segment")
    }

    /// A JPEG in the YCCK colour space (as made from CMYK pixels), which TurboJPEG 2.1 cannot decode to RGB.
    package static func cmyk(width: Int = 64, height: Int = 48) -> [UInt8] {
        let pixels = [UInt8](repeating: 0x40, count: width * height * 4)
        return compress(pixels, width: width, height: height, quality: 85, pixelFormat: Int32(TJPF_CMYK.rawValue))
    }

    private static func compress(_ pixels: [UInt8], width: Int, height: Int, quality: Int,
                                 pixelFormat: Int32 = Int32(TJPF_RGB.rawValue)) -> [UInt8] {
        guard let handle = tjInitCompress() else { preconditionFailure("tjInitCompress: \(String(cString: tjGetErrorStr2(nil)))") }
        defer { tjDestroy(handle) }
        var buffer: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let status = tjCompress2(handle, pixels, Int32(width), 0, Int32(height), pixelFormat,
                                 &buffer, &size, Int32(TJSAMP_420.rawValue), Int32(quality), 0)
        defer { tjFree(buffer) }
        guard status == 0, let buffer else { preconditionFailure("tjCompress2: \(String(cString: tjGetErrorStr2(handle)))") }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }
}

/// SplitMix64: reproducible randomness, so the same seed gives the same picture (or the same fuzz
/// input, replayable after a failure) on every machine.
package struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func color() -> [UInt8] {
        let bits = next()
        return [UInt8(truncatingIfNeeded: bits), UInt8(truncatingIfNeeded: bits >> 8), UInt8(truncatingIfNeeded: bits >> 16)]
    }
}
