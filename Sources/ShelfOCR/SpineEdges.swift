import Foundation
internal import ShelfImaging

/// The sides of the books standing in each row of a picture of shelves: near-vertical straight edges as long as a
/// good part of the row, as edge-based spine segmentation finds them (edges, then straight lines, then spine
/// boundaries). A row is the band between two of the boards `LineSpines` finds (the whole picture when there are
/// none); its height is its books' as their lines show it, from the top of its highest upright line to the foot of
/// its lowest. `LineSpines` groups the lines read by them: a line across a spine belongs to the spine whose sides
/// hold it, and lines with a side between them are two books.
///
/// The edges are the horizontal brightness steps of a copy of the picture at most `workSide` on its longer side, in
/// whichever colour channel steps most (two books of one brightness but different colours still show their sides),
/// thinned to the strongest pixel across, and only where the step is steeper across than up or down. Straight
/// lines through them come from a Hough transform over x and slope, the slope within `LineSpines.axisTolerance` of
/// upright (books lean, and a photo may be tilted a few degrees, as much as the lines read along them are): unlike
/// region growing (LSD), it follows a side through the stickers, shadows and labels that break its edge, and the
/// row's height bounds its cost. A line is a boundary where its edge pixels run for at least `lengthShare` of the
/// row's height with at least `support` of the rows on it; the strongest of several within a spine's narrowest
/// width (half the median lettering across) is kept, so the two sides of the gap between two books are one boundary.
///
/// Lettering draws straight edges too: the feet and tops of the letters of a title along a spine line up for the
/// title's length. The middle of every upright line read (its lettering, `lettering` of its box) is left out of the
/// edges: a line read lies on one spine, so no side runs through it.
package struct SpineEdges: Sendable, Equatable {
    /// One side of a standing spine, in the picture's pixels: the straight edge through `x` at row `middle`, moving
    /// `slope` pixels across for each row down, from row `top` to row `bottom`.
    package struct Boundary: Sendable, Equatable {
        package var x: Double, middle: Double, slope: Double
        package var top: Double, bottom: Double

        /// Where the edge is (or would be, carried along its slope) at row `y`.
        package func x(at y: Double) -> Double { x + slope * (y - middle) }

        /// Whether the edge runs past row `y`.
        func covers(_ y: Double) -> Bool { y >= top && y <= bottom }
    }

    /// Left to right within each row, rows from the top.
    package var boundaries: [Boundary]
    /// The boards whose rows were looked in (`find`), which `LineSpines` then need not look for again.
    var boards: [LineSpines.Board]?

    /// The longer side of the copy the edges are found on: half the 2400 pixels the reader reads photos at, where a
    /// thin spine's lettering is still a few pixels wide, and the cost (a pass over the copy, then the votes of its
    /// edge pixels) stays about a tenth of a second at most (0.03–0.12 s a photo in `shelfd-bench-ocr` on 2 busy
    /// cores, against 2–9 s for the whole reading).
    static let workSide = 1200
    /// A brightness step is an edge from this (0…255, in one channel), as `LineSpines.edgeStep` says of the picture's
    /// strips.
    static let edgeStep = LineSpines.edgeStep
    /// A boundary runs for at least this share of its row's height: the sides of two neighbours run from the shorter
    /// one's top to the board, while a picture printed on a spine, or a word's letters, is a small part of it.
    static let lengthShare = 0.5
    /// At least this share of the rows along a boundary show its edge; gaps (a sticker, a shadow) are at most the
    /// median lettering's height long.
    static let support = 0.5

    /// The boundaries of the standing spines on `picture`, whose `lines` were read, within the rows between
    /// `boards`.
    static func find(in picture: RGBImage, lines: [TextLine], boards: [LineSpines.Board]) -> SpineEdges {
        let upright = lines.map(\.frame).filter(LineSpines.isUpright)
        guard !upright.isEmpty, picture.width >= 8, picture.height >= 8 else {
            return SpineEdges(boundaries: [], boards: boards)
        }
        let scale = min(1, Double(workSide) / Double(max(picture.width, picture.height)))
        let small =
            scale < 1
            ? picture.resized(
                width: max(8, Int((Double(picture.width) * scale).rounded())),
                height: max(8, Int((Double(picture.height) * scale).rounded()))) : picture
        let sx = Double(small.width) / Double(picture.width), sy = Double(small.height) / Double(picture.height)
        var edges = EdgeMap(small)
        let lettering = upright.map { letteringWidth($0) }.sorted()[upright.count / 2] * sx
        for frame in upright { edges.leaveOut(frame, scaleX: sx, scaleY: sy) }
        var boundaries: [Boundary] = []
        for band in bands(boards, height: picture.height) {
            let inside = upright.filter { band.contains($0.centre.y) }
            guard !inside.isEmpty else { continue }
            // The books' height as their lines show it; their sides are looked for over the whole band, up to the
            // books' heads, where a name may be set across a spine above its title.
            let top = max(band.lowerBound, inside.map { LineSpines.rows($0).0 }.min()!)
            let bottom = min(band.upperBound, inside.map { LineSpines.rows($0).1 }.max()!)
            let rows = max(0, Int(band.lowerBound * sy))..<min(small.height, Int((band.upperBound * sy).rounded(.up)))
            let length = lengthShare * (bottom - top) * sy
            boundaries += edges.boundaries(rows: rows, length: length, spacing: max(2, lettering / 2)).map { b in
                Boundary(
                    x: b.x / sx, middle: b.middle / sy, slope: b.slope * sy / sx, top: b.top / sy, bottom: b.bottom / sy
                )
            }
        }
        return SpineEdges(boundaries: boundaries, boards: boards)
    }

    /// The width across a line of its lettering, the tops of its tallest letters to the feet of its lowest: on the
    /// rendered shelves (scripts/make-ocr-fixtures.sh) about 0.7 of its box's thickness, DB's margin the rest.
    static func letteringWidth(_ frame: LineFrame) -> Double { lettering * frame.thickness }
    /// The share of a line's box its lettering spans across it, and a little more (`letteringWidth`).
    static let lettering = 0.75

    /// The bands of rows between `boards`, top to bottom.
    static func bands(_ boards: [LineSpines.Board], height: Int) -> [ClosedRange<Double>] {
        var bands: [ClosedRange<Double>] = [], top = 0.0
        for board in boards.sorted(by: { $0.top < $1.top }) where board.top > top {
            bands.append(top...board.top); top = board.bottom
        }
        if Double(height) > top { bands.append(top...Double(height)) }
        return bands
    }

    /// The boundaries nearest `point` on its left and on its right, among those running past its row.
    func sides(of point: SIMD2<Double>) -> (left: Boundary, right: Boundary)? {
        let here = boundaries.filter { $0.covers(point.y) }
        let left = here.filter { $0.x(at: point.y) < point.x }.max { $0.x(at: point.y) < $1.x(at: point.y) }
        let right = here.filter { $0.x(at: point.y) > point.x }.min { $0.x(at: point.y) < $1.x(at: point.y) }
        guard let left, let right else { return nil }
        return (left, right)
    }

    /// Whether a word set across the picture lies on the spine of the upright line `line`: both between the two
    /// boundaries nearest the word, the word's lettering within them (its box may pass them by DB's expansion).
    func holds(_ word: LineFrame, onSpineOf line: LineFrame) -> Bool {
        guard let (left, right) = sides(of: word.centre) else { return false }
        let margin = word.thickness * TextLineFinder.unclipRatio / (2 * (1 + TextLineFinder.unclipRatio))
        let xs = word.corners.map(\.x), y = word.centre.y
        guard xs.min()! >= left.x(at: y) - margin, xs.max()! <= right.x(at: y) + margin else { return false }
        let c = line.centre
        return c.x > left.x(at: c.y) && c.x < right.x(at: c.y)
    }

    /// Whether two lines lie between the same two boundaries, found on either side of both.
    func holdTogether(_ a: LineFrame, _ b: LineFrame) -> Bool {
        guard let one = sides(of: a.centre), let other = sides(of: b.centre) else { return false }
        return one.left == other.left && one.right == other.right
    }

    /// Whether a boundary runs between two lines all along the rows they share (from one's middle to the other's
    /// when they share none): they lie on two spines.
    func separates(_ a: LineFrame, _ b: LineFrame) -> Bool {
        let (a0, a1) = LineSpines.rows(a), (b0, b1) = LineSpines.rows(b)
        let from = max(a0, b0), to = min(a1, b1)
        let ends = from < to ? [from, to] : [min(a.centre.y, b.centre.y), max(a.centre.y, b.centre.y)]
        return boundaries.contains { boundary in
            boundary.covers(ends[0]) && boundary.covers(ends[1])
                && ends.allSatisfy { y in
                    let edge = boundary.x(at: y)
                    return (axisX(a, at: y) - edge) * (axisX(b, at: y) - edge) < 0
                }
        }
    }

    /// Where a line's middle is at row `y`: along its axis for an upright line, its middle for one across.
    func axisX(_ frame: LineFrame, at y: Double) -> Double {
        guard LineSpines.isUpright(frame) else { return frame.centre.x }
        return frame.centre.x + frame.along.x / frame.along.y * (y - frame.centre.y)
    }
}

