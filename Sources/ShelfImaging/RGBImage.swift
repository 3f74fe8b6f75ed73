import Foundation
import ShelfCore

/// 8-bit interleaved RGB pixels, rows packed (no padding).
package struct RGBImage: Sendable {
    package var width: Int
    package var height: Int
    package var pixels: [UInt8]

    package init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 3, "RGBImage: pixel count does not match the size")
        self.width = width; self.height = height; self.pixels = pixels
    }

    /// Scaled down to `width`×`height` by area averaging (never enlarged: a larger size is clamped to this one's).
    package func resized(width: Int, height: Int) -> RGBImage {
        withView { Resampler.render($0, width: width, height: height, orientation: Orientation(1)) }
    }

    /// Enlarged to `width`×`height` (each at least this one's), each pixel interpolated between its four nearest.
    /// `resized` only shrinks: a JPEG could be decoded at up to twice its size, but a HEIC photo could not, and both
    /// are pixels here.
    package func enlarged(width: Int, height: Int) -> RGBImage {
        /// Where each new column or row falls between two old ones, and how near the second it is.
        func spans(_ new: Int, _ old: Int) -> [(Int, Int, Double)] {
            (0..<new).map { index in
                let at = max(0, (Double(index) + 0.5) * Double(old) / Double(new) - 0.5)
                let first = min(Int(at), old - 1)
                return (first, min(first + 1, old - 1), at - Double(first))
            }
        }
        let columns = spans(width, self.width), rows = spans(height, self.height)
        var out = [UInt8](repeating: 0, count: width * height * 3)
        for (y, (top, bottom, down)) in rows.enumerated() {
            for (x, (left, right, across)) in columns.enumerated() {
                for channel in 0..<3 {
                    func at(_ row: Int, _ column: Int) -> Double {
                        Double(pixels[(row * self.width + column) * 3 + channel])
                    }
                    let upper = at(top, left) + (at(top, right) - at(top, left)) * across
                    let lower = at(bottom, left) + (at(bottom, right) - at(bottom, left)) * across
                    out[(y * width + x) * 3 + channel] = UInt8((upper + (lower - upper) * down).rounded())
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: out)
    }

    /// Sharpened by an unsharp mask: each sample moves `amount` times its difference from a Gaussian blur of
    /// deviation `sigma` pixels (ImageMagick's `-unsharp 0x<sigma>+<amount>+0`). Edges at the picture's border are
    /// taken as continuing.
    package func sharpened(sigma: Double, amount: Double) -> RGBImage {
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        let gauss = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let weights = gauss.map { Float($0 / gauss.reduce(0, +)) }
        let (columns, rows, gain) = (width, height, Float(amount))
        let samples = columns * 3
        var blurred = [Float](repeating: 0, count: pixels.count)
        var out = [UInt8](repeating: 0, count: pixels.count)
        var line = [Float](repeating: 0, count: (columns + 2 * radius) * 3)
        var sum = [Float](repeating: 0, count: samples)
        pixels.withUnsafeBufferPointer { source in
            blurred.withUnsafeMutableBufferPointer { blur in
                // Across each row, its ends repeated beyond it.
                for y in 0..<rows {
                    for x in 0..<(columns + 2 * radius) {
                        let from = (y * columns + min(max(x - radius, 0), columns - 1)) * 3
                        for channel in 0..<3 { line[x * 3 + channel] = Float(source[from + channel]) }
                    }
                    line.withUnsafeBufferPointer { line in
                        for (tap, weight) in weights.enumerated() {
                            let shifted = line.baseAddress! + tap * 3, row = blur.baseAddress! + y * samples
                            for i in 0..<samples { row[i] += weight * shifted[i] }
                        }
                    }
                }
            }
            // Down each column, the top and bottom rows repeated beyond them; then the mask.
            blurred.withUnsafeBufferPointer { blur in
                out.withUnsafeMutableBufferPointer { sharp in
                    sum.withUnsafeMutableBufferPointer { sum in
                        for y in 0..<rows {
                            sum.update(repeating: 0)
                            for (tap, weight) in weights.enumerated() {
                                let row = blur.baseAddress! + min(max(y + tap - radius, 0), rows - 1) * samples
                                for i in 0..<samples { sum[i] += weight * row[i] }
                            }
                            for i in 0..<samples {
                                let value = Float(source[y * samples + i])
                                let sharpened = (value + gain * (value - sum[i])).rounded()
                                sharp[y * samples + i] = UInt8(min(255, max(0, sharpened)))
                            }
                        }
                    }
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: out)
    }

    /// The rectangle `x..<x+width`, `y..<y+height`, which must lie inside, as a picture of its own.
    package func cut(x: Int, y: Int, width: Int, height: Int) -> RGBImage {
        precondition(
            x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= self.width && y + height <= self.height)
        var rows = [UInt8](); rows.reserveCapacity(width * height * 3)
        for row in y..<(y + height) {
            rows += pixels[((row * self.width + x) * 3)..<((row * self.width + x + width) * 3)]
        }
        return RGBImage(width: width, height: height, pixels: rows)
    }

    /// Turned a quarter, clockwise or anticlockwise: width and height swap.
    package func quarterTurned(clockwise: Bool) -> RGBImage {
        var turned = [UInt8](repeating: 0, count: pixels.count)
        let newWidth = height
        for y in 0..<height {
            for x in 0..<width {
                // Clockwise the top row becomes the right column; anticlockwise, the left one read upwards.
                let (nx, ny) = clockwise ? (height - 1 - y, x) : (y, width - 1 - x)
                let from = (y * width + x) * 3, to = (ny * newWidth + nx) * 3
                turned[to] = pixels[from]; turned[to + 1] = pixels[from + 1]; turned[to + 2] = pixels[from + 2]
            }
        }
        return RGBImage(width: newWidth, height: width, pixels: turned)
    }

    /// Runs `body` with a view of the whole image.
    func withView<T>(_ body: (PixelView) throws -> T) rethrows -> T {
        try pixels.withUnsafeBufferPointer { buffer in
            try body(PixelView(base: buffer.baseAddress!, width: width, height: height, rowBytes: width * 3))
        }
    }
}

/// A borrowed window on RGB pixels someone else owns (an `RGBImage`, or libheif's decoded plane):
/// lets the resampler read a sub-rectangle or a padded plane without copying it first.
struct PixelView {
    var base: UnsafePointer<UInt8>
    var width: Int
    var height: Int
    /// Bytes from one row to the next (≥ width × channels).
    var rowBytes: Int
    /// Samples a pixel: 3 (RGB) or 1 (one plane of a YUV picture).
    var channels = 3

    /// The rectangle `x..<x+width`, `y..<y+height` of this view, which must lie inside it.
    func cropped(x: Int, y: Int, width: Int, height: Int) -> PixelView {
        precondition(
            x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= self.width && y + height <= self.height)
        return PixelView(
            base: base + y * rowBytes + x * channels, width: width, height: height, rowBytes: rowBytes,
            channels: channels)
    }
}

/// The eight EXIF orientations as pixel maps. `stored` is the picture as encoded; the display picture is
/// what a viewer shows after applying the tag (5…8 swap width and height).
struct Orientation {
    let value: Int

    init(_ value: Int) { self.value = (1...8).contains(value) ? value : 1 }

    var swapsAxes: Bool { value >= 5 }

    /// Where stored pixel (x, y) of a `width`×`height` stored picture lands in the display picture,
    /// as `origin + x * xStep + y * yStep` in pixels of the display picture (row-major, its rows `rowPixels`
    /// apart: by default its width, no padding).
    func displayIndexSteps(width: Int, height: Int, rowPixels: Int? = nil) -> (origin: Int, xStep: Int, yStep: Int) {
        let displayWidth = rowPixels ?? (swapsAxes ? height : width)
        // dx = ax·x + bx·y + cx, dy = ay·x + by·y + cy (EXIF 2.32, tag 0x0112)
        let (ax, bx, cx, ay, by, cy): (Int, Int, Int, Int, Int, Int)
        switch value {
        case 2: (ax, bx, cx, ay, by, cy) = (-1, 0, width - 1, 0, 1, 0) // mirrored left-right
        case 3: (ax, bx, cx, ay, by, cy) = (-1, 0, width - 1, 0, -1, height - 1) // turned 180°
        case 4: (ax, bx, cx, ay, by, cy) = (1, 0, 0, 0, -1, height - 1) // mirrored top-bottom
        case 5: (ax, bx, cx, ay, by, cy) = (0, 1, 0, 1, 0, 0) // transposed
        case 6: (ax, bx, cx, ay, by, cy) = (0, -1, height - 1, 1, 0, 0) // needs 90° clockwise
        case 7: (ax, bx, cx, ay, by, cy) = (0, -1, height - 1, -1, 0, width - 1) // transversed
        case 8: (ax, bx, cx, ay, by, cy) = (0, 1, 0, -1, 0, width - 1) // needs 90° anticlockwise
        default: (ax, bx, cx, ay, by, cy) = (1, 0, 0, 0, 1, 0)
        }
        return (cy * displayWidth + cx, ay * displayWidth + ax, by * displayWidth + bx)
    }

    /// `box`, normalised to the stored picture, normalised to the display picture.
    func displayed(_ box: Box) -> Box {
        func point(_ u: Double, _ v: Double) -> (Double, Double) {
            switch value {
            case 2: (1 - u, v)
            case 3: (1 - u, 1 - v)
            case 4: (u, 1 - v)
            case 5: (v, u)
            case 6: (1 - v, u)
            case 7: (1 - v, 1 - u)
            case 8: (v, 1 - u)
            default: (u, v)
            }
        }
        let (x1, y1) = point(box.x1, box.y1), (x2, y2) = point(box.x2, box.y2)
        return Box(x1: x1, y1: y1, x2: x2, y2: y2) // Box orders the corners
    }

    /// The stored rectangle holding display rectangle `x..<x+w`, `y..<y+h` of a `width`×`height` stored picture.
    func storedRect(ofDisplay rect: (x: Int, y: Int, w: Int, h: Int), width: Int, height: Int)
        -> (x: Int, y: Int, w: Int, h: Int)
    {
        let (x, y, w, h) = rect
        switch value {
        case 2: return (width - x - w, y, w, h)
        case 3: return (width - x - w, height - y - h, w, h)
        case 4: return (x, height - y - h, w, h)
        case 5: return (y, x, h, w)
        case 6: return (y, height - x - w, h, w)
        case 7: return (width - y - h, height - x - w, h, w)
        case 8: return (width - y - h, x, h, w)
        default: return rect
        }
    }
}
