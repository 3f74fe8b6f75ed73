import ShelfCore

/// 8-bit grey pixels, rows packed (no padding): what an OCR engine reads.
package struct GreyImage: Sendable {
    package var width: Int
    package var height: Int
    package var pixels: [UInt8]

    package init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height, "GreyImage: pixel count does not match the size")
        self.width = width; self.height = height; self.pixels = pixels
    }

    /// Luma of an RGB picture (BT.601 weights in 8-bit fixed point).
    init(_ image: RGBImage) {
        let count = image.width * image.height
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { out, initialised in
            image.pixels.withUnsafeBufferPointer { rgb in
                for i in 0..<count {
                    let r = UInt32(rgb[3 * i]), g = UInt32(rgb[3 * i + 1]), b = UInt32(rgb[3 * i + 2])
                    out[i] = UInt8((77 * r + 150 * g + 29 * b + 128) >> 8)
                }
            }
            initialised = count
        }
        self.init(width: image.width, height: image.height, pixels: pixels)
    }

    /// Turned a quarter clockwise (`clockwise`) or anticlockwise: `width` and `height` swap.
    package func rotated(clockwise: Bool) -> GreyImage {
        let (w, h) = (width, height)
        let pixels = [UInt8](unsafeUninitializedCapacity: w * h) { out, initialised in
            self.pixels.withUnsafeBufferPointer { source in
                // The rotated picture is h wide: stored (x, y) lands at (h-1-y, x) clockwise, (y, w-1-x) anticlockwise.
                for y in 0..<h {
                    let row = y * w
                    if clockwise {
                        for x in 0..<w { out[x * h + (h - 1 - y)] = source[row + x] }
                    } else {
                        for x in 0..<w { out[(w - 1 - x) * h + y] = source[row + x] }
                    }
                }
            }
            initialised = w * h
        }
        return GreyImage(width: h, height: w, pixels: pixels)
    }
}

extension Preprocessor {
    /// The photo's luma at its full size as stored, and the orientation that turns it upright. A colour JPEG's is its
    /// Y plane, decoded without colour conversion or turning: reading a 12-megapixel photo's barcodes from it takes
    /// about 0.3 s and 58 MB at the peak, against 0.4 s and 110 MB from `grey` (scripts/bench-preprocess.sh). A
    /// grey JPEG or a HEIC photo is decoded as `grey` does, upright already.
    /// - Throws: `PhotoError` as `prepare` does.
    static func storedLuma(_ bytes: [UInt8], maxPixels: Int) throws(PhotoError) -> (GreyImage, Orientation) {
        let opened = try PhotoInspector.open(bytes, maxPixels: maxPixels)
        guard let (decoder, header) = opened.jpeg, !header.isGrey else {
            return (try grey(bytes, maxSide: .max, maxPixels: maxPixels), Orientation(1))
        }
        let decoded: YUVImage
        do { decoded = try decoder.decodeYUV(bytes, header: header, eighths: 8) } catch {
            throw PhotoInspector.corrupt(error.message)
        }
        let luma = decoded.planes[0]
        let pixels = [UInt8](unsafeUninitializedCapacity: luma.width * luma.height) { out, initialised in
            decoded.pixels.withUnsafeBufferPointer { planes in
                for row in 0..<luma.height {
                    let from = planes.baseAddress! + luma.offset + row * luma.rowBytes
                    (out.baseAddress! + row * luma.width).update(from: from, count: luma.width)
                }
            }
            initialised = luma.width * luma.height
        }
        return (GreyImage(width: luma.width, height: luma.height, pixels: pixels), Orientation(opened.info.orientation))
    }

    /// The photo upright, its long side scaled to `maxSide` (never enlarged), in grey: as `rgb`, then luma.
    /// - Throws: `PhotoError` as `prepare` does.
    package static func grey(_ bytes: [UInt8], maxSide: Int, maxPixels: Int = 64_000_000) throws(PhotoError)
        -> GreyImage
    {
        GreyImage(try rgb(bytes, maxSide: maxSide, maxPixels: maxPixels))
    }

    /// The photo upright, its long side scaled to `maxSide` (never enlarged), in colour: JPEG (decoded at the
    /// smallest DCT scale still large enough) or HEIC/HEIF, EXIF orientation applied.
    /// - Throws: `PhotoError` as `prepare` does.
    package static func rgb(_ bytes: [UInt8], maxSide: Int, maxPixels: Int = 64_000_000) throws(PhotoError) -> RGBImage
    {
        let opened = try PhotoInspector.open(bytes, maxPixels: maxPixels)
        let info = opened.info
        let longSide = max(info.width, info.height)
        let target = min(maxSide, longSide)
        let orientation = Orientation(info.orientation)
        func render(_ view: PixelView) -> RGBImage {
            let scale = Double(target) / Double(max(view.width, view.height))
            return Resampler.render(
                view, width: Int((Double(view.width) * scale).rounded()),
                height: Int((Double(view.height) * scale).rounded()), orientation: orientation)
        }
        if let (decoder, header) = opened.jpeg {
            let decoded: RGBImage
            do {
                decoded = try decoder.decode(
                    bytes, header: header,
                    eighths: JPEGDecompressor.eighths(longSide: longSide, target: target))
            } catch { throw PhotoInspector.corrupt(error.message) }
            guard JPEGMarkers.reachesEndOfImage(bytes) else { throw PhotoInspector.truncatedJPEG() }
            return decoded.withView(render)
        }
        do { return try HEIFDecoder.decode(bytes, maxPixels: maxPixels, render) } catch {
            throw PhotoInspector.corruptHEIF(error.message)
        }
    }
}