/// The edge pixels of a picture where brightness steps across it: each pixel an edge or not.
struct EdgeMap {
    var width: Int, height: Int
    var edge: [Bool]

    /// The near-vertical edges of `picture`: in the channel that steps most across a pixel (Sobel), a step of at
    /// least `SpineEdges.edgeStep`, at least twice as steep across as up or down (within about 27° of upright), and
    /// no weaker than its neighbours across.
    init(_ picture: RGBImage) {
        width = picture.width; height = picture.height
        let w = width, h = height
        var strength = [Int32](repeating: 0, count: w * h)
        picture.pixels.withUnsafeBufferPointer { p in
            strength.withUnsafeMutableBufferPointer { out in
                for y in 1..<(h - 1) {
                    for x in 1..<(w - 1) {
                        var best: Int32 = 0, bestAcross: Int32 = 0
                        for c in 0..<3 {
                            func at(_ dx: Int, _ dy: Int) -> Int32 { Int32(p[((y + dy) * w + x + dx) * 3 + c]) }
                            let gx = at(1, -1) + 2 * at(1, 0) + at(1, 1) - at(-1, -1) - 2 * at(-1, 0) - at(-1, 1)
                            if abs(gx) > best {
                                best = abs(gx)
                                bestAcross = abs(
                                    at(-1, 1) + 2 * at(0, 1) + at(1, 1) - at(-1, -1) - 2 * at(0, -1) - at(1, -1))
                            }
                        }
                        // Steeper across than up or down: the side of a book, not a shelf's edge or a line of print.
                        out[y * w + x] = best >= 2 * bestAcross ? best : 0
                    }
                }
            }
        }
        // A Sobel step of one brightness level is 4.
        let least = Int32(4 * SpineEdges.edgeStep)
        edge = [Bool](repeating: false, count: w * h)
        for y in 1..<(h - 1) {
            for x in 1..<(w - 1) {
                let s = strength[y * w + x]
                edge[y * w + x] = s >= least && s >= strength[y * w + x - 1] && s > strength[y * w + x + 1]
            }
        }
    }

