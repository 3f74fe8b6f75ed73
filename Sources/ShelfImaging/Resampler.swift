import Dispatch

/// Area-average (box filter) downscaling with the orientation applied as pixels are written.
/// Each output pixel is the mean of the source area it covers, fractional edge pixels weighted by coverage:
/// no aliasing on downscale, and separable (columns, then rows) with 14-bit fixed-point weights.
/// Hand-written: TurboJPEG scales only by eighths; this finishes the resize and turns the picture in one pass.
enum Resampler {
    private static let fractionBits = 14
    private static let one = Int32(1 << fractionBits)

    /// `source` scaled to `width`×`height` (sizes in the stored orientation, each ≤ the source's), then turned
    /// to `orientation`: the result has the display size. Never upscales: a larger size is clamped to the source.
    /// Works one output row at a time (columns first, then along the row), so no intermediate picture is held.
    static func render(_ source: PixelView, width: Int, height: Int, orientation: Orientation) -> RGBImage {
        let width = max(1, min(width, source.width)), height = max(1, min(height, source.height))
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height * 3) { out, initialised in
            draw(
                source, width: width, height: height, orientation: orientation, into: out.baseAddress!,
                rowPixels: orientation.swapsAxes ? height : width)
            initialised = width * height * 3
        }
        return RGBImage(
            width: orientation.swapsAxes ? height : width, height: orientation.swapsAxes ? width : height,
            pixels: pixels)
    }

    /// Scales `source` (its `channels` interleaved samples a pixel: 3 for RGB, 1 for a plane of Y, Cb or Cr) to
    /// `width`×`height` (stored orientation, each ≤ the source's) and writes it turned to `orientation` into `out`,
    /// whose display rows are `rowPixels` pixels apart.
    static func draw(
        _ source: PixelView, width: Int, height: Int, orientation: Orientation,
        into out: UnsafeMutablePointer<UInt8>, rowPixels: Int
    ) {
        precondition(width <= source.width && height <= source.height)
        let channels = source.channels
        let horizontal = Taps(source: source.width, target: width)
        let vertical = Taps(source: source.height, target: height)
        let (origin, xStep, yStep) = orientation.displayIndexSteps(width: width, height: height, rowPixels: rowPixels)
        let rowCount = source.width * channels
        // Large pictures are done in bands of rows on the cores there are; each band has its own scratch rows.
        let bands = source.width * source.height >= 1_000_000 && height >= 64 ? 4 : 1
        let shared = Bands(source: source, out: out)
        DispatchQueue.concurrentPerform(iterations: bands) { band in
            let source = shared.source, out = shared.out
            let sums = UnsafeMutableBufferPointer<Int32>.allocate(capacity: rowCount)
            let row = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: rowCount)
            defer { sums.deallocate(); row.deallocate() }
            for y in height * band / bands..<height * (band + 1) / bands {
                // Down the columns: the output row's share of each source row it covers.
                for t in 0..<vertical.count {
                    let w = vertical.weights[y &* vertical.count &+ t]
                    let input = source.base + (vertical.starts[y] &+ t) &* source.rowBytes
                    if t == 0 {
                        for i in 0..<rowCount { sums[i] = w &* Int32(input[i]) }
                    } else if w != 0 {
                        for i in 0..<rowCount { sums[i] &+= w &* Int32(input[i]) }
                    }
                }
                for i in 0..<rowCount { row[i] = round(sums[i]) }
                // Along the row, each pixel written where the orientation puts it.
                let base = out + (origin + y * yStep) * channels
                let step = xStep * channels
                switch (channels, horizontal.count) {
                case (3, 1): along(row, horizontal, taps: 1, channels: 3, into: base, step: step, width: width)
                case (3, 2): along(row, horizontal, taps: 2, channels: 3, into: base, step: step, width: width)
                case (3, 3): along(row, horizontal, taps: 3, channels: 3, into: base, step: step, width: width)
                case (3, _):
                    along(row, horizontal, taps: horizontal.count, channels: 3, into: base, step: step, width: width)
                case (_, 1): along(row, horizontal, taps: 1, channels: 1, into: base, step: step, width: width)
                case (_, 2): along(row, horizontal, taps: 2, channels: 1, into: base, step: step, width: width)
                case (_, 3): along(row, horizontal, taps: 3, channels: 1, into: base, step: step, width: width)
                default:
                    along(row, horizontal, taps: horizontal.count, channels: 1, into: base, step: step, width: width)
                }
            }
        }
    }

    /// What the bands share: every band reads all of `source` and writes only its own rows of `out`.
    private struct Bands: @unchecked Sendable {
        let source: PixelView
        let out: UnsafeMutablePointer<UInt8>
    }

    /// One row along: `taps` and `channels` are constants at the call sites, so the inner loops unroll.
    @inline(__always)
    private static func along(
        _ row: UnsafeMutableBufferPointer<UInt8>, _ taps: Taps, taps count: Int, channels: Int,
        into out: UnsafeMutablePointer<UInt8>, step: Int, width: Int
    ) {
        taps.weights.withUnsafeBufferPointer { weights in
            taps.starts.withUnsafeBufferPointer { starts in
                let weights = weights.baseAddress!, starts = starts.baseAddress!, row = row.baseAddress!
                var o = out
                if channels == 3 {
                    for x in 0..<width {
                        var r: Int32 = 0, g: Int32 = 0, b: Int32 = 0
                        var p = row + starts[x] &* 3
                        let w = weights + x &* count
                        for t in 0..<count {
                            r &+= w[t] &* Int32(p[0]); g &+= w[t] &* Int32(p[1]); b &+= w[t] &* Int32(p[2])
                            p += 3
                        }
                        o[0] = round(r); o[1] = round(g); o[2] = round(b)
                        o += step
                    }
                } else {
                    for x in 0..<width {
                        var v: Int32 = 0
                        let p = row + starts[x], w = weights + x &* count
                        for t in 0..<count { v &+= w[t] &* Int32(p[t]) }
                        o[0] = round(v)
                        o += step
                    }
                }
            }
        }
    }

    /// Weights are non-negative and sum to `one`, so a sum lies in 0…255·one: no clamping, no overflow.
    @inline(__always)
    private static func round(_ sum: Int32) -> UInt8 {
        UInt8(truncatingIfNeeded: (sum &+ one / 2) &>> Int32(fractionBits))
    }

    /// For each output position: the first source index and `count` weights (zero-padded), summing to `one`.
    private struct Taps {
        var starts: [Int]
        var weights: [Int32]
        var count: Int

        init(source: Int, target: Int) {
            let scale = Double(source) / Double(target) // ≥ 1: only ever downscaling
            // An area of `scale` pixels touches at most ⌈scale⌉ + 1 of them; a same-size copy needs one.
            count = target == source ? 1 : min(Int(scale.rounded(.up)) + 1, source)
            starts = []; starts.reserveCapacity(target)
            weights = [Int32](repeating: 0, count: target * count)
            for i in 0..<target {
                let from = Double(i) * scale, to = min(Double(source), Double(i + 1) * scale)
                // Every tap lies inside the source, so the loops read no further than its last pixel.
                let start = min(Int(from), source - count)
                starts.append(start)
                var total: Int32 = 0, largest = 0
                for t in 0..<count {
                    let j = Double(start + t)
                    let overlap = max(0, min(to, j + 1) - max(from, j))
                    let w = Int32((overlap / scale * Double(one)).rounded())
                    weights[i * count + t] = w
                    total += w
                    if w > weights[i * count + largest] { largest = t }
                }
                weights[i * count + largest] += one - total // rounding residue: the sum is exactly one
            }
        }
    }
}
