import Testing
import ShelfCore

@Suite struct ImageFormatTests {
    static let samples: [(name: String, bytes: [UInt8], format: ImageFormat)] = [
        ("JPEG", [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8), .jpeg),
        ("PNG", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], .png),
        ("WebP", Array("RIFF".utf8) + [0x24, 0x00, 0x00, 0x00] + Array("WEBPVP8 ".utf8), .webp),
        ("HEIC", ftyp(major: "heic", compatible: ["mif1", "heic"]), .heic),
        ("HEIF via a compatible brand", ftyp(major: "abcd", compatible: ["mif1"]), .heic),
        ("AVIF", ftyp(major: "avif", compatible: ["mif1", "miaf"]), .heic),
        ("GIF", Array("GIF89a".utf8) + [0x01, 0x00], .gif),
        ("TIFF, little-endian", [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00], .tiff),
        ("TIFF, big-endian", [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08], .tiff),
        ("an MP4 video", ftyp(major: "isom", compatible: ["isom", "mp41"]), .unknown),
        ("text", Array("hello, this is not a photo\n".utf8), .unknown),
        ("two bytes of a JPEG", [0xFF, 0xD8], .unknown),
        ("empty", [], .unknown),
    ]

    static func ftyp(major: String, compatible: [String]) -> [UInt8] {
        let size = 16 + 4 * compatible.count
        return [0, 0, 0, UInt8(size)] + Array("ftyp\(major)".utf8) + [0, 0, 0, 0] + Array(compatible.joined().utf8)
    }

    @Test("Recognises formats by their magic numbers", arguments: samples)
    func sniffsMagicNumbers(_ sample: (name: String, bytes: [UInt8], format: ImageFormat)) {
        #expect(ImageFormat.sniff(sample.bytes) == sample.format, "\(sample.name)")
        #expect(ImageFormat.sniff(sample.bytes[...]) == sample.format, "\(sample.name), as a slice")
    }

    @Test("Gives each format its MIME type")
    func mimeTypes() {
        #expect(ImageFormat.jpeg.mimeType == "image/jpeg")
        #expect(ImageFormat.png.mimeType == "image/png")
        #expect(ImageFormat.heic.mimeType == "image/heic")
        #expect(ImageFormat.webp.mimeType == "image/webp")
        #expect(ImageFormat.unknown.mimeType == "application/octet-stream")
    }
}
