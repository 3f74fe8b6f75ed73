import Foundation
internal import ShelfCore

/// The lines PP-OCR read grouped into spines: the lines that lie along one spine (title, author, publisher, each
/// its own line) share its axis and overlap across it, with no more than `axisGap` of their thickness between
/// them along it. Each group is one spine text in reading order, with the box around its lines.
///
/// Upright lines on either side of a shelf's board are never one spine, however well they line up: books on two
/// shelves often stand one above the other, and their lines would otherwise join into one text with two books' words
/// (and two call-number labels) in it. A board is a band across the whole picture that no upright line crosses, at
/// least a line's thickness tall, with several upright lines above and below it. On one shelf of several books, some
/// book's title usually runs across any such band, so a title and its author at the two ends of one spine still join.
/// Measured with scripts/bench-ocr.sh: on the library's two-shelf photo, four books more accepted (all right), none
/// lost; the one-shelf photo and samples/ read as before.
///
/// Lines side by side (a title set on two lines, an author beside the title) stay separate spines. Joining parallel
/// lines less than a letter height apart across the axis and overlapping along it (after DB's expansion, boxes
/// overlapping by a quarter of their thickness) was tried on the library photos in scripts/bench-ocr.sh: most such
/// pairs there are two neighbouring books (call-number labels "796.342 App" beside "796.342 Tor", two titles by one
/// author), no book more was accepted, and one was lost to a neighbour's title; samples/ read the same.
package enum LineSpines {
    /// Lines whose axes differ by more than this (radians, either way round) run along different spines.
    static let axisTolerance = 12.0 * Double.pi / 180
    /// Two lines across the axis share at least this share of the thinner one.
    static let acrossOverlap = 0.5
    /// Lines further apart along the axis than this many times the thicker one's thickness are different books (on
    /// other shelves): a title at one end of a spine and its author at the other are a few of their heights apart,
    /// seldom ten.
    static let axisGap = 10.0
    /// A board has at least this many upright lines wholly on each side: a band that a handful of lines leaves
    /// free is more likely the gap between one spine's title and its author.
    static let boardLines = 4

    /// The spines of `lines` read on a `width`×`height` picture, left to right (top to bottom among books
    /// lying flat).
    package static func spines(_ lines: [TextLine], width: Int, height: Int) -> [Spine] {
        let boards = boards(lines)
        var parent = Array(lines.indices)
        func root(_ i: Int) -> Int {
            var i = i
            while parent[i] != i { parent[i] = parent[parent[i]]; i = parent[i] }
            return i
        }
        for i in lines.indices {
            for j in lines.indices where j > i && sameSpine(lines[i].frame, lines[j].frame)
                && !boards.contains(where: { $0.separates(lines[i].frame, lines[j].frame) }) {
                parent[root(j)] = root(i)
            }
        }
        var groups: [Int: [TextLine]] = [:]
        for i in lines.indices { groups[root(i), default: []].append(lines[i]) }
        return groups.values.map { spine($0, width: width, height: height) }
            .sorted { a, b in a.box.x1 != b.box.x1 ? a.box.x1 < b.box.x1 : a.box.y1 < b.box.y1 }
    }

    /// A band of the picture's rows between two shelves' books.
    struct Board: Equatable {
        var top: Double, bottom: Double

        /// Whether one of the two lines lies wholly above the band and the other wholly below it.
        func separates(_ a: LineFrame, _ b: LineFrame) -> Bool {
            let (a0, a1) = LineSpines.rows(a), (b0, b1) = LineSpines.rows(b)
            return (a1 <= top && b0 >= bottom) || (b1 <= top && a0 >= bottom)
        }
    }

    /// The rows a line covers.
    static func rows(_ frame: LineFrame) -> (Double, Double) {
        let ys = frame.corners.map(\.y)
        return (ys.min()!, ys.max()!)
    }

    /// Whether a line runs up or down the picture, as the text on a standing book's spine does.
    static func isUpright(_ frame: LineFrame) -> Bool {
        abs(frame.along.y) >= cos(axisTolerance) * frame.length
    }

    /// The shelves' boards: the bands of rows that no upright line crosses, at least the median upright line's
    /// thickness tall, with at least `boardLines` upright lines wholly above and as many wholly below.
    static func boards(_ lines: [TextLine]) -> [Board] {
        let upright = lines.map(\.frame).filter(isUpright)
        guard upright.count >= 2 * boardLines else { return [] }
        let spans = upright.map(rows).sorted { $0.0 < $1.0 }
        let thickness = upright.map(\.thickness).sorted()[upright.count / 2]
        var boards: [Board] = []
        var reach = spans[0].1, above = 1
        for span in spans.dropFirst() {
            if span.0 - reach >= thickness && above >= boardLines && spans.count - above >= boardLines {
                boards.append(Board(top: reach, bottom: span.0))
            }
            reach = max(reach, span.1); above += 1
        }
        return boards
    }

    /// Whether two lines lie along one spine.
    static func sameSpine(_ a: LineFrame, _ b: LineFrame) -> Bool {
        let ua = a.along / max(1e-9, a.length), ub = b.along / max(1e-9, b.length)
        // Parallel either way round: an upside-down author line still lies along the spine.
        guard abs((ua * ub).sum()) >= cos(axisTolerance) else { return false }
        let normal = SIMD2(-ua.y, ua.x)
        func span(_ frame: LineFrame, _ axis: SIMD2<Double>) -> (Double, Double) {
            let values = frame.corners.map { ($0 * axis).sum() }
            return (values.min()!, values.max()!)
        }
        let (a0, a1) = span(a, normal), (b0, b1) = span(b, normal)
        let across = min(a1, b1) - max(a0, b0)
        guard across >= acrossOverlap * min(a.thickness, b.thickness) else { return false }
        let (c0, c1) = span(a, ua), (d0, d1) = span(b, ua)
        let gap = max(c0, d0) - min(c1, d1)
        return gap <= axisGap * max(a.thickness, b.thickness)
    }

    /// One spine of `lines`: their texts in reading order along the longest line's direction.
    static func spine(_ lines: [TextLine], width: Int, height: Int) -> Spine {
        let leading = lines.max { $0.frame.length < $1.frame.length }!
        let direction = leading.frame.along / max(1e-9, leading.frame.length)
        let ordered = lines.sorted { ($0.frame.centre * direction).sum() < ($1.frame.centre * direction).sum() }
        let corners = lines.flatMap(\.frame.corners)
        let box = Box(x1: max(0, corners.map(\.x).min()! / Double(width)), y1: max(0, corners.map(\.y).min()! / Double(height)),
                      x2: min(1, corners.map(\.x).max()! / Double(width)), y2: min(1, corners.map(\.y).max()! / Double(height)))
        var letters = 0.0, weighted = 0.0
        for line in lines {
            let count = Double(max(1, line.text.unicodeScalars.filter(Character.isLetterOrDigit).count))
            letters += count; weighted += count * line.confidence
        }
        let reading: Spine.Reading = abs(direction.x) >= abs(direction.y) ? .across : direction.y > 0 ? .downward : .upward
        return Spine(text: ordered.map(\.text).joined(separator: " "), box: box.rounded, confidence: weighted / letters,
                     reading: reading)
    }
}
