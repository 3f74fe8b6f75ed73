/// A picture as separate Y, Cb and Cr planes in one buffer, as TurboJPEG decodes and encodes them without
/// converting colour or resampling chroma: half the bytes of RGB at 4:2:0, so half the resampling work.
struct YUVImage {
    /// One plane: `width`×`height` samples that mean something, rows `rowBytes` apart, `rows` rows stored
    /// (TurboJPEG pads planes to whole chroma blocks).
    struct Plane {
        var offset, width, height, rowBytes, rows: Int
    }

    var width: Int
    var height: Int
    var pixels: [UInt8]
    /// Y, Cb, Cr.
    var planes: [Plane]

    /// Runs `body` with a view of plane `index` (one sample a pixel).
    func withView<T>(plane index: Int, _ body: (PixelView) throws -> T) rethrows -> T {
        let plane = planes[index]
        return try pixels.withUnsafeBufferPointer { buffer in
            try body(
                PixelView(
                    base: buffer.baseAddress! + plane.offset, width: plane.width, height: plane.height,
                    rowBytes: plane.rowBytes, channels: 1))
        }
    }

    /// The layout of a 4:2:0 picture of `width`×`height`: luma padded to even sizes, chroma half of that.
    static func planes420(width: Int, height: Int) -> [Plane] {
        let lumaWidth = (width + 1) & ~1, lumaRows = (height + 1) & ~1
        let chromaWidth = lumaWidth / 2, chromaRows = lumaRows / 2
        let luma = Plane(offset: 0, width: width, height: height, rowBytes: lumaWidth, rows: lumaRows)
        let cb = Plane(
            offset: lumaWidth * lumaRows, width: chromaWidth, height: chromaRows, rowBytes: chromaWidth,
            rows: chromaRows)
        var cr = cb
        cr.offset = cb.offset + chromaWidth * chromaRows
        return [luma, cb, cr]
    }

    /// `source` (any subsampling) scaled so its luma is `width`×`height` (stored orientation, each ≤ the source's),
    /// turned to `orientation`, as 4:2:0. Each plane is area-averaged on its own; nil when a chroma plane of the
    /// source must not be smaller than the 4:2:0 one it becomes (4:1:1 would need enlarging).
    static func render(_ source: YUVImage, width: Int, height: Int, orientation: Orientation) -> YUVImage {
        let width = max(1, min(width, source.width)), height = max(1, min(height, source.height))
        let displayWidth = orientation.swapsAxes ? height : width,
            displayHeight = orientation.swapsAxes ? width : height
        let planes = planes420(width: displayWidth, height: displayHeight)
        // The chroma planes in stored orientation.
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        precondition(
            source.planes.count == 3
                && source.planes[1].width >= chromaWidth && source.planes[1].height >= chromaHeight
                && source.planes[2].width >= chromaWidth && source.planes[2].height >= chromaHeight)
        let total = planes[2].offset + planes[2].rowBytes * planes[2].rows
        let pixels = [UInt8](unsafeUninitializedCapacity: total) { out, initialised in
            let base = out.baseAddress!
            for index in 0..<3 {
                let (w, h) = index == 0 ? (width, height) : (chromaWidth, chromaHeight)
                source.withView(plane: index) { view in
                    Resampler.draw(
                        view, width: w, height: h, orientation: orientation,
                        into: base + planes[index].offset, rowPixels: planes[index].rowBytes)
                }
            }
            // Luma padding (odd sizes): the last column and row repeated, as an encoder would pad.
            let luma = planes[0]
            if luma.rowBytes > luma.width {
                for y in 0..<luma.height {
                    base[y * luma.rowBytes + luma.width] = base[y * luma.rowBytes + luma.width - 1]
                }
            }
            if luma.rows > luma.height {
                (base + luma.height * luma.rowBytes).update(
                    from: base + (luma.height - 1) * luma.rowBytes, count: luma.rowBytes)
            }
            initialised = total
        }
        return YUVImage(width: displayWidth, height: displayHeight, pixels: pixels, planes: planes)
    }

    /// Every `every`-th band of 16 luma rows (one 4:2:0 MCU row, 8 chroma rows) of a 4:2:0 picture, stacked:
    /// a sample that encodes as those rows do in place. Returns it and how many rows it has.
    func sampled(band: Int, every: Int) -> YUVImage {
        var rows = 0
        for top in stride(from: 0, to: height, by: band * every) { rows += min(height, top + band) - top }
        let planes = Self.planes420(width: width, height: rows)
        let total = planes[2].offset + planes[2].rowBytes * planes[2].rows
        let pixels = [UInt8](unsafeUninitializedCapacity: total) { out, initialised in
            self.pixels.withUnsafeBufferPointer { source in
                for index in 0..<3 {
                    let from = self.planes[index], to = planes[index]
                    let divisor = index == 0 ? 1 : 2
                    var o = out.baseAddress! + to.offset
                    var written = 0
                    for top in stride(from: 0, to: height, by: band * every) {
                        // Even row counts: both pictures' planes are padded to whole chroma rows.
                        let count = ((min(height, top + band) - top + 1) & ~1) / divisor
                        let first = top / divisor
                        for row in first..<first + count where written < to.rows {
                            o.update(from: source.baseAddress! + from.offset + row * from.rowBytes, count: to.rowBytes)
                            o += to.rowBytes
                            written += 1
                        }
                    }
                }
            }
            initialised = total
        }
        return YUVImage(width: width, height: rows, pixels: pixels, planes: planes)
    }

    /// An RGB copy of a small 4:2:0 picture (for the quality signals): BT.601 full range, as JPEG defines it.
    func rgb(width outWidth: Int, height outHeight: Int) -> RGBImage {
        let outWidth = max(1, min(outWidth, width)), outHeight = max(1, min(outHeight, height))
        var scaled: [[UInt8]] = []
        for index in 0..<3 {
            scaled.append(
                [UInt8](unsafeUninitializedCapacity: outWidth * outHeight) { out, initialised in
                    withView(plane: index) { view in
                        // Chroma planes are at least half the size: enlarge them by repeating, not averaging.
                        let w = min(outWidth, view.width), h = min(outHeight, view.height)
                        if w == outWidth && h == outHeight {
                            Resampler.draw(
                                view, width: w, height: h, orientation: Orientation(1), into: out.baseAddress!,
                                rowPixels: outWidth)
                        } else {
                            for y in 0..<outHeight {
                                for x in 0..<outWidth {
                                    out[y * outWidth + x] =
                                        view.base[
                                            (y * view.height / outHeight) * view.rowBytes
                                                + x * view.width / outWidth]
                                }
                            }
                        }
                    }
                    initialised = outWidth * outHeight
                })
        }
        let pixels = [UInt8](unsafeUninitializedCapacity: outWidth * outHeight * 3) { out, initialised in
            for i in 0..<outWidth * outHeight {
                let y = Int32(scaled[0][i]) << 16, cb = Int32(scaled[1][i]) - 128, cr = Int32(scaled[2][i]) - 128
                // 1.402, 0.344136, 0.714136 and 1.772 in 16-bit fixed point.
                let r = (y + 91881 * cr + 32768) >> 16
                let g = (y - 22554 * cb - 46802 * cr + 32768) >> 16
                let b = (y + 116130 * cb + 32768) >> 16
                out[i * 3] = UInt8(clamping: r); out[i * 3 + 1] = UInt8(clamping: g);
                out[i * 3 + 2] = UInt8(clamping: b)
            }
            initialised = outWidth * outHeight * 3
        }
        return RGBImage(width: outWidth, height: outHeight, pixels: pixels)
    }
}