    /// Leaves out the lettering of an upright line (its middle, `SpineEdges.letteringWidth` wide), given in the
    /// picture's pixels, this map being the picture scaled by `scaleX`×`scaleY`.
    mutating func leaveOut(_ frame: LineFrame, scaleX: Double, scaleY: Double) {
        let half = SpineEdges.letteringWidth(frame) * scaleX / 2
        let centre = SIMD2(frame.centre.x * scaleX, frame.centre.y * scaleY)
        let along = SIMD2(frame.along.x * scaleX, frame.along.y * scaleY)
        let y0 = max(0, Int(centre.y - abs(along.y) / 2)), y1 = min(height - 1, Int(centre.y + abs(along.y) / 2))
        guard y0 <= y1 else { return }
        for y in y0...y1 {
            let cx = centre.x + along.x / along.y * (Double(y) - centre.y)
            let x0 = max(0, Int((cx - half).rounded(.down))), x1 = min(width - 1, Int((cx + half).rounded(.up)))
            guard x0 <= x1 else { continue }
            for x in x0...x1 { edge[y * width + x] = false }
        }
    }

    /// The boundaries within `rows` at least `length` rows long, in this map's pixels, no two within `spacing` of
    /// each other.
    func boundaries(rows: Range<Int>, length: Double, spacing: Double) -> [SpineEdges.Boundary] {
        let height = rows.count
        guard height >= 8, length >= 4 else { return [] }
        let middle = Double(rows.lowerBound + rows.upperBound - 1) / 2
        // Slopes one step apart move a line's ends half a pixel apart.
        let step = 1 / Double(height), steepest = tan(LineSpines.axisTolerance)
        let slopes = Int(steepest / step)
        let slopeCount = 2 * slopes + 1
        let pad = Int(steepest * Double(height) / 2) + 2, span = width + 2 * pad
        var votes = [Int32](repeating: 0, count: slopeCount * span)
        edge.withUnsafeBufferPointer { edge in
            votes.withUnsafeMutableBufferPointer { votes in
                for y in rows {
                    let dy = Double(y) - middle
                    for x in 0..<width where edge[y * width + x] {
                        for k in 0..<slopeCount {
                            let at = Int((Double(x) - Double(k - slopes) * step * dy).rounded()) + pad
                            votes[k * span + at] += 1
                        }
                    }
                }
            }
        }
        let least = Int32(SpineEdges.support * length)
        var candidates: [(votes: Int32, slope: Int, at: Int)] = []
        for k in 0..<slopeCount {
            for at in 1..<(span - 1) {
                let v = votes[k * span + at]
                guard v >= least else { continue }
                var peak = true
                for dk in -1...1 where peak {
                    for da in -1...1 where !(dk == 0 && da == 0) {
                        let kk = k + dk
                        guard kk >= 0, kk < slopeCount else { continue }
                        let other = votes[kk * span + at + da]
                        // Ties go to the first in the scan.
                        if other > v || (other == v && (dk < 0 || (dk == 0 && da < 0))) { peak = false; break }
                    }
                }
                if peak { candidates.append((v, k, at)) }
            }
        }
        candidates.sort { $0.votes > $1.votes }
        var found: [SpineEdges.Boundary] = []
        for candidate in candidates {
            let slope = Double(candidate.slope - slopes) * step
            let line = SpineEdges.Boundary(
                x: Double(candidate.at - pad), middle: middle, slope: slope, top: 0, bottom: 0)
            guard let segment = run(line, rows: rows, length: length, gap: Int(2 * spacing)) else { continue }
            // Two lines that come within `spacing` of each other along the rows they share (or cross there) are one
            // edge: the sides of a gap between two books, or the gap's diagonal.
            guard
                !found.contains(where: { other in
                    let top = max(other.top, segment.top), bottom = min(other.bottom, segment.bottom)
                    guard top <= bottom else { return false }
                    let ends = [top, bottom].map { segment.x(at: $0) - other.x(at: $0) }
                    return ends[0] * ends[1] <= 0 || ends.contains { abs($0) <= spacing }
                })
            else { continue }
            found.append(segment)
        }
        return found.sorted { $0.x < $1.x }
    }

