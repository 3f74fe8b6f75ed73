import CExif

/// The EXIF orientation tag (0x0112) of a JPEG. TurboJPEG ignores it; libexif reads the TIFF structure.
/// Garbage in gives nil out.
package enum EXIFOrientation {
    private static let exifHeader: [UInt8] = Array("Exif".utf8) + [0, 0]

    /// The orientation (1…8) in the JPEG's first EXIF APP1 segment; nil when there is none or it is unreadable.
    /// The segment is found by `JPEGMarkers`, which also walks past other segments before it (libexif stops at
    /// the first segment that is not an APPn, such as a DQT written ahead of the EXIF one).
    package static func read(fromJPEG jpeg: [UInt8]) -> Int? {
        for segment in JPEGMarkers.headerSegments(of: jpeg) where segment.marker == JPEGMarkers.app1 {
            let payload = jpeg[segment.payload]
            guard payload.starts(with: exifHeader) else { continue }
            return read(exif: Array(payload))
        }
        return nil
    }

    /// The orientation (1…8) in IFD0 of an EXIF TIFF structure (the APP1 payload after `Exif\0\0`).
    package static func read(fromTIFF tiff: [UInt8]) -> Int? {
        read(exif: exifHeader + tiff)
    }

    /// `exif` starts with `Exif\0\0`, as libexif expects.
    private static func read(exif: [UInt8]) -> Int? {
        guard let data = exif_data_new() else { return nil }
        defer { exif_data_unref(data) }
        // Read the entries as they are written: no "fixing" that would add, drop or convert entries.
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        exif.withUnsafeBufferPointer { exif_data_load_data(data, $0.baseAddress, UInt32($0.count)) }
        guard let entry = shelf_exif_ifd0_entry(data, EXIF_TAG_ORIENTATION)?.pointee,
            entry.format == EXIF_FORMAT_SHORT, entry.components >= 1, entry.size >= 2, let bytes = entry.data
        else { return nil }
        let value = Int(exif_get_short(bytes, exif_data_get_byte_order(data)))
        return (1...8).contains(value) ? value : nil
    }
}
