/// A rectangle normalised to the photo as displayed (after EXIF orientation), origin top-left,
/// every coordinate in 0…1 and x1 ≤ x2, y1 ≤ y2.
package struct Box: Hashable, Sendable, Codable {
    package var x1: Double, y1: Double, x2: Double, y2: Double

    /// Clamps each coordinate into 0…1 and orders the corners.
    package init(x1: Double, y1: Double, x2: Double, y2: Double) {
        let xs = [x1, x2].map(Self.clamp).sorted(), ys = [y1, y2].map(Self.clamp).sorted()
        self.x1 = xs[0]; self.x2 = xs[1]; self.y1 = ys[0]; self.y2 = ys[1]
    }

    /// Gemini's `box_2d`: `[ymin, xmin, ymax, xmax]` on a 0–1000 grid, y first.
    /// Returns nil unless there are exactly four finite numbers.
    package init?(gemini box2D: [Double]) {
        guard box2D.count == 4, box2D.allSatisfy(\.isFinite) else { return nil }
        self.init(x1: box2D[1] / 1000, y1: box2D[0] / 1000, x2: box2D[3] / 1000, y2: box2D[2] / 1000)
    }

    package var area: Double { (x2 - x1) * (y2 - y1) }

    /// The horizontal middle: where a spine stands, left to right.
    package var midX: Double { (x1 + x2) / 2 }

    /// The smallest box holding both.
    package func union(_ other: Box) -> Box {
        Box(x1: min(x1, other.x1), y1: min(y1, other.y1), x2: max(x2, other.x2), y2: max(y2, other.y2))
    }

    /// Rounded to four decimals so results stay readable and stable across runs.
    package var rounded: Box {
        func r(_ v: Double) -> Double { (v * 10_000).rounded() / 10_000 }
        return Box(x1: r(x1), y1: r(y1), x2: r(x2), y2: r(y2))
    }

    private static func clamp(_ v: Double) -> Double { v.isFinite ? min(1, max(0, v)) : 0 }
}
