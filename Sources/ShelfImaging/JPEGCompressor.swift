internal import CTurboJPEG

/// Owns one TurboJPEG compressor handle. Not thread-safe: one per call. Writes baseline 4:2:0 JPEG with no
/// APPn segment but JFIF's APP0: no EXIF, XMP or ICC, so nothing about the camera, place or time.
final class JPEGCompressor {
    private let handle: tjhandle
    /// Output buffer kept across calls (trial encodes of one photo): no fresh 20 MB allocation per trial.
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var capacity: UInt = 0

    init() throws(TurboJPEGError) {
        guard let handle = tjInitCompress() else { throw TurboJPEGError(message: String(cString: tjGetErrorStr2(nil))) }
        self.handle = handle
    }

    deinit {
        tjFree(buffer)
        tjDestroy(handle)
    }

    /// `subsampling` is TurboJPEG's `TJSAMP_*` (4:2:0 unless a test asks for another, or 3 for grey).
    func compress(_ image: RGBImage, quality: Int, subsampling: Int32 = 2) throws(TurboJPEGError) -> [UInt8] {
        var size = try reserve(width: image.width, height: image.height)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            tjCompress2(
                handle, pixels.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(TJPF_RGB.rawValue),
                &buffer, &size, subsampling, Int32(quality), TJFLAG_NOREALLOC)
        }
        guard status == 0, let buffer else { throw TurboJPEGError(message: String(cString: tjGetErrorStr2(handle))) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }

    /// The same from 4:2:0 planes (`YUVImage.planes420`): no colour conversion or chroma downsampling to do.
    func compress(_ image: YUVImage, quality: Int) throws(TurboJPEGError) -> [UInt8] {
        var size = try reserve(width: image.width, height: image.height)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            var sources: [UnsafePointer<UInt8>?] = image.planes.map { pixels.baseAddress! + $0.offset }
            var strides: [Int32] = image.planes.map { Int32($0.rowBytes) }
            return tjCompressFromYUVPlanes(
                handle, &sources, Int32(image.width), &strides, Int32(image.height),
                Int32(TJSAMP_420.rawValue), &buffer, &size, Int32(quality), TJFLAG_NOREALLOC)
        }
        guard status == 0, let buffer else { throw TurboJPEGError(message: String(cString: tjGetErrorStr2(handle))) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }

    /// Makes the output buffer large enough for any JPEG of this size and returns its capacity. tjBufSize is the
    /// worst case for any quality, so with TJFLAG_NOREALLOC the buffer never has to grow.
    private func reserve(width: Int, height: Int) throws(TurboJPEGError) -> UInt {
        let needed = tjBufSize(Int32(width), Int32(height), Int32(TJSAMP_444.rawValue))
        if needed > capacity {
            tjFree(buffer)
            buffer = tjAlloc(Int32(clamping: needed))
            capacity = buffer == nil ? 0 : needed
        }
        guard buffer != nil else { throw TurboJPEGError(message: "could not allocate \(needed) bytes for the JPEG") }
        return capacity
    }
}
