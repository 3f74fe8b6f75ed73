/// A text line's place on a picture: a rectangle at any angle, in the text's own frame. `origin` is the corner
/// where reading starts (the top-left of the text as read), `along` runs the text's length as it is read and
/// `across` its height, from the top of the letters to their foot. Pixel coordinates, continuous: pixel (x, y)
/// covers x…x+1, y…y+1.
package struct LineFrame: Sendable, Equatable {
    package var origin: SIMD2<Double>
    package var along: SIMD2<Double>
    package var across: SIMD2<Double>

    package init(origin: SIMD2<Double>, along: SIMD2<Double>, across: SIMD2<Double>) {
        self.origin = origin; self.along = along; self.across = across
    }

    package var length: Double { (along * along).sum().squareRoot() }
    package var thickness: Double { (across * across).sum().squareRoot() }
    package var centre: SIMD2<Double> { origin + 0.5 * along + 0.5 * across }
    package var corners: [SIMD2<Double>] { [origin, origin + along, origin + along + across, origin + across] }

    /// The same place read the other way round (the text was upside down).
    package var turned: LineFrame { LineFrame(origin: origin + along + across, along: -along, across: -across) }

    /// Whether `point` lies inside.
    func contains(_ point: SIMD2<Double>) -> Bool {
        let d = point - origin
        let a = (d * along).sum() / (along * along).sum(), b = (d * across).sum() / (across * across).sum()
        return (0...1).contains(a) && (0...1).contains(b)
    }

    /// Whether the two lie on the same ground: either's centre is inside the other.
    func overlaps(_ other: LineFrame) -> Bool { contains(other.centre) || other.contains(centre) }

    /// Scaled about the picture's origin, as when the picture is resized by `scale`.
    func scaled(_ scale: Double) -> LineFrame {
        LineFrame(origin: origin * scale, along: along * scale, across: across * scale)
    }

    /// A rectangle of `width` along `axis` (a unit vector) and `height` across it, centred at `centre`, in the
    /// frame a reader would take: a line much taller than wide is read down its length (as an English spine),
    /// any other left to right; the orientation classifier turns those that are upside down.
    static func reading(centre: SIMD2<Double>, axis: SIMD2<Double>, width: Double, height: Double) -> LineFrame {
        // The side closer to horizontal first, pointing right; the other then points down.
        var u = axis, w = width, h = height
        if abs(u.x) < abs(u.y) { u = SIMD2(-u.y, u.x); swap(&w, &h) }
        if u.x < 0 { u = -u }
        let v = SIMD2(-u.y, u.x)
        // Taller than wide by half again: turned a quarter anticlockwise, as PaddleOCR turns such a crop.
        let (a, b) = h >= 1.5 * w ? (v * h, -u * w) : (u * w, v * h)
        return LineFrame(origin: centre - 0.5 * a - 0.5 * b, along: a, across: b)
    }
}

