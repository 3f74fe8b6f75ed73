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

    func compress(_ image: RGBImage, quality: Int) throws(TurboJPEGError) -> [UInt8] {
        // tjBufSize is the worst case for any quality, so with TJFLAG_NOREALLOC the buffer never has to grow.
        let needed = tjBufSize(Int32(image.width), Int32(image.height), Int32(TJSAMP_420.rawValue))
        if needed > capacity {
            tjFree(buffer)
            buffer = tjAlloc(Int32(clamping: needed))
            capacity = buffer == nil ? 0 : needed
        }
        guard buffer != nil else { throw TurboJPEGError(message: "could not allocate \(needed) bytes for the JPEG") }
        var size = capacity
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            tjCompress2(handle, pixels.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(TJPF_RGB.rawValue),
                        &buffer, &size, Int32(TJSAMP_420.rawValue), Int32(quality), TJFLAG_NOREALLOC)
        }
        guard status == 0, let buffer else { throw TurboJPEGError(message: String(cString: tjGetErrorStr2(handle))) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }
}
