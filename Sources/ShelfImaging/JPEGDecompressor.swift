internal import CTurboJPEG // internal: no TurboJPEG type can reach a package signature

/// A TurboJPEG failure, with libjpeg's own message. Converted to a `PhotoError` by the caller.
struct TurboJPEGError: Error {
    var message: String
}

/// Owns one TurboJPEG decompressor handle. Not thread-safe (a `tjhandle` is not): make one per use, or confine it.
final class JPEGDecompressor {
    struct Header {
        var width: Int
        var height: Int
        /// CMYK or YCCK: TurboJPEG 2.1 cannot decode these to RGB.
        var isCMYK: Bool
        /// TurboJPEG's chroma subsampling (`TJSAMP_*`); grey pictures have one plane only.
        var subsampling: Int32 = 0
        var isGrey: Bool { subsampling == Int32(TJSAMP_GRAY.rawValue) }
    }

    private let handle: tjhandle

    init() throws(TurboJPEGError) {
        guard let handle = tjInitDecompress() else {
            throw TurboJPEGError(message: String(cString: tjGetErrorStr2(nil)))
        }
        self.handle = handle
    }

    deinit { tjDestroy(handle) }

    /// Reads the frame header only: no pixel memory is allocated, whatever size the header declares.
    func readHeader(_ jpeg: [UInt8]) throws(TurboJPEGError) -> Header {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace) == 0
        else { throw lastError() }
        let isCMYK = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        return Header(width: Int(width), height: Int(height), isCMYK: isCMYK, subsampling: subsampling)
    }

    /// Decodes the whole image at the smallest DCT scale (1/8 of each side), treating libjpeg warnings
    /// ("Premature end of JPEG file", "Corrupt JPEG data…") as errors, and discards the pixels.
    func verifyDecodes(_ jpeg: [UInt8], header: Header) throws(TurboJPEGError) {
        let width = Self.scaled(header.width, eighths: 1), height = Self.scaled(header.height, eighths: 1)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        guard
            tjDecompress2(
                handle, jpeg, UInt(jpeg.count), &pixels, Int32(width), 0, Int32(height),
                Int32(TJPF_RGB.rawValue), TJFLAG_STOPONWARNING) == 0
        else { throw lastError() }
    }

    /// Decodes at `eighths`/8 of the stored size: the scaled IDCT makes the smaller picture directly, so the
    /// full-size one never exists. Warnings ("Premature end of JPEG file", "Corrupt JPEG data…") are errors.
    func decode(_ jpeg: [UInt8], header: Header, eighths: Int) throws(TurboJPEGError) -> RGBImage {
        let width = Self.scaled(header.width, eighths: eighths), height = Self.scaled(header.height, eighths: eighths)
        var status: Int32 = 0
        // Not zero-filled first: TurboJPEG writes every byte, or fails and the buffer is dropped.
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height * 3) { buffer, initialised in
            status = tjDecompress2(
                handle, jpeg, UInt(jpeg.count), buffer.baseAddress, Int32(width), 0, Int32(height),
                Int32(TJPF_RGB.rawValue), TJFLAG_STOPONWARNING)
            initialised = buffer.count
        }
        guard status == 0 else { throw lastError() }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    /// Decodes at `eighths`/8 to Y, Cb and Cr planes as stored (no colour conversion, no chroma upsampling), in
    /// one buffer. Not for grey pictures (one plane). Warnings are errors, as in `decode`.
    func decodeYUV(_ jpeg: [UInt8], header: Header, eighths: Int) throws(TurboJPEGError) -> YUVImage {
        precondition(!header.isGrey)
        let width = Self.scaled(header.width, eighths: eighths), height = Self.scaled(header.height, eighths: eighths)
        let subsampling = header.subsampling
        var planes: [YUVImage.Plane] = []
        var total = 0
        for index in 0..<3 {
            let rowBytes = Int(tjPlaneWidth(Int32(index), Int32(width), subsampling))
            let rows = Int(tjPlaneHeight(Int32(index), Int32(height), subsampling))
            guard rowBytes > 0, rows > 0 else { throw lastError() }
            // What the padded plane holds of the picture: luma exactly; chroma, all of it (rounded up).
            let planeWidth = index == 0 ? width : rowBytes, planeHeight = index == 0 ? height : rows
            planes.append(
                YUVImage.Plane(offset: total, width: planeWidth, height: planeHeight, rowBytes: rowBytes, rows: rows))
            total += rowBytes * rows
        }
        var status: Int32 = 0
        let pixels = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialised in
            let base = buffer.baseAddress!
            var destinations: [UnsafeMutablePointer<UInt8>?] = planes.map { base + $0.offset }
            var strides: [Int32] = planes.map { Int32($0.rowBytes) }
            status = tjDecompressToYUVPlanes(
                handle, jpeg, UInt(jpeg.count), &destinations, Int32(width), &strides,
                Int32(height), TJFLAG_STOPONWARNING)
            initialised = total
        }
        guard status == 0 else { throw lastError() }
        return YUVImage(width: width, height: height, pixels: pixels, planes: planes)
    }

    /// The DCT scale to decode at for a picture whose long side becomes `target`: the smallest of 1/8, 2/8, 4/8
    /// and 8/8 whose scaled `longSide` is still at least `target`. libjpeg-turbo has SIMD inverse DCTs only for
    /// those; the others (3/8, 5/8…7/8) run its plain C IDCTs and cost more than the next fast scale up
    /// (libjpeg-turbo 2.1.5, a 4624×3468 photo: 6/8 takes 84 ms against 53 ms at 8/8, 3/8 46 ms against 40 ms at
    /// 4/8), the larger area resampling included.
    static func eighths(longSide: Int, target: Int) -> Int {
        [1, 2, 4, 8].first { scaled(longSide, eighths: $0) >= target } ?? 8
    }

    /// TurboJPEG's `TJSCALED` macro for a scaling factor of n/8: rounds up.
    static func scaled(_ dimension: Int, eighths: Int) -> Int {
        (dimension * eighths + 7) / 8
    }

    private func lastError() -> TurboJPEGError {
        TurboJPEGError(message: String(cString: tjGetErrorStr2(handle)))
    }
}
