import Foundation
import ShelfCore

/// Decides whether a photo can be processed, before any of it is sent anywhere: format, size, integrity, orientation.
/// Synchronous and blocking (it decodes the whole JPEG at 1/8 scale): call it from a thread that may block.
/// Safe to call concurrently: each call makes its own TurboJPEG handle.
package enum PhotoInspector {
    /// Inspects a whole file's bytes.
    /// - Parameter maxPixels: photos declaring more pixels than this are refused from their header alone,
    ///   before anything is decoded (a decompression bomb costs nothing).
    /// - Throws: `PhotoError` with disposition `.dead`: `.unreadableImage` (empty, not an image, truncated or
    ///   corrupt), `.unsupportedFormat` (PNG, WebP, GIF, TIFF, CMYK JPEG), `.photoTooLarge`;
    ///   `.internal` with `.retry` if TurboJPEG cannot start.
    ///   A JPEG is decoded in full at 1/8 scale to prove it is whole; a HEIC's container and primary image header
    ///   are read, but its pixels are first decoded by `Preprocessor`, which then reports any damage.
    package static func inspect(_ bytes: [UInt8], maxPixels: Int = 64_000_000) throws(PhotoError) -> PhotoInfo {
        let opened = try open(bytes, maxPixels: maxPixels)
        if let (decoder, header) = opened.jpeg {
            do { try decoder.verifyDecodes(bytes, header: header) } catch { throw corrupt(error.message) }
            guard JPEGMarkers.reachesEndOfImage(bytes) else { throw truncatedJPEG() }
        }
        return opened.info
    }

    /// A photo whose format and header are known and within limits, with the JPEG decoder that read the header.
    struct Opened {
        var info: PhotoInfo
        var jpeg: (decoder: JPEGDecompressor, header: JPEGDecompressor.Header)?
    }

    /// Everything that can be learnt without decoding pixels: format, size (refused above `maxPixels` before any
    /// allocation), colour space, orientation.
    static func open(_ bytes: [UInt8], maxPixels: Int) throws(PhotoError) -> Opened {
        guard !bytes.isEmpty else {
            throw dead(.unreadableImage, "empty file (0 bytes): the copy probably failed; copy the photo again")
        }
        let format = ImageFormat.sniff(bytes)
        switch format {
        case .jpeg:
            break
        case .heic:
            let header: HEIFDecoder.Header
            do { header = try HEIFDecoder.readHeader(bytes) } catch { throw corruptHEIF(error.message) }
            try checkSize(width: header.width, height: header.height, maxPixels: maxPixels)
            // libheif applies the file's rotation and mirroring itself: the size is as displayed, orientation 1.
            return Opened(
                info: PhotoInfo(
                    format: .heic, width: header.width, height: header.height, orientation: 1,
                    byteCount: bytes.count), jpeg: nil)
        case .unknown:
            throw dead(.unreadableImage, "not an image: \(describeNonImage(bytes)); shelfd reads JPEG and HEIC photos")
        case .png, .webp, .gif, .tiff:
            throw dead(
                .unsupportedFormat,
                "\(format.displayName) photos are recognised but not supported yet; "
                    + "convert to JPEG and add the JPEG instead")
        }

        let decoder: JPEGDecompressor
        do { decoder = try JPEGDecompressor() } catch {
            throw PhotoError(
                .internal, "could not start the JPEG decoder: \(error.message)", disposition: .retry(after: nil))
        }
        let header: JPEGDecompressor.Header
        do { header = try decoder.readHeader(bytes) } catch { throw corrupt(error.message) }
        try checkSize(width: header.width, height: header.height, maxPixels: maxPixels)
        guard !header.isCMYK else {
            throw dead(
                .unsupportedFormat,
                "CMYK JPEGs are recognised but not supported yet; "
                    + "convert to an RGB JPEG and add it again")
        }
        let info = PhotoInfo(
            format: .jpeg, width: header.width, height: header.height,
            orientation: EXIFOrientation.read(fromJPEG: bytes) ?? 1, byteCount: bytes.count)
        return Opened(info: info, jpeg: (decoder, header))
    }

    private static func checkSize(width: Int, height: Int, maxPixels: Int) throws(PhotoError) {
        let pixels = width * height
        guard pixels <= maxPixels else {
            throw dead(
                .photoTooLarge,
                "photo is \(width)×\(height) = \(pixels) pixels "
                    + "(\(megapixels(pixels)) MP), over the limit of \(maxPixels) pixels (\(megapixels(maxPixels)) MP); "
                    + "scale it down and add it again")
        }
        guard pixels > 0 else { throw dead(.unreadableImage, "photo declares a size of \(width)×\(height) pixels") }
    }

    private static func dead(_ code: PhotoError.Code, _ message: String) -> PhotoError {
        PhotoError(code, message, disposition: .dead)
    }

    static func corrupt(_ detail: String) -> PhotoError {
        dead(.unreadableImage, "truncated or corrupt JPEG: \(detail); copy the photo again from the camera or phone")
    }

    static func truncatedJPEG() -> PhotoError {
        corrupt("no end-of-image marker (FF D9), the file was probably cut short")
    }

    static func corruptHEIF(_ detail: String) -> PhotoError {
        dead(
            .unreadableImage, "truncated or corrupt HEIC/HEIF: \(detail); copy the photo again from the camera or phone"
        )
    }

    private static func megapixels(_ pixels: Int) -> String {
        String(format: "%.1f", Double(pixels) / 1_000_000)
    }

    /// What a file that is not an image looks like, for the message: "starts with text", "a PDF document"…
    static func describeNonImage(_ bytes: [UInt8]) -> String {
        let head = Array(bytes.prefix(64))
        if head.starts(with: Array("%PDF".utf8)) { return "a PDF document" }
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return "a ZIP archive (or an office document)" }
        if let brand = ImageFormat.ftypBrands(head).first {
            return "a video or other ISO media file (brand '\(brand)')"
        }
        let isText = head.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        if isText {
            let start = String(decoding: head, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                .lowercased()
            if start.hasPrefix("<!doctype html") || start.hasPrefix("<html") { return "starts with HTML (a web page)" }
            return "starts with text"
        }
        let hex = head.prefix(8).map { String(format: "%02X", $0) }.joined(separator: " ")
        return "unrecognised data starting with \(hex)"
    }
}
