/// What a file is, judged by its first bytes (magic numbers), never by its name.
package enum ImageFormat: String, Sendable, Codable {
    case jpeg, png, heic, webp, gif, tiff, unknown

    /// Recognises the format from the first bytes of a file. Anything not recognised is `.unknown`.
    package static func sniff(_ bytes: some Collection<UInt8>) -> ImageFormat {
        let head = Array(bytes.prefix(64))
        func starts(with magic: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + magic.count && Array(head[offset..<offset + magic.count]) == magic
        }
        if starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(with: [0x89, 0x50, 0x4E, 0x47]) { return .png }
        if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) { return .webp }
        if starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8)) { return .gif }
        if starts(with: [0x49, 0x49, 0x2A, 0x00]) || starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if ftypBrands(head).contains(where: heifBrands.contains) { return .heic }
        return .unknown
    }

    package var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .heic: "image/heic"
        case .webp: "image/webp"
        case .gif: "image/gif"
        case .tiff: "image/tiff"
        case .unknown: "application/octet-stream"
        }
    }

    /// The name a person knows the format by, for messages.
    package var displayName: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .heic: "HEIC/HEIF"
        case .webp: "WebP"
        case .gif: "GIF"
        case .tiff: "TIFF"
        case .unknown: "unknown"
        }
    }

    /// ISO base media brands of HEIF still images (HEIC, AVIF and their sequence variants).
    private static let heifBrands: Set<String> = ["heic", "heix", "mif1", "msf1", "heim", "heis", "hevc", "avif"]

    /// The major and compatible brands of a leading `ftyp` box (ISO/IEC 14496-12), as far as `head` holds them.
    /// Empty when the bytes do not start with an `ftyp` box. Also used to recognise MP4/QuickTime videos.
    package static func ftypBrands(_ head: [UInt8]) -> [String] {
        guard head.count >= 12, Array(head[4..<8]) == Array("ftyp".utf8) else { return [] }
        let boxSize = head[0..<4].reduce(0) { $0 << 8 | Int($1) }
        let end = min(head.count, max(boxSize, 12))
        var brands = [String(decoding: head[8..<12], as: UTF8.self)]
        var offset = 16 // skips minor_version
        while offset + 4 <= end {
            brands.append(String(decoding: head[offset..<offset + 4], as: UTF8.self))
            offset += 4
        }
        return brands
    }
}
