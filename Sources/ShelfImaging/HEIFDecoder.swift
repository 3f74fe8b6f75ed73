internal import CHeif // internal: no libheif type can reach a package signature

/// A libheif failure, with libheif's own message. Converted to a `PhotoError` by the caller.
struct HEIFError: Error {
    var message: String
}

/// HEIC/HEIF (and AVIF) through libheif. Every C object lives inside one call: nothing escapes but copies.
enum HEIFDecoder {
    /// The primary image's size as displayed: libheif reports it after its own rotation and mirroring (irot, imir).
    struct Header {
        var width: Int
        var height: Int
    }

    /// Parses the container and reads the primary image's size. No pixels are decoded or allocated.
    static func readHeader(_ bytes: [UInt8]) throws(HEIFError) -> Header {
        try withPrimaryImage(bytes) { heif, handle throws(HEIFError) in
            Header(
                width: Int(heif.heif_image_handle_get_width(handle)),
                height: Int(heif.heif_image_handle_get_height(handle)))
        }
    }

    /// Decodes the primary image to 8-bit RGB, upright (libheif applies irot/imir/clap by default), and lends it
    /// to `body` without copying it. Refuses, before decoding, an image of more than `maxPixels`.
    static func decode<T>(_ bytes: [UInt8], maxPixels: Int, _ body: (PixelView) -> T) throws(HEIFError) -> T {
        try withPrimaryImage(bytes) { heif, handle throws(HEIFError) in
            let width = Int(heif.heif_image_handle_get_width(handle)),
                height = Int(heif.heif_image_handle_get_height(handle))
            guard width > 0, height > 0, width * height <= maxPixels else {
                throw HEIFError(message: "image is \(width)×\(height), over the limit of \(maxPixels) pixels")
            }
            let options = heif.heif_decoding_options_alloc()
            defer { heif.heif_decoding_options_free(options) }
            options?.pointee.convert_hdr_to_8bit = 1 // 10-bit iPhone HDR photos: 8 bits is what JPEG takes
            var image: OpaquePointer?
            try check(heif.heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGB, options))
            guard let image else { throw HEIFError(message: "libheif returned no image") }
            defer { heif.heif_image_release(image) }
            var stride: Int32 = 0
            guard let plane = heif.heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
                throw HEIFError(message: "libheif returned no RGB plane")
            }
            let view = PixelView(
                base: plane, width: Int(heif.heif_image_get_width(image, heif_channel_interleaved)),
                height: Int(heif.heif_image_get_height(image, heif_channel_interleaved)), rowBytes: Int(stride))
            guard view.width > 0, view.height > 0, view.rowBytes >= view.width * 3 else {
                throw HEIFError(message: "libheif returned an empty or malformed RGB plane")
            }
            return body(view)
        }
    }

    /// Opens `bytes` (without copying: they outlive the context) and lends libheif's functions and the primary
    /// image handle to `body`. libheif itself is opened on the first HEIC photo, not at start (see CHeif's shim.h).
    private static func withPrimaryImage<T>(
        _ bytes: [UInt8],
        _ body: (ShelfHeif, OpaquePointer) throws(HEIFError) -> T
    ) throws(HEIFError) -> T {
        guard let heif = shelf_heif()?.pointee else {
            throw HEIFError(
                message: "libheif could not be opened (\(String(cString: shelf_heif_error()))); "
                    + "install it to read HEIC photos: sudo apt-get install libheif1")
        }
        guard let context = heif.heif_context_alloc() else {
            throw HEIFError(message: "libheif could not allocate a context")
        }
        defer { heif.heif_context_free(context) }
        let result: Result<T, HEIFError> = bytes.withUnsafeBytes { raw in
            do throws(HEIFError) {
                try check(heif.heif_context_read_from_memory_without_copy(context, raw.baseAddress, raw.count, nil))
                var handle: OpaquePointer?
                try check(heif.heif_context_get_primary_image_handle(context, &handle))
                guard let handle else { throw HEIFError(message: "no primary image") }
                defer { heif.heif_image_handle_release(handle) }
                return .success(try body(heif, handle))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func check(_ error: heif_error) throws(HEIFError) {
        guard error.code != heif_error_Ok else { return }
        throw HEIFError(message: error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)")
    }
}