/// DB text detection's post-processing: the detector's probability map turned into text-line rectangles.
/// The map is thresholded (and dilated by one pixel), its connected regions found, each region's minimum-area
/// rectangle taken, rectangles whose mean probability is low dropped, and each kept one expanded by the margin
/// the detector was trained to leave out (DB's "unclip": distance = area × ratio ÷ perimeter).
package enum TextLineFinder {
    /// A pixel is text above this probability.
    static let threshold: Float = 0.3
    /// A region is a line when its rectangle's mean probability is at least this.
    static let boxThreshold = 0.5
    /// DB's expansion ratio.
    static let unclipRatio = 1.6
    /// Regions thinner than this (map pixels) are specks.
    static let minimumSide = 3.0
    static let maximumCandidates = 1000

    /// The lines on a `width`×`height` probability map, in map pixels, with their mean probabilities.
    package static func lines(probabilities p: [Float], width: Int, height: Int) -> [(frame: LineFrame, score: Double)]
    {
        precondition(p.count == width * height)
        // Thresholded, then dilated by a 2×2 kernel (each pixel takes the maximum of itself, left, up, up-left).
        var mask = [Bool](repeating: false, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                var on = p[y * width + x] > threshold
                if !on, x > 0 { on = p[y * width + x - 1] > threshold }
                if !on, y > 0 {
                    on = p[(y - 1) * width + x] > threshold || (x > 0 && p[(y - 1) * width + x - 1] > threshold)
                }
                mask[y * width + x] = on
            }
        }
        var found: [(frame: LineFrame, score: Double)] = []
        var label = [Int32](repeating: 0, count: width * height)
        var next: Int32 = 0
        var stack: [Int] = []
        for start in 0..<(width * height) where mask[start] && label[start] == 0 {
            next += 1
            if next > maximumCandidates { break }
            // 8-connected flood fill, keeping each row's leftmost and rightmost pixel: the convex hull of those
            // is the hull of the whole region.
            var extremes: [Int: (Int, Int)] = [:]
            label[start] = next
            stack.append(start)
            while let index = stack.popLast() {
                let x = index % width, y = index / width
                let row = extremes[y] ?? (x, x)
                extremes[y] = (min(row.0, x), max(row.1, x))
                for dy in -1...1 {
                    let ny = y + dy
                    guard ny >= 0, ny < height else { continue }
                    for dx in -1...1 {
                        let nx = x + dx
                        guard nx >= 0, nx < width else { continue }
                        let n = ny * width + nx
                        if mask[n] && label[n] == 0 { label[n] = next; stack.append(n) }
                    }
                }
            }
            var points: [SIMD2<Double>] = []
            for (y, row) in extremes {
                points.append(SIMD2(Double(row.0) + 0.5, Double(y) + 0.5))
                if row.1 != row.0 { points.append(SIMD2(Double(row.1) + 0.5, Double(y) + 0.5)) }
            }
            guard let rect = minimumAreaRectangle(convexHull(points)), min(rect.width, rect.height) >= minimumSide
            else { continue }
            let score = meanProbability(p, width: width, height: height, rect: rect)
            guard score >= boxThreshold else { continue }
            let distance = rect.width * rect.height * unclipRatio / (2 * (rect.width + rect.height))
            let grown = (width: rect.width + 2 * distance, height: rect.height + 2 * distance)
            guard min(grown.width, grown.height) >= minimumSide + 2 else { continue }
            found.append(
                (
                    LineFrame.reading(centre: rect.centre, axis: rect.axis, width: grown.width, height: grown.height),
                    score
                ))
        }
        return found
    }

    /// A rectangle at any angle: `axis` is the unit vector along its `width`.
    struct Rectangle {
        var centre: SIMD2<Double>
        var axis: SIMD2<Double>
        var width: Double
        var height: Double

        /// Whether `point` lies inside.
        func contains(_ point: SIMD2<Double>) -> Bool {
            let d = point - centre, normal = SIMD2(-axis.y, axis.x)
            return abs((d * axis).sum()) <= width / 2 && abs((d * normal).sum()) <= height / 2
        }
    }

    /// The convex hull of `points`, anticlockwise (Andrew's monotone chain).
    static func convexHull(_ points: [SIMD2<Double>]) -> [SIMD2<Double>] {
        let sorted = points.sorted { $0.x != $1.x ? $0.x < $1.x : $0.y < $1.y }
        guard sorted.count > 2 else { return sorted }
        func cross(_ o: SIMD2<Double>, _ a: SIMD2<Double>, _ b: SIMD2<Double>) -> Double {
            (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
        }
        var lower: [SIMD2<Double>] = [], upper: [SIMD2<Double>] = []
        for point in sorted {
            while lower.count >= 2 && cross(lower[lower.count - 2], lower[lower.count - 1], point) <= 0 {
                lower.removeLast()
            }
            lower.append(point)
        }
        for point in sorted.reversed() {
            while upper.count >= 2 && cross(upper[upper.count - 2], upper[upper.count - 1], point) <= 0 {
                upper.removeLast()
            }
            upper.append(point)
        }
        return Array(lower.dropLast() + upper.dropLast())
    }

    /// The smallest rectangle around a convex polygon: one of its sides lies along an edge of the polygon.
    static func minimumAreaRectangle(_ hull: [SIMD2<Double>]) -> Rectangle? {
        guard hull.count >= 2 else { return nil }
        var best: Rectangle?, bestArea = Double.infinity
        for i in hull.indices {
            let edge = hull[(i + 1) % hull.count] - hull[i]
            let length = (edge * edge).sum().squareRoot()
            guard length > 1e-9 else { continue }
            let u = edge / length, v = SIMD2(-u.y, u.x)
            var minU = Double.infinity, maxU = -Double.infinity, minV = Double.infinity, maxV = -Double.infinity
            for point in hull {
                let a = (point * u).sum(), b = (point * v).sum()
                minU = min(minU, a); maxU = max(maxU, a); minV = min(minV, b); maxV = max(maxV, b)
            }
            let area = (maxU - minU) * (maxV - minV)
            if area < bestArea {
                bestArea = area
                best = Rectangle(
                    centre: u * ((minU + maxU) / 2) + v * ((minV + maxV) / 2), axis: u,
                    width: maxU - minU, height: maxV - minV)
            }
        }
        return best
    }

    /// The mean of the map over the pixels whose centres lie in `rect` (DB's "fast" box score).
    static func meanProbability(_ p: [Float], width: Int, height: Int, rect: Rectangle) -> Double {
        let halfX: Double = abs(rect.axis.x) * rect.width / 2 + abs(rect.axis.y) * rect.height / 2
        let halfY: Double = abs(rect.axis.y) * rect.width / 2 + abs(rect.axis.x) * rect.height / 2
        let x0 = max(0, Int((rect.centre.x - halfX).rounded(.down))),
            x1 = min(width - 1, Int((rect.centre.x + halfX).rounded(.up)))
        let y0 = max(0, Int((rect.centre.y - halfY).rounded(.down))),
            y1 = min(height - 1, Int((rect.centre.y + halfY).rounded(.up)))
        guard x0 <= x1, y0 <= y1 else { return 0 }
        var sum = 0.0, count = 0
        for y in y0...y1 {
            for x in x0...x1 where rect.contains(SIMD2(Double(x) + 0.5, Double(y) + 0.5)) {
                sum += Double(p[y * width + x]); count += 1
            }
        }
        return count > 0 ? sum / Double(count) : 0
    }
}
