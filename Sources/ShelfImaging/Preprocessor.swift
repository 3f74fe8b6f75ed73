import ShelfCore

/// What is sent to a provider for one photo, and what was learnt making it.
package struct PreparedPhoto: Sendable {
    /// Upright, resized, re-encoded, with no metadata (no EXIF, XMP or ICC segment).
    package var jpeg: [UInt8]
    /// Size of `jpeg`.
    package var width: Int
    package var height: Int
    /// The JPEG quality `jpeg` was encoded at.
    package var quality: Int
    /// The original as inspected (format, stored size, orientation).
    package var source: PhotoInfo
    package var signals: QualitySignals

    package init(jpeg: [UInt8], width: Int, height: Int, quality: Int, source: PhotoInfo, signals: QualitySignals) {
        self.jpeg = jpeg; self.width = width; self.height = height; self.quality = quality
        self.source = source; self.signals = signals
    }
}

/// Turns a photo's bytes into what a provider is sent, and cuts spines out of it. The original bytes are only read.
/// Synchronous and CPU-bound (tens to hundreds of milliseconds): call it from a thread that may block.
/// Safe to call concurrently: each call makes its own TurboJPEG and libheif handles.
package enum Preprocessor {
    /// Each shrink when the lowest quality is still too big keeps this share of the long side…
    static let shrinkFactor = 0.85
    /// …down to this share of the preset's maximum side; below it the smallest attempt is sent as it is.
    static let floorFactor = 0.5
    static let qualityStep = 5

    /// Decodes (JPEG, HEIC/HEIF), turns upright, resizes to the preset and encodes within its byte target.
    /// JPEG is decoded at the smallest DCT scale n/8 still at least the target size (the full-size picture is never
    /// made), then area-averaged down to the preset's side; a photo smaller than that is not enlarged.
    /// - Throws: `PhotoError` as `PhotoInspector.inspect` does (all `.dead` but `.internal`).
    package static func prepare(_ bytes: [UInt8], preset: ImagePreset,
                                maxPixels: Int = 64_000_000) throws(PhotoError) -> PreparedPhoto {
        let opened = try PhotoInspector.open(bytes, maxPixels: maxPixels)
        let info = opened.info
        let longSide = max(info.width, info.height)
        let target = min(preset.maxSide, longSide)
        let orientation = Orientation(info.orientation)

        let result: Result<Encoded, TurboJPEGError>
        if let (decoder, header) = opened.jpeg {
            let eighths = JPEGDecompressor.eighths(longSide: longSide, target: target)
            let decoded: RGBImage
            do { decoded = try decoder.decode(bytes, header: header, eighths: eighths) } catch {
                throw PhotoInspector.corrupt(error.message)
            }
            guard JPEGMarkers.reachesEndOfImage(bytes) else { throw PhotoInspector.truncatedJPEG() }
            result = decoded.withView { encode($0, orientation: orientation, target: target, longSide: longSide, preset: preset) }
        } else {
            do {
                result = try HEIFDecoder.decode(bytes, maxPixels: maxPixels) { view in
                    encode(view, orientation: orientation, target: target, longSide: longSide, preset: preset)
                }
            } catch { throw PhotoInspector.corruptHEIF(error.message) }
        }
        switch result {
        case .success(let encoded):
            return PreparedPhoto(jpeg: encoded.jpeg, width: encoded.width, height: encoded.height, quality: encoded.quality,
                                 source: info, signals: encoded.signals)
        case .failure(let error):
            throw PhotoError(.internal, "could not encode the JPEG: \(error.message)", disposition: .retry(after: nil))
        }
    }

    /// The spine: `box` (normalised to the upright photo, origin top-left) grown by `margin` (a share of the photo's
    /// width and height) on each side, cut out at full resolution, upright, as a quality-90 JPEG without metadata.
    package static func crop(_ bytes: [UInt8], box: Box, margin: Double = 0.02,
                             maxPixels: Int = 64_000_000) throws(PhotoError) -> [UInt8] {
        let opened = try PhotoInspector.open(bytes, maxPixels: maxPixels)
        let info = opened.info
        let rect = pixelRect(box, margin: margin, width: info.displayWidth, height: info.displayHeight)
        let orientation = Orientation(info.orientation)
        func cut(_ view: PixelView) -> Result<[UInt8], TurboJPEGError> {
            let stored = orientation.storedRect(ofDisplay: rect, width: view.width, height: view.height)
            let region = view.cropped(x: stored.x, y: stored.y, width: stored.w, height: stored.h)
            let image = Resampler.render(region, width: region.width, height: region.height, orientation: orientation)
            return Result { () throws(TurboJPEGError) in try JPEGCompressor().compress(image, quality: 90) }
        }

        let result: Result<[UInt8], TurboJPEGError>
        if let (decoder, header) = opened.jpeg {
            let decoded: RGBImage
            do { decoded = try decoder.decode(bytes, header: header, eighths: 8) } catch {
                throw PhotoInspector.corrupt(error.message)
            }
            guard JPEGMarkers.reachesEndOfImage(bytes) else { throw PhotoInspector.truncatedJPEG() }
            result = decoded.withView(cut)
        } else {
            do { result = try HEIFDecoder.decode(bytes, maxPixels: maxPixels, cut) } catch {
                throw PhotoInspector.corruptHEIF(error.message)
            }
        }
        switch result {
        case .success(let jpeg): return jpeg
        case .failure(let error):
            throw PhotoError(.internal, "could not encode the crop: \(error.message)", disposition: .retry(after: nil))
        }
    }

    /// `box` plus `margin` in whole pixels of a `width`×`height` picture: at least one pixel, never outside it.
    static func pixelRect(_ box: Box, margin: Double, width: Int, height: Int) -> (x: Int, y: Int, w: Int, h: Int) {
        func span(_ low: Double, _ high: Double, _ size: Int) -> (Int, Int) {
            // The 1e-9 keeps 0.47 × 400 = 188.00000000000003 at 188.
            let start = min(size - 1, max(0, Int(((low - margin) * Double(size) + 1e-9).rounded(.down))))
            let end = max(start + 1, min(size, Int(((high + margin) * Double(size) - 1e-9).rounded(.up))))
            return (start, end - start)
        }
        let (x, w) = span(box.x1, box.x2, width), (y, h) = span(box.y1, box.y2, height)
        return (x, y, w, h)
    }

    struct Encoded {
        var jpeg: [UInt8]
        var width: Int
        var height: Int
        var quality: Int
        var signals: QualitySignals
    }

    /// Resizes `view` (stored orientation) so its long side is `target`, turns it upright, and finds the highest
    /// quality (from the preset's, in steps of 5) that fits the byte target; when even `minQuality` does not fit,
    /// the size shrinks and the search repeats, down to the floor.
    static func encode(_ view: PixelView, orientation: Orientation, target: Int, longSide: Int,
                       preset: ImagePreset) -> Result<Encoded, TurboJPEGError> {
        Result { () throws(TurboJPEGError) in
            let compressor = try JPEGCompressor()
            let floor = max(1, Int(Double(preset.maxSide) * floorFactor))
            let viewLong = max(view.width, view.height)
            var side = target
            var signals: QualitySignals?
            while true {
                let scale = Double(side) / Double(viewLong)
                let image = Resampler.render(view, width: max(1, Int((Double(view.width) * scale).rounded())),
                                             height: max(1, Int((Double(view.height) * scale).rounded())),
                                             orientation: orientation)
                if signals == nil { signals = QualitySignals.measure(image, longSide: longSide) }
                var quality = try startingQuality(image, preset: preset, compressor: compressor)
                while true {
                    let jpeg = try compressor.compress(image, quality: quality)
                    let fits = jpeg.count <= preset.targetBytes.upperBound
                    if fits || (quality <= preset.minQuality && side <= floor) {
                        return Encoded(jpeg: jpeg, width: image.width, height: image.height, quality: quality, signals: signals!)
                    }
                    if quality <= preset.minQuality { break }
                    quality = max(preset.minQuality, quality - qualityStep)
                }
                side = max(floor, min(side - 1, Int(Double(side) * shrinkFactor)))
            }
        }
    }

    /// Pictures up to this many pixels are encoded whole at each trial quality; larger ones are tried on a sample.
    static let sampledAbove = 1_500_000

    /// The highest quality in the preset's steps whose estimated size fits the target. The estimate encodes every
    /// fourth 16-row band (4:2:0 MCUs, so the sample codes as it does in place) and scales by the rows left out:
    /// a quarter of the cost of each trial encode, and the whole image is then encoded once or twice, not four times.
    static func startingQuality(_ image: RGBImage, preset: ImagePreset,
                                compressor: JPEGCompressor) throws(TurboJPEGError) -> Int {
        guard image.width * image.height > sampledAbove else { return preset.quality }
        let band = 16, every = 4
        var pixels: [UInt8] = []
        pixels.reserveCapacity(image.pixels.count / every + band * image.width * 3)
        var rows = 0
        for top in stride(from: 0, to: image.height, by: band * every) {
            let end = min(image.height, top + band)
            pixels.append(contentsOf: image.pixels[top * image.width * 3..<end * image.width * 3])
            rows += end - top
        }
        let sample = RGBImage(width: image.width, height: rows, pixels: pixels)
        let scale = Double(image.height) / Double(rows)
        var quality = preset.quality
        while quality > preset.minQuality {
            let estimate = Double(try compressor.compress(sample, quality: quality).count) * scale
            if estimate <= Double(preset.targetBytes.upperBound) { break }
            quality = max(preset.minQuality, quality - qualityStep)
        }
        return quality
    }
}