    /// The longest stretch of `line` within `rows` whose edge pixels (a pixel either side) leave no gap longer than
    /// `gap` rows, when it is at least `least` rows long with `SpineEdges.support` of them on the edge.
    func run(_ line: SpineEdges.Boundary, rows: Range<Int>, length least: Double, gap: Int) -> SpineEdges.Boundary? {
        var best: (from: Int, to: Int, hits: Int)?, current: (from: Int, to: Int, hits: Int)?
        for y in rows {
            let x = Int(line.x(at: Double(y)).rounded())
            guard x >= 1, x < width - 1, edge[y * width + x - 1] || edge[y * width + x] || edge[y * width + x + 1]
            else { continue }
            if let run = current, y - run.to <= gap + 1 {
                current = (run.from, y, run.hits + 1)
            } else {
                current = (y, y, 1)
            }
            if let run = current, run.to - run.from > (best.map { $0.to - $0.from } ?? -1) { best = run }
        }
        guard let best else { return nil }
        let length = best.to - best.from + 1
        guard Double(length) >= least,
            Double(best.hits) >= SpineEdges.support * Double(length)
        else { return nil }
        return SpineEdges.Boundary(
            x: line.x, middle: line.middle, slope: line.slope, top: Double(best.from), bottom: Double(best.to))
    }
}
