/// The EXIF orientation tag (0x0112) of a JPEG. TurboJPEG ignores it, so we read it ourselves.
/// Garbage in gives nil out: every offset is checked before it is followed.
package enum EXIFOrientation {
    private static let exifHeader: [UInt8] = Array("Exif".utf8) + [0, 0]
    private static let orientationTag = 0x0112
    private static let shortType = 3

    /// The orientation (1…8) in the JPEG's first EXIF APP1 segment; nil when there is none or it is unreadable.
    package static func read(fromJPEG jpeg: [UInt8]) -> Int? {
        for segment in JPEGMarkers.headerSegments(of: jpeg) where segment.marker == JPEGMarkers.app1 {
            let payload = jpeg[segment.payload]
            guard payload.starts(with: exifHeader) else { continue }
            return read(fromTIFF: Array(payload.dropFirst(exifHeader.count)))
        }
        return nil
    }

    /// The orientation (1…8) in IFD0 of an EXIF TIFF structure (the APP1 payload after `Exif\0\0`).
    package static func read(fromTIFF tiff: [UInt8]) -> Int? {
        let bigEndian: Bool
        switch tiff.uint16(at: 0) {
        case 0x4949: bigEndian = false      // "II", Intel
        case 0x4D4D: bigEndian = true       // "MM", Motorola
        default: return nil
        }
        guard tiff.uint16(at: 2, bigEndian: bigEndian) == 42,
              let ifd0 = tiff.uint32(at: 4, bigEndian: bigEndian),
              let entryCount = tiff.uint16(at: ifd0, bigEndian: bigEndian) else { return nil }
        for entry in 0..<entryCount {
            let offset = ifd0 + 2 + entry * 12      // tag (2), type (2), count (4), value or offset (4)
            guard let tag = tiff.uint16(at: offset, bigEndian: bigEndian) else { return nil }
            guard tag == orientationTag else { continue }
            guard tiff.uint16(at: offset + 2, bigEndian: bigEndian) == shortType,
                  let value = tiff.uint16(at: offset + 8, bigEndian: bigEndian),
                  (1...8).contains(value) else { return nil }
            return value
        }
        return nil
    }
}
