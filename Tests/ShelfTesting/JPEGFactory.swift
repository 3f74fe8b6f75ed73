internal import CHeif
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
        paint(columns: 0..<width, rows: 0..<height, random.color()) // the wall
        let shelfTop = height * 9 / 10
        paint(columns: 0..<width, rows: shelfTop..<height, random.color()) // the shelf board
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
        let tiff: [UInt8] =
            [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08] // "MM", 42, IFD0 at offset 8
            + [0x00, 0x01] // one entry
            + [0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01] // orientation, SHORT, count 1
            + [UInt8(truncatingIfNeeded: orientation >> 8), UInt8(truncatingIfNeeded: orientation), 0x00, 0x00]
            + [0x00, 0x00, 0x00, 0x00] // no next IFD
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
            if marker == 0xC0 { // SOF0: length (2), precision (1), height (2), width (2), components…
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

    /// The colours of `quadrants`' four corners as displayed.
    package static let topLeft: [UInt8] = [220, 30, 30], topRight: [UInt8] = [30, 200, 30]
    package static let bottomLeft: [UInt8] = [30, 30, 220], bottomRight: [UInt8] = [230, 220, 40]

    /// RGB pixels that, once turned by EXIF `orientation`, show four coloured quadrants: `topLeft` (red) top-left,
    /// `topRight` (green), `bottomLeft` (blue), `bottomRight` (yellow). `width`×`height` is the displayed size;
    /// the stored one is returned (swapped for 5…8). Which stored corner each displayed corner comes from is
    /// written out per orientation from the EXIF definitions, independently of the code under test.
    package static func quadrantPixels(width: Int, height: Int, orientation: Int = 1) -> (
        pixels: [UInt8], width: Int, height: Int
    ) {
        // Stored corner of the displayed top-left, top-right, bottom-left, bottom-right (0 TL, 1 TR, 2 BL, 3 BR).
        let storedCorner: [Int] =
            switch orientation {
            case 2: [1, 0, 3, 2] // mirrored: left and right swapped
            case 3: [3, 2, 1, 0] // upside down
            case 4: [2, 3, 0, 1] // mirrored top to bottom
            case 5: [0, 2, 1, 3] // transposed
            case 6: [2, 0, 3, 1] // stored turned 90° anticlockwise: the display's top-left is the stored bottom-left
            case 7: [3, 1, 2, 0] // transversed
            case 8: [1, 3, 0, 2] // stored turned 90° clockwise
            default: [0, 1, 2, 3]
            }
        let swapped = orientation >= 5
        let storedWidth = swapped ? height : width, storedHeight = swapped ? width : height
        var colorOfCorner = [[UInt8]](repeating: [], count: 4)
        for (displayed, color) in [topLeft, topRight, bottomLeft, bottomRight].enumerated() {
            colorOfCorner[storedCorner[displayed]] = color
        }
        var pixels = [UInt8](repeating: 0, count: storedWidth * storedHeight * 3)
        pixels.withUnsafeMutableBufferPointer { out in
            for y in 0..<storedHeight {
                for x in 0..<storedWidth {
                    let corner = (y < storedHeight / 2 ? 0 : 2) + (x < storedWidth / 2 ? 0 : 1)
                    let color = colorOfCorner[corner], i = (y * storedWidth + x) * 3
                    out[i] = color[0]; out[i + 1] = color[1]; out[i + 2] = color[2]
                }
            }
        }
        return (pixels, storedWidth, storedHeight)
    }

    /// A JPEG of `quadrantPixels`, tagged with `orientation` in EXIF (none for 1).
    package static func quadrants(width: Int = 320, height: Int = 200, orientation: Int = 1) -> [UInt8] {
        let (pixels, w, h) = quadrantPixels(width: width, height: height, orientation: orientation)
        let jpeg = compress(pixels, width: w, height: h, quality: 90)
        return orientation == 1 ? jpeg : withOrientation(jpeg, orientation)
    }

    /// A detailed shelf, for meaningful encoded sizes: spines of varied colours and widths carrying rows of
    /// small "letters", wood grain on the board, a gradient wall, and sensor noise over everything.
    package static func texturedPixels(width: Int, height: Int, seed: Int = 0) -> [UInt8] {
        var random = SeededGenerator(seed: UInt64(bitPattern: Int64(seed)) &+ 7)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let wall = random.color(), board = random.color()
        let shelfTop = height * 17 / 20
        // Spine columns: colour, letter colour, top edge.
        var spineAt = [Int](repeating: -1, count: width)
        var spines: [(color: [UInt8], ink: [UInt8], top: Int)] = []
        var x = width / 40
        while x < width - width / 40 {
            let spineWidth = max(4, width / 70 + Int(random.next() % UInt64(max(1, width / 35))))
            spines.append(
                (random.color(), random.color(), height / 12 + Int(random.next() % UInt64(max(1, height / 5)))))
            for column in x..<min(width, x + spineWidth) { spineAt[column] = spines.count - 1 }
            x += spineWidth + 2
        }
        let glyph = max(2, height / 240) // letter cell size
        pixels.withUnsafeMutableBufferPointer { out in
            var noise = random
            for y in 0..<height {
                for x in 0..<width {
                    var color: [UInt8]
                    if y >= shelfTop {
                        let grain = Int((x / 3 + y * 7 / 5) % 23) - 11
                        color = board.map { UInt8(clamping: Int($0) + grain) }
                    } else if spineAt[x] >= 0, y >= spines[spineAt[x]].top {
                        let spine = spines[spineAt[x]]
                        // Letters: a hashed on/off pattern on a grid, in bands across the spine.
                        let cell = (x / glyph) &* 73_856_093 ^ (y / glyph) &* 19_349_663 ^ spineAt[x] &* 83_492_791
                        let inBand = (y / (glyph * 6)) % 3 != 0
                        color = inBand && (cell >> 3) & 3 == 0 ? spine.ink : spine.color
                    } else {
                        let shade = y * 40 / max(1, shelfTop) - 20
                        color = wall.map { UInt8(clamping: Int($0) + shade) }
                    }
                    let n = noise.next()
                    let i = (y * width + x) * 3
                    out[i] = UInt8(clamping: Int(color[0]) + Int(n & 15) - 8)
                    out[i + 1] = UInt8(clamping: Int(color[1]) + Int((n >> 8) & 15) - 8)
                    out[i + 2] = UInt8(clamping: Int(color[2]) + Int((n >> 16) & 15) - 8)
                }
            }
        }
        return pixels
    }

    /// A JPEG of `texturedPixels`, optionally tagged with an EXIF orientation.
    package static func textured(width: Int, height: Int, seed: Int = 0, quality: Int = 92, orientation: Int = 1)
        -> [UInt8]
    {
        let jpeg = compress(
            texturedPixels(width: width, height: height, seed: seed), width: width, height: height, quality: quality)
        return orientation == 1 ? jpeg : withOrientation(jpeg, orientation)
    }

    /// A JPEG of the given RGB pixels.
    package static func jpeg(rgb pixels: [UInt8], width: Int, height: Int, quality: Int = 90) -> [UInt8] {
        compress(pixels, width: width, height: height, quality: quality)
    }

    /// Decodes a JPEG to RGB at full size with TurboJPEG, for checking what was produced; nil when it does not decode.
    package static func decode(_ jpeg: [UInt8]) -> (pixels: [UInt8], width: Int, height: Int)? {
        guard let handle = tjInitDecompress() else { return nil }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace) == 0
        else { return nil }
        var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height) * 3)
        guard tjDecompress2(handle, jpeg, UInt(jpeg.count), &pixels, width, 0, height, Int32(TJPF_RGB.rawValue), 0) == 0
        else { return nil }
        return (pixels, Int(width), Int(height))
    }

    /// Whether this libheif can write HEVC (Debian's links x265): when not, `heic` returns nil.
    package static var canEncodeHEIC: Bool {
        guard let heif = shelf_heif()?.pointee else { return false }
        return heif.heif_have_encoder_for_format(heif_compression_HEVC) != 0
    }

    /// A HEIC (HEVC in HEIF) of the given RGB pixels, made in-process with libheif and x265. `orientation`
    /// (EXIF numbering) becomes irot/imir boxes, which readers must apply. Nil when no HEVC encoder is available.
    package static func heic(rgb pixels: [UInt8], width: Int, height: Int, quality: Int = 80, orientation: Int = 1)
        -> [UInt8]?
    {
        guard canEncodeHEIC, let heif = shelf_heif()?.pointee, let context = heif.heif_context_alloc() else {
            return nil
        }
        defer { heif.heif_context_free(context) }
        var encoder: OpaquePointer?
        guard heif.heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder).code == heif_error_Ok,
            let encoder
        else { return nil }
        defer { heif.heif_encoder_release(encoder) }
        _ = heif.heif_encoder_set_lossy_quality(encoder, Int32(quality))
        var image: OpaquePointer?
        guard
            heif.heif_image_create(
                Int32(width), Int32(height), heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image
            ).code
                == heif_error_Ok, let image
        else { return nil }
        defer { heif.heif_image_release(image) }
        guard
            heif.heif_image_add_plane(image, heif_channel_interleaved, Int32(width), Int32(height), 8).code
                == heif_error_Ok
        else { return nil }
        var stride: Int32 = 0
        guard let plane = heif.heif_image_get_plane(image, heif_channel_interleaved, &stride) else { return nil }
        pixels.withUnsafeBufferPointer { source in
            for y in 0..<height {
                (plane + y * Int(stride)).update(from: source.baseAddress! + y * width * 3, count: width * 3)
            }
        }
        let options = heif.heif_encoding_options_alloc()
        defer { heif.heif_encoding_options_free(options) }
        options?.pointee.image_orientation = heif_orientation(rawValue: UInt32(orientation))
        guard heif.heif_context_encode_image(context, image, encoder, options, nil).code == heif_error_Ok else {
            return nil
        }
        final class Sink { var bytes: [UInt8] = [] }
        let sink = Sink()
        var writer = heif_writer(
            writer_api_version: 1,
            write: { _, data, size, userdata in
                let sink = Unmanaged<Sink>.fromOpaque(userdata!).takeUnretainedValue()
                sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size))
                let success = UnsafeRawPointer(StaticString("Success").utf8Start).assumingMemoryBound(to: CChar.self)
                return heif_error(code: heif_error_Ok, subcode: heif_suberror_Unspecified, message: success)
            })
        let status = withExtendedLifetime(sink) {
            heif.heif_context_write(context, &writer, Unmanaged.passUnretained(sink).toOpaque())
        }
        return status.code == heif_error_Ok ? sink.bytes : nil
    }

    private static func compress(
        _ pixels: [UInt8], width: Int, height: Int, quality: Int,
        pixelFormat: Int32 = Int32(TJPF_RGB.rawValue)
    ) -> [UInt8] {
        guard let handle = tjInitCompress() else {
            preconditionFailure("tjInitCompress: \(String(cString: tjGetErrorStr2(nil)))")
        }
        defer { tjDestroy(handle) }
        var buffer: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let status = tjCompress2(
            handle, pixels, Int32(width), 0, Int32(height), pixelFormat,
            &buffer, &size, Int32(TJSAMP_420.rawValue), Int32(quality), 0)
        defer { tjFree(buffer) }
        guard status == 0, let buffer else {
            preconditionFailure("tjCompress2: \(String(cString: tjGetErrorStr2(handle)))")
        }
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
        return [
            UInt8(truncatingIfNeeded: bits), UInt8(truncatingIfNeeded: bits >> 8),
            UInt8(truncatingIfNeeded: bits >> 16),
        ]
    }
}
