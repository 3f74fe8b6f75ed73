import Foundation
internal import ShelfCore
package import ShelfImaging

/// The lines PP-OCR read grouped into spines: the lines that lie along one spine (title, author, publisher, each
/// its own line) share its axis and overlap across it. Upright ones join however far apart they are along it, once
/// the picture has enough upright lines for its boards to be found: on a tall spine the title at the head and the
/// author at the foot are often twenty of their heights apart, and a spine read as two texts (the title alone, the
/// name alone) is two weak matches instead of one sure one. Each group is one spine text in reading order, with the
/// box around its lines.
///
/// Upright lines on either side of a shelf's board are never one spine, however well they line up: books on two
/// shelves often stand one above the other, and their lines would otherwise join into one text with two books' words
/// (and two call-number labels) in it. A board is a band across the whole picture that no upright line crosses, at
/// least a line's thickness tall, with several upright lines above and below it. On one shelf whose books all carry
/// the title at the head and the author at the foot, the band between the titles and the authors is free too. Two
/// things tell it from a board: there nearly every line next to the band goes on across it in its own column (on
/// two shelves of books of one size, in a library, many do too, by chance); and the picture shows no edge across
/// it, where a board's front and the feet of the books on it draw one from one side of the shelf to the other.
/// A band is a board unless both say it is one shelf.
///
/// On a picture of standing books, a thick spine often sets its words across it, one above another ("HOW TO /
/// SPEND / A / TRILLION / DOLLARS / ROWAN / HOOPER"), or its author's name across the head above an upright title,
/// or a subtitle in small print across it beside the title. A word across the picture that lies within a standing
/// line's column, no wider than twice its lettering, joins that line's spine; words stacked one above another join
/// each other. Books lying in a pile stack their lines too, and a row of words across neighbouring spines lines up
/// like a lying book's title and author: the picture tells them apart, since the edge of a book lying on another,
/// or the side of a standing spine, draws a straight line between the two lines, which the pictures printed
/// between a cover's words do not.
///
/// Lines side by side (a title set on two lines, an author beside the title) stay separate spines. Joining parallel
/// lines less than a letter height apart across the axis and overlapping along it (after DB's expansion, boxes
/// overlapping by a quarter of their thickness) was tried on the library photos in scripts/bench-ocr.sh: most such
/// pairs there are two neighbouring books (call-number labels "796.342 App" beside "796.342 Tor", two titles by one
/// author), no book more was accepted, and one was lost to a neighbour's title; samples/ read the same. Letting the
/// picture decide instead, joining side-by-side upright lines with no edge between them (the spines' own boundaries,
/// as edge-based spine segmentation finds them), was tried too: the library's one-shelf photo went from 24 books
/// accepted to 21–22 (thin neighbours of one colour have no edge between them that a sampled strip finds), the home
/// shelf read the same; so side-by-side upright lines never join by what the picture shows.
///
/// The sides of the standing spines (`SpineEdges`, found on the whole row rather than in a strip between two lines)
/// are used three ways, each measured with `shelfd eval --provider ocr` against the grouping without them on the
/// library data set's two photos (Benchmarks/Labels/library-dataset, 90 books), the home shelf of the development
/// data (35) and samples/ (59):
/// - lines with a side between them along all the rows they share are two books: the two volumes of a dictionary,
///   their titles side by side, were one item; found 77 → 79 on the library photos, the others the same;
/// - a word across a standing spine joins the upright line held between the same two sides, however wide it is (a
///   name across a wide spine's head, a publisher's block at its foot): the library photos 94 → 92 items, 18 → 16
///   scraps, the home shelf 29 → 30 books accepted;
/// - words across lying on two upright lines still stack when the same two sides hold them: the authors across
///   the head of The Ancestor's Tale, above its title and subtitle side by side, made it five pieces, now one.
/// Three more uses lost and are left out. Joining side-by-side upright lines held between the same two sides: the
/// library photos went from 62 books accepted to 48 and from 79 found to 68, since thin neighbours of one colour
/// still show the detector no side between them. A line of at most three letters joining the upright line between
/// its sides: no book more, and two neighbours' call-number labels joined through such scraps. A word across that
/// reaches over two upright lines between the same sides tying them: one item fewer, but it joined the
/// dictionary's two volumes, where the reader read one word across both ("G-ZA-F") and no side showed between them.
package enum LineSpines {
    /// Lines whose axes differ by more than this (radians, either way round) run along different spines.
    static let axisTolerance = 12.0 * Double.pi / 180
    /// Two lines across the axis share at least this share of the thinner one.
    static let acrossOverlap = 0.5
    /// Lines further apart along their axis than this many times the thicker one's thickness are different books:
    /// books lying flat in two piles side by side put their lines on one row, and books on two shelves one above
    /// the other put theirs in one column. Upright lines on a picture with enough of them to tell where the boards
    /// are have no such limit: a standing spine's lines are one spine however far apart, and shelves are told apart
    /// by their boards.
    static let axisGap = 10.0
    /// A board has at least this many upright lines wholly on each side: a band that a handful of lines leaves
    /// free is more likely the gap between one spine's title and its author.
    static let boardLines = 4
    /// A free band may be the gap between titles and authors on one shelf when at least this share of the columns
    /// that end at it go on across it (the lines next to it on the side with fewer, each with a line in its own
    /// column on the other side).
    static let continuedShare = 0.6
    /// The picture shows an edge across a band when at least this share of the strips across the books' width
    /// (`edgeStrips` of them) change brightness by `edgeStep` or more from one row to the next but one within it.
    static let edgeShare = 0.6, edgeStrips = 40, edgeStep = 24.0
    /// A word across a standing spine is at most this many times as wide as the spine's lettering is thick.
    static let wordWidth = 2.0
    /// Words stacked on one spine are at most this many times their height apart.
    static let stackGap = 2.5
    /// An edge between two lines is followed along their slope to within this many pixels.
    static let edgeSlack = 2

    /// The spines of `lines` read on a `width`×`height` picture, left to right (top to bottom among books
    /// lying flat); `picture`, the one read, shows where the boards are, and `edges`, found on it, the sides of the
    /// standing spines (and the boards, when it was found between them).
    package static func spines(
        _ lines: [TextLine], width: Int, height: Int, picture: RGBImage? = nil, edges: SpineEdges? = nil
    ) -> [Spine] {
        let boards = edges?.boards ?? boards(lines, picture: picture)
        let boardsJudged = lines.filter { isUpright($0.frame) }.count >= 2 * boardLines
        var parent = Array(lines.indices)
        func root(_ i: Int) -> Int {
            var i = i
            while parent[i] != i { parent[i] = parent[parent[i]]; i = parent[i] }
            return i
        }
        // Lines on either side of a board, or of a spine's side, are on two books.
        func apart(_ i: Int, _ j: Int) -> Bool {
            boards.contains { $0.separates(lines[i].frame, lines[j].frame) }
                || (edges?.separates(lines[i].frame, lines[j].frame) ?? false)
        }
        // Words set across a standing spine (a thick paperback's title word by word, a name at its head, a subtitle
        // in small print beside the title, a publisher's mark at its foot) belong to it, once the picture shows
        // standing books: each joins the standing line it lies on, and not the words on its neighbours' spines
        // that line up with it across the row.
        let lyingOn: [Int?] = lines.indices.map { i in
            // A label on a board's front lies across the board, not on a spine.
            guard boardsJudged, isAcross(lines[i].frame), !boards.contains(where: { $0.crosses(lines[i].frame) }) else {
                return nil
            }
            return lines.indices.filter { j in
                isUpright(lines[j].frame) && !apart(i, j)
                    && (liesAcross(lines[i].frame, standingLine: lines[j].frame)
                        || (edges?.holds(lines[i].frame, onSpineOf: lines[j].frame) ?? false))
            }
            .min { offAxis(lines[i].frame, lines[$0].frame) < offAxis(lines[i].frame, lines[$1].frame) }
        }
        // Whether the picture shows two books' sides or edges between two lines.
        func edgeBetween(_ i: Int, _ j: Int) -> Bool {
            picture.map { showsStraightEdge($0, between: lines[i].frame, and: lines[j].frame) } ?? false
        }
        for i in lines.indices {
            if let j = lyingOn[i] { parent[root(j)] = root(i) }
            for j in lines.indices where j > i && !apart(i, j) {
                let joins: Bool
                if boardsJudged && isAcross(lines[i].frame) && isAcross(lines[j].frame) {
                    let lying = [lyingOn[i], lyingOn[j]].compactMap { $0 }.count
                    joins =
                        (lying == 0 && sameSpine(lines[i].frame, lines[j].frame, boardsJudged: true)
                            && !edgeBetween(i, j))
                        // Words lying on two standing lines are stacked too when one spine's sides hold both:
                        // authors across a spine whose title and subtitle stand side by side below them.
                        || ((lying < 2 || (edges?.holdTogether(lines[i].frame, lines[j].frame) ?? false))
                            && stacked(lines[i].frame, lines[j].frame, picture: picture))
                } else {
                    joins = sameSpine(lines[i].frame, lines[j].frame, boardsJudged: boardsJudged)
                }
                if joins { parent[root(j)] = root(i) }
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

        /// Whether a line lies partly within the band.
        func crosses(_ frame: LineFrame) -> Bool {
            let (a0, a1) = LineSpines.rows(frame)
            return a1 > top && a0 < bottom
        }

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
    /// thickness tall, with at least `boardLines` upright lines wholly above and as many wholly below, whose
    /// columns do not go on across the band, or across which `picture` shows an edge.
    static func boards(_ lines: [TextLine], picture: RGBImage? = nil) -> [Board] {
        let upright = lines.map(\.frame).filter(isUpright).sorted { rows($0).0 < rows($1).0 }
        guard upright.count >= 2 * boardLines else { return [] }
        let thickness = upright.map(\.thickness).sorted()[upright.count / 2]
        var boards: [Board] = []
        var reach = rows(upright[0]).1, above = 1
        for frame in upright.dropFirst() {
            let top = rows(frame).0
            if top - reach >= thickness && above >= boardLines && upright.count - above >= boardLines {
                let band = Board(top: reach, bottom: top)
                let oneShelf =
                    continued(upright.filter { rows($0).1 <= band.top }, upright.filter { rows($0).0 >= band.bottom })
                    && !(picture.map { showsEdge($0, across: band, under: upright) } ?? false)
                if !oneShelf { boards.append(band) }
            }
            reach = max(reach, rows(frame).1); above += 1
        }
        return boards
    }

    /// Whether the columns of lines `above` a free band go on in the lines `below` it, as one shelf's titles go on
    /// in their authors: of the lines next to the band (the lowest of each column above, the highest of each
    /// column below), on the side with fewer of them, at least `continuedShare` have a line in their column on the
    /// other side.
    static func continued(_ above: [LineFrame], _ below: [LineFrame]) -> Bool {
        let lowest = above.filter { a in !above.contains { $0 != a && inColumn(a, $0) && rows($0).0 > rows(a).0 } }
        let highest = below.filter { b in !below.contains { $0 != b && inColumn(b, $0) && rows($0).0 < rows(b).0 } }
        let (fewer, more) = lowest.count <= highest.count ? (lowest, highest) : (highest, lowest)
        guard !fewer.isEmpty else { return false }
        let going = fewer.filter { line in more.contains { inColumn(line, $0) } }.count
        return Double(going) >= continuedShare * Double(fewer.count)
    }

    /// Whether a line runs across the picture, as a word set across a standing spine or a lying book's spine does.
    static func isAcross(_ frame: LineFrame) -> Bool {
        abs(frame.along.x) >= cos(axisTolerance) * frame.length
    }

    /// Whether a word set across the picture lies on the standing spine that `standingLine` is read along: its
    /// middle falls within that line's column, it is no wider than `wordWidth` of the line's thickness (a spine is
    /// not much wider than its lettering; a book lying on top of the row is), and it is no further from the line
    /// along the spine than `axisGap` of their thickness.
    static func liesAcross(_ word: LineFrame, standingLine line: LineFrame) -> Bool {
        guard word.length <= wordWidth * line.thickness else { return false }
        let axis = line.along / max(1e-9, line.length), across = SIMD2(-axis.y, axis.x)
        let (c0, c1) = span(line, across), middle = (word.centre * across).sum()
        guard middle >= c0 && middle <= c1 else { return false }
        let (a0, a1) = span(line, axis), (b0, b1) = span(word, axis)
        return max(a0, b0) - min(a1, b1) <= axisGap * max(word.thickness, line.thickness)
    }

    /// How far a word's middle is from a standing line's axis.
    static func offAxis(_ word: LineFrame, _ line: LineFrame) -> Double {
        let axis = line.along / max(1e-9, line.length)
        return abs(((word.centre - line.centre) * SIMD2(-axis.y, axis.x)).sum())
    }

    /// Whether two words across the picture are stacked on one standing spine ("HOW TO / SPEND / A / TRILLION /
    /// DOLLARS"): one above the other, overlapping across the picture by at least half the narrower, no more than
    /// `stackGap` of the taller one's height apart, and `picture` shows no edge between them. Books lying in a pile
    /// stack their lines too, but each lies on its own book, and the books' edges show between them; without the
    /// picture, words are never stacked.
    static func stacked(_ a: LineFrame, _ b: LineFrame, picture: RGBImage?) -> Bool {
        guard let picture else { return false }
        let (a0, a1) = rows(a), (b0, b1) = rows(b)
        let gap = max(a0, b0) - min(a1, b1)
        guard gap > 0, gap <= stackGap * max(a.thickness, b.thickness) else { return false }
        let xa = a.corners.map(\.x), xb = b.corners.map(\.x)
        let overlap = min(xa.max()!, xb.max()!) - max(xa.min()!, xb.min()!)
        guard overlap >= acrossOverlap * min(a.length, b.length) else { return false }
        return !showsStraightEdge(picture, between: a, and: b)
    }

    /// Whether `picture` shows a straight edge between two lines across the picture, as the sides of two books do:
    /// between lines stacked one above the other, the edge of a book lying on another, parallel to the lines;
    /// between lines side by side in one row, the side of a standing spine, square to them. The edge is a line, followed
    /// along the lines' slope, where at least `edgeShare` of the strips along it change brightness by `edgeStep` or
    /// more from one pixel to the next but one (give or take `edgeSlack`). Pictures printed on a spine between its
    /// words (a coin, a leaf) change brightness too, but not along one line.
    static func showsStraightEdge(_ picture: RGBImage, between a: LineFrame, and b: LineFrame) -> Bool {
        let (a0, a1) = rows(a), (b0, b1) = rows(b)
        let xa = a.corners.map(\.x), xb = b.corners.map(\.x)
        let direction = a.length >= b.length ? a.along / a.length : b.along / b.length
        let slope = direction.y / max(1e-9, abs(direction.x))
        // `t` runs across the edge (over the gap), `s` along it; a pixel is at (x, y) = oneAbove ? (s, t) : (t, s).
        let oneAbove = max(a0, b0) - min(a1, b1) > 0
        let (gapStart, gapEnd, sideStart, sideEnd, drift): (Double, Double, Double, Double, Double) =
            oneAbove
            ? (min(a1, b1), max(a0, b0), min(xa.min()!, xb.min()!), max(xa.max()!, xb.max()!), slope)
            : (min(xa.max()!, xb.max()!), max(xa.min()!, xb.min()!), min(a0, b0), max(a1, b1), -slope)
        let (tLimit, sLimit) = oneAbove ? (picture.height, picture.width) : (picture.width, picture.height)
        let t0 = max(0, Int(gapStart)), t1 = min(tLimit, Int(gapEnd.rounded(.up)))
        let s0 = max(0, Int(sideStart)), s1 = min(sLimit, Int(sideEnd))
        let strips = min(edgeStrips, (s1 - s0) / 4)
        guard strips >= 4, t1 - t0 >= 3 else { return false }
        let middle = Double(s0 + s1) / 2
        var edgeAt: [[Int]] = []
        picture.pixels.withUnsafeBufferPointer { pixels in
            for strip in 0..<strips {
                let from = s0 + strip * (s1 - s0) / strips, to = s0 + (strip + 1) * (s1 - s0) / strips
                let means = brightness(
                    pixels, width: picture.width, strip: from..<to, over: t0..<t1, rowsAcross: oneAbove)
                // Each edge as it would lie at the strips' middle, had it followed the lines' slope.
                let shift = drift * (Double(from + to) / 2 - middle)
                edgeAt.append(
                    (2..<means.count).filter { abs(means[$0] - means[$0 - 2]) >= edgeStep }
                        .map { Int((Double($0) - shift).rounded()) })
            }
        }
        return (-edgeSlack..<(t1 - t0 + edgeSlack)).contains { t in
            Double(edgeAt.filter { edges in edges.contains { abs($0 - t) <= edgeSlack } }.count) >= edgeShare
                * Double(strips)
        }
    }

    /// Whether `picture` shows an edge across `band`: in at least `edgeShare` of the strips between the first and the
    /// last of the `lines`, the strip's mean brightness changes by `edgeStep` or more between a row and the next but
    /// one. A strip is narrow enough that a photo tilted a few degrees still draws its board's edge within it.
    static func showsEdge(_ picture: RGBImage, across band: Board, under lines: [LineFrame]) -> Bool {
        let xs = lines.flatMap { $0.corners.map(\.x) }
        let left = max(0, Int(xs.min() ?? 0)), right = min(picture.width, Int(xs.max() ?? 0))
        let top = max(0, Int(band.top)), bottom = min(picture.height, Int(band.bottom.rounded(.up)))
        guard right - left >= edgeStrips, bottom - top >= 3 else { return false }
        var edged = 0
        picture.pixels.withUnsafeBufferPointer { pixels in
            for strip in 0..<edgeStrips {
                let x0 = left + strip * (right - left) / edgeStrips,
                    x1 = left + (strip + 1) * (right - left) / edgeStrips
                let means = brightness(
                    pixels, width: picture.width, strip: x0..<x1, over: top..<bottom, rowsAcross: true)
                if (2..<means.count).contains(where: { abs(means[$0] - means[$0 - 2]) >= edgeStep }) { edged += 1 }
            }
        }
        return Double(edged) >= edgeShare * Double(edgeStrips)
    }

    /// The mean brightness of an RGB picture `width` pixels wide, across `strip`, at each of `over`: rows of a strip
    /// of columns (`rowsAcross`), or columns of a strip of rows.
    static func brightness(
        _ pixels: UnsafeBufferPointer<UInt8>, width: Int, strip: Range<Int>, over: Range<Int>,
        rowsAcross: Bool
    ) -> [Double] {
        over.map { t in
            var sum = 0
            for s in strip {
                let i = (rowsAcross ? t * width + s : s * width + t) * 3
                sum += Int(pixels[i]) * 3 + Int(pixels[i + 1]) * 6 + Int(pixels[i + 2])
            }
            return Double(sum) / Double(10 * strip.count)
        }
    }

    /// Whether two lines are parallel and overlap across their axis, as lines along one spine do, wherever they are
    /// along it. Apart along the spine, the axis is the one of the line longest for its thickness: a short line's
    /// direction, or that of a box the detector drew around two lines at once, carried far, strays. Side by side
    /// (overlapping along it), they must overlap across each line's own axis: the detector widens every box, so two
    /// thin neighbours' boxes touch, and only one of the two axes may see them overlap.
    static func inColumn(_ a: LineFrame, _ b: LineFrame) -> Bool {
        let ua = a.along / max(1e-9, a.length), ub = b.along / max(1e-9, b.length)
        // Parallel either way round: an upside-down author line still lies along the spine.
        guard abs((ua * ub).sum()) >= cos(axisTolerance) else { return false }
        func overlap(_ axis: SIMD2<Double>) -> Double {
            let (a0, a1) = span(a, axis), (b0, b1) = span(b, axis)
            return min(a1, b1) - max(a0, b0)
        }
        let longer = a.length >= b.length ? ua : ub
        let sideBySide = overlap(longer) > 0
        let surer = a.thickness / max(1e-9, a.length) <= b.thickness / max(1e-9, b.length) ? ua : ub
        let across =
            sideBySide
            ? min(overlap(SIMD2(-ua.y, ua.x)), overlap(SIMD2(-ub.y, ub.x))) : overlap(SIMD2(-surer.y, surer.x))
        return across >= acrossOverlap * min(a.thickness, b.thickness)
    }

    /// Where a line's corners fall along `axis` (a unit vector).
    static func span(_ frame: LineFrame, _ axis: SIMD2<Double>) -> (Double, Double) {
        let values = frame.corners.map { ($0 * axis).sum() }
        return (values.min()!, values.max()!)
    }

    /// Whether two lines lie along one spine: in one column, and no more than `axisGap` of their thickness apart
    /// along it unless both are upright and `boardsJudged` (the picture has enough upright lines for its boards to
    /// be found).
    static func sameSpine(_ a: LineFrame, _ b: LineFrame, boardsJudged: Bool) -> Bool {
        guard inColumn(a, b) else { return false }
        if boardsJudged && isUpright(a) && isUpright(b) { return true }
        let axis = (a.length >= b.length ? a.along / max(1e-9, a.length) : b.along / max(1e-9, b.length))
        let (c0, c1) = span(a, axis), (d0, d1) = span(b, axis)
        return max(c0, d0) - min(c1, d1) <= axisGap * max(a.thickness, b.thickness)
    }

    /// One spine of `lines`: their texts in reading order along the longest line's direction; words stacked across a
    /// spine, row by row from the top.
    static func spine(_ lines: [TextLine], width: Int, height: Int) -> Spine {
        let leading = lines.max { $0.frame.length < $1.frame.length }!
        let direction = leading.frame.along / max(1e-9, leading.frame.length)
        var ordered = lines.sorted { ($0.frame.centre * direction).sum() < ($1.frame.centre * direction).sum() }
        if isAcross(leading.frame) {
            var rowsFromTop: [[TextLine]] = []
            for line in lines.sorted(by: { rows($0.frame).0 < rows($1.frame).0 }) {
                if let last = rowsFromTop.last?.last,
                    rows(line.frame).0 < rows(last.frame).1 - 0.5 * last.frame.thickness
                {
                    rowsFromTop[rowsFromTop.count - 1].append(line)
                } else {
                    rowsFromTop.append([line])
                }
            }
            ordered = rowsFromTop.flatMap { row in
                row.sorted { ($0.frame.centre * direction).sum() < ($1.frame.centre * direction).sum() }
            }
        }
        let corners = lines.flatMap(\.frame.corners)
        let box = Box(
            x1: max(0, corners.map(\.x).min()! / Double(width)), y1: max(0, corners.map(\.y).min()! / Double(height)),
            x2: min(1, corners.map(\.x).max()! / Double(width)), y2: min(1, corners.map(\.y).max()! / Double(height)))
        var letters = 0.0, weighted = 0.0
        for line in lines {
            let count = Double(max(1, line.text.unicodeScalars.filter(Character.isLetterOrDigit).count))
            letters += count; weighted += count * line.confidence
        }
        let reading: Spine.Reading =
            abs(direction.x) >= abs(direction.y) ? .across : direction.y > 0 ? .downward : .upward
        return Spine(
            text: ordered.map(\.text).joined(separator: " "), box: box.rounded, confidence: weighted / letters,
            reading: reading)
    }
}
