import Dispatch
import Foundation
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
    package static func prepare(
        _ bytes: [UInt8], preset: ImagePreset,
        maxPixels: Int = 64_000_000
    ) throws(PhotoError) -> PreparedPhoto {
        let opened = try PhotoInspector.open(bytes, maxPixels: maxPixels)
        let info = opened.info
        let longSide = max(info.width, info.height)
        let target = min(preset.maxSide, longSide)
        let orientation = Orientation(info.orientation)

        let result: Result<Encoded, TurboJPEGError>
        if let (decoder, header) = opened.jpeg {
            let eighths = JPEGDecompressor.eighths(longSide: longSide, target: target)
            if Self.planarSubsamplings.contains(header.subsampling) {
                // Y, Cb and Cr as stored, resampled plane by plane and encoded as they are.
                let decoded: YUVImage
                do { decoded = try decoder.decodeYUV(bytes, header: header, eighths: eighths) } catch {
                    throw PhotoInspector.corrupt(error.message)
                }
                guard JPEGMarkers.reachesEndOfImage(bytes) else { throw PhotoInspector.truncatedJPEG() }
                result = encode(
                    width: decoded.width, height: decoded.height, target: target, longSide: longSide,
                    preset: preset
                ) { width, height in
                    YUVImage.render(decoded, width: width, height: height, orientation: orientation)
                }
            } else {
                let decoded: RGBImage
                do { decoded = try decoder.decode(bytes, header: header, eighths: eighths) } catch {
                    throw PhotoInspector.corrupt(error.message)
                }
                guard JPEGMarkers.reachesEndOfImage(bytes) else { throw PhotoInspector.truncatedJPEG() }
                result = decoded.withView {
                    encode($0, orientation: orientation, target: target, longSide: longSide, preset: preset)
                }
            }
        } else {
            do {
                result = try HEIFDecoder.decode(bytes, maxPixels: maxPixels) { view in
                    encode(view, orientation: orientation, target: target, longSide: longSide, preset: preset)
                }
            } catch { throw PhotoInspector.corruptHEIF(error.message) }
        }
        switch result {
        case .success(let encoded):
            return PreparedPhoto(
                jpeg: encoded.jpeg, width: encoded.width, height: encoded.height, quality: encoded.quality,
                source: info, signals: encoded.signals)
        case .failure(let error):
            throw PhotoError(.internal, "could not encode the JPEG: \(error.message)", disposition: .retry(after: nil))
        }
    }

    /// The spine: `box` (normalised to the upright photo, origin top-left) grown by `margin` (a share of the photo's
    /// width and height) on each side, cut out at full resolution, upright, as a quality-90 JPEG without metadata.
    /// `readAcross`: a standing spine (taller than wide) is turned a quarter so that its text reads left to right,
    /// by `textRun` when the reader knew it, else anticlockwise, as most English spines read top to bottom.
    package static func crop(
        _ bytes: [UInt8], box: Box, margin: Double = 0.02, maxPixels: Int = 64_000_000,
        readAcross: Bool = false, textRun: TextRun? = nil
    ) throws(PhotoError) -> [UInt8] {
        let opened = try PhotoInspector.open(bytes, maxPixels: maxPixels)
        let info = opened.info
        let rect = pixelRect(box, margin: margin, width: info.displayWidth, height: info.displayHeight)
        let orientation = Orientation(info.orientation)
        let turn = readAcross && textRun != .across && rect.h > rect.w
        func cut(_ view: PixelView) -> Result<[UInt8], TurboJPEGError> {
            let stored = orientation.storedRect(ofDisplay: rect, width: view.width, height: view.height)
            let region = view.cropped(x: stored.x, y: stored.y, width: stored.w, height: stored.h)
            var image = Resampler.render(region, width: region.width, height: region.height, orientation: orientation)
            if turn { image = image.quarterTurned(clockwise: textRun == .upward) }
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

    /// Each of `boxes` cut from the photo upright with its long side at `maxSide`, grown by `margin` as `crop`
    /// does, as quality-85 JPEGs: one decoding for all of them, for a page that shows many spines of one photo.
    package static func crops(_ bytes: [UInt8], boxes: [Box], maxSide: Int, margin: Double = 0.005) throws(PhotoError)
        -> [[UInt8]]
    {
        let image = try rgb(bytes, maxSide: maxSide)
        do throws(TurboJPEGError) {
            let compressor = try JPEGCompressor()
            return try boxes.map { box throws(TurboJPEGError) in
                let rect = pixelRect(box, margin: margin, width: image.width, height: image.height)
                var pixels = [UInt8]()
                pixels.reserveCapacity(rect.w * rect.h * 3)
                for y in rect.y..<(rect.y + rect.h) {
                    let row = (y * image.width + rect.x) * 3
                    pixels += image.pixels[row..<(row + rect.w * 3)]
                }
                return try compressor.compress(RGBImage(width: rect.w, height: rect.h, pixels: pixels), quality: 85)
            }
        } catch {
            throw PhotoError(.internal, "could not encode a crop: \(error.message)", disposition: .retry(after: nil))
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
    /// the size shrinks and the search repeats, down to the floor. The quality signals are measured on the first
    /// resized picture on one core while the size estimate runs on the other.
    static func encode(
        _ view: PixelView, orientation: Orientation, target: Int, longSide: Int,
        preset: ImagePreset
    ) -> Result<Encoded, TurboJPEGError> {
        encode(width: view.width, height: view.height, target: target, longSide: longSide, preset: preset) {
            width, height in
            Resampler.render(view, width: width, height: height, orientation: orientation)
        }
    }

    /// Chroma subsamplings (`TJSAMP_*`: 4:4:4, 4:2:2, 4:2:0, 4:4:0) whose planes are never smaller than 4:2:0's, so
    /// they are resampled as planes; grey and 4:1:1 JPEGs are decoded to RGB instead.
    static let planarSubsamplings: Set<Int32> = [0, 1, 2, 4]

    /// The search behind `encode`, for a `width`×`height` stored picture that `render` scales (stored sizes given)
    /// and turns upright.
    static func encode<Picture: EncodablePicture>(
        width viewWidth: Int, height viewHeight: Int, target: Int, longSide: Int,
        preset: ImagePreset, render: (Int, Int) -> Picture
    )
        -> Result<Encoded, TurboJPEGError>
    {
        Result { () throws(TurboJPEGError) in
            // Two compressors: trial encodes run two at a time, one per core.
            let compressors = [try JPEGCompressor(), try JPEGCompressor()]
            let floor = max(1, Int(Double(preset.maxSide) * floorFactor))
            let viewLong = max(viewWidth, viewHeight)
            var side = target
            var signals: QualitySignals?
            while true {
                let scale = Double(side) / Double(viewLong)
                let image = render(
                    max(1, Int((Double(viewWidth) * scale).rounded())),
                    max(1, Int((Double(viewHeight) * scale).rounded())))
                let measure: (() -> QualitySignals)? = signals == nil ? { image.signals(longSide: longSide) } : nil
                let (quality, measured) = try startingQuality(
                    image, preset: preset, compressors: compressors, beside: measure)
                if let measured { signals = measured }
                if let (jpeg, quality) = try fit(
                    image, from: quality, preset: preset, compressors: compressors,
                    last: side <= floor)
                {
                    return Encoded(
                        jpeg: jpeg, width: image.width, height: image.height, quality: quality, signals: signals!)
                }
                side = max(floor, min(side - 1, Int(Double(side) * shrinkFactor)))
            }
        }
    }

    /// Encodes `image` whole from `quality` down in the preset's steps and returns the first JPEG within the byte
    /// target, or nil when even `minQuality` is too big (unless `last`: then that one is returned anyway).
    /// When the estimate left little room, the next step down is encoded on the other core at the same time, so a
    /// near miss costs no second full encode in sequence.
    static func fit<Picture: EncodablePicture>(
        _ image: Picture, from quality: Int, preset: ImagePreset, compressors: [JPEGCompressor],
        last: Bool
    ) throws(TurboJPEGError) -> (jpeg: [UInt8], quality: Int)? {
        let limit = preset.targetBytes.upperBound
        var quality = quality
        while true {
            let lower = max(preset.minQuality, quality - qualityStep)
            let results: [Result<[UInt8], TurboJPEGError>]
            if lower < quality && image.width * image.height > sampledAbove {
                results = Parallel.map([quality, lower]) { index, quality in
                    Result { () throws(TurboJPEGError) in try image.encoded(by: compressors[index], quality: quality) }
                }
            } else {
                results = [
                    Result { () throws(TurboJPEGError) in try image.encoded(by: compressors[0], quality: quality) }
                ]
            }
            for (offset, result) in results.enumerated() {
                let jpeg = try result.get()
                let tried = offset == 0 ? quality : lower
                if jpeg.count <= limit || (tried <= preset.minQuality && last) { return (jpeg, tried) }
                if tried <= preset.minQuality { return nil }
            }
            quality = max(preset.minQuality, (results.count == 2 ? lower : quality) - qualityStep)
        }
    }

    /// Pictures up to this many pixels are encoded whole at each trial quality; larger ones are tried on a sample.
    static let sampledAbove = 1_500_000

    /// The highest quality in the preset's steps whose estimated size fits the target, and what `beside` returned
    /// (run on the other core meanwhile). The estimate encodes every fourth 16-row band (4:2:0 MCUs, so the sample
    /// codes as it does in place) at the preset's quality and at its lowest, both at once, scales each by the rows
    /// left out, and interpolates the steps between on a log scale (JPEG size falls roughly geometrically with
    /// quality): two quarter-size encodes, whatever step the photo needs.
    static func startingQuality<Picture: EncodablePicture>(
        _ image: Picture, preset: ImagePreset, compressors: [JPEGCompressor],
        beside: (() -> QualitySignals)?
    ) throws(TurboJPEGError) -> (Int, QualitySignals?) {
        guard image.width * image.height > sampledAbove, preset.quality > preset.minQuality else {
            return (preset.quality, beside?())
        }
        let sample = image.sampled(every: 4)
        let scale = Double(image.height) / Double(sample.height)
        let ends = [preset.quality, preset.minQuality]
        let tasks = beside == nil ? 2 : 3
        let outcomes = Parallel.map(Array(0..<tasks)) { _, task -> (Result<Double, TurboJPEGError>, QualitySignals?) in
            if task == 2 { return (.success(0), beside!()) }
            return (
                Result { () throws(TurboJPEGError) in
                    Double(try sample.encoded(by: compressors[task], quality: ends[task]).count) * scale
                }, nil
            )
        }
        let high = try outcomes[0].0.get(), low = try outcomes[1].0.get()
        let signals = tasks == 3 ? outcomes[2].1 : nil
        let limit = Double(preset.targetBytes.upperBound)
        var quality = preset.quality
        while quality > preset.minQuality {
            let t = Double(preset.quality - quality) / Double(preset.quality - preset.minQuality)
            let estimate = exp(log(high) + t * (log(low) - log(high)))
            if estimate <= limit { break }
            quality = max(preset.minQuality, quality - qualityStep)
        }
        return (quality, signals)
    }
}

/// Runs a few independent pieces of work on the cores there are and returns their results in order.
enum Parallel {
    static func map<T, R>(_ items: [T], _ body: (Int, T) -> R) -> [R] {
        let slots = UnsafeMutablePointer<R>.allocate(capacity: items.count)
        defer { slots.deallocate() }
        withoutActuallyEscaping(body) { body in
            let work = Work(items: items, body: body, slots: slots)
            DispatchQueue.concurrentPerform(iterations: items.count) { index in
                (work.slots + index).initialize(to: work.body(index, work.items[index]))
            }
        }
        return (0..<items.count).map { (slots + $0).move() }
    }

    /// What the iterations share: each reads `items` and `body` and initialises only its own slot.
    private struct Work<T, R>: @unchecked Sendable {
        let items: [T]
        let body: (Int, T) -> R
        let slots: UnsafeMutablePointer<R>
    }
}

/// What the quality search needs of a resized, upright picture, RGB or planar.
protocol EncodablePicture {
    var width: Int { get }
    var height: Int { get }
    /// Every `every`-th band of 16 rows (one 4:2:0 MCU row), stacked.
    func sampled(every: Int) -> Self
    func encoded(by compressor: JPEGCompressor, quality: Int) throws(TurboJPEGError) -> [UInt8]
    func signals(longSide: Int) -> QualitySignals
}

extension RGBImage: EncodablePicture {
    func sampled(every: Int) -> RGBImage {
        let band = 16, rowBytes = width * 3
        var rows = 0
        for top in stride(from: 0, to: height, by: band * every) { rows += min(height, top + band) - top }
        let sample = [UInt8](unsafeUninitializedCapacity: rows * rowBytes) { out, initialised in
            pixels.withUnsafeBufferPointer { source in
                var o = out.baseAddress!
                for top in stride(from: 0, to: height, by: band * every) {
                    let count = (min(height, top + band) - top) * rowBytes
                    o.update(from: source.baseAddress! + top * rowBytes, count: count)
                    o += count
                }
            }
            initialised = rows * rowBytes
        }
        return RGBImage(width: width, height: rows, pixels: sample)
    }

    func encoded(by compressor: JPEGCompressor, quality: Int) throws(TurboJPEGError) -> [UInt8] {
        try compressor.compress(self, quality: quality)
    }

    func signals(longSide: Int) -> QualitySignals { QualitySignals.measure(self, longSide: longSide) }
}

extension YUVImage: EncodablePicture {
    func sampled(every: Int) -> YUVImage { sampled(band: 16, every: every) }

    func encoded(by compressor: JPEGCompressor, quality: Int) throws(TurboJPEGError) -> [UInt8] {
        try compressor.compress(self, quality: quality)
    }

    func signals(longSide: Int) -> QualitySignals { QualitySignals.measure(self, longSide: longSide) }
}
