/// Reading a JPEG's marker structure in Swift, for what TurboJPEG does not report (where the EXIF segment is, the
/// end marker); hand-written because neither TurboJPEG nor libexif checks that a JPEG reaches its end marker.
/// Every read is bounds-checked: these functions see untrusted bytes and must never trap.
enum JPEGMarkers {
    /// One marker segment: its marker byte (the one after 0xFF) and where its payload (after the length) lies.
    struct Segment {
        var marker: UInt8
        var payload: Range<Int>
    }

    static let startOfImage: UInt8 = 0xD8, endOfImage: UInt8 = 0xD9, startOfScan: UInt8 = 0xDA, app1: UInt8 = 0xE1

    /// The segments before the first scan (APPn, DQT, SOFn, DHT…). Stops early, without error, at anything malformed.
    static func headerSegments(of jpeg: [UInt8]) -> [Segment] {
        guard jpeg.starts(with: [0xFF, startOfImage]) else { return [] }
        var segments: [Segment] = []
        var index = 2
        while index < jpeg.count, jpeg[index] == 0xFF {
            var markerIndex = index + 1
            while markerIndex < jpeg.count, jpeg[markerIndex] == 0xFF { markerIndex += 1 } // fill bytes
            guard markerIndex < jpeg.count else { break }
            let marker = jpeg[markerIndex]
            if marker == startOfScan || marker == endOfImage { break }
            if hasNoLength(marker) { index = markerIndex + 1; continue }
            guard let length = jpeg.uint16(at: markerIndex + 1), length >= 2, markerIndex + 1 + length <= jpeg.count
            else { break }
            segments.append(Segment(marker: marker, payload: markerIndex + 3..<markerIndex + 1 + length))
            index = markerIndex + 1 + length
        }
        return segments
    }

    /// Whether the JPEG stream runs all the way to its end-of-image marker (FF D9): a cut-off download does not.
    /// Segments are skipped by their length (so the EOI of an EXIF thumbnail does not count) and entropy-coded data
    /// is scanned for the next marker. Whatever follows the EOI (zero padding, a phone's trailer, a motion photo's
    /// video) is not looked at.
    static func reachesEndOfImage(_ jpeg: [UInt8]) -> Bool {
        guard jpeg.starts(with: [0xFF, startOfImage]) else { return false }
        var index = 2
        while let markerStart = jpeg[min(index, jpeg.count)...].firstIndex(of: 0xFF) {
            var markerIndex = markerStart + 1
            while markerIndex < jpeg.count, jpeg[markerIndex] == 0xFF { markerIndex += 1 }
            guard markerIndex < jpeg.count else { return false }
            let marker = jpeg[markerIndex]
            if marker == endOfImage { return true }
            if marker == 0x00 || hasNoLength(marker) { // a stuffed 0xFF or a restart marker inside a scan
                index = markerIndex + 1
                continue
            }
            guard let length = jpeg.uint16(at: markerIndex + 1), length >= 2 else { return false }
            index = markerIndex + 1 + length
        }
        return false
    }

    /// TEM and RST0…RST7 stand alone; SOI and EOI too, but those are handled by the callers.
    private static func hasNoLength(_ marker: UInt8) -> Bool {
        marker == 0x01 || (0xD0...0xD7).contains(marker)
    }
}

extension Array where Element == UInt8 {
    /// The big-endian 16-bit value at `index` (a segment length), or nil when it does not lie wholly inside the array.
    func uint16(at index: Int) -> Int? {
        guard index >= 0, index <= count - 2 else { return nil }
        return Int(self[index]) << 8 | Int(self[index + 1])
    }
}
