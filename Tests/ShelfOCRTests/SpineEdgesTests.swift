import Foundation
import ShelfImaging
@testable import ShelfOCR
import Testing

/// The sides of standing books found on a picture (`SpineEdges`): on the rendered bookcase, read by the real models,
/// and on pictures drawn here.
@Suite("Finding the sides of standing spines", .serialized)
struct SpineEdgesTests {
    /// Each row's spines of Fixtures/bookcase.jpg, their left and right columns (scripts/make-ocr-fixtures.sh: each
    /// row starts at x 40, its spines 4 pixels apart), with the row's middle.
    static let bookcase: [(middle: Double, spines: [(Double, Double)])] = [
        (380, spines(widths: [104, 92, 160, 98, 110, 100, 98])),
        (1040, spines(widths: [104, 92, 50, 50, 106, 102, 98, 98])),
        (1660, spines(widths: [104, 96, 150, 98, 110, 100, 98])),
    ]

    static func spines(widths: [Double]) -> [(Double, Double)] {
        var x = 40.0
        return widths.map { width in
            defer { x += width + 4 }
            return (x, x + width - 1)
        }
    }

    @Test("On the rendered bookcase every gap between two books is one boundary, none inside a spine")
    func bookcaseSides() async throws {
        let bytes = try [UInt8](
            Data(
                contentsOf: RenderedShelf.repository.appendingPathComponent("Tests/ShelfOCRTests/Fixtures/bookcase.jpg")
            )
        )
        let image = try Preprocessor.rgb(bytes, maxSide: 4000)
        let lines = try await PPOCREngine(files: PPOCRFiles.locate(), threads: 2).lines(in: image)
        let edges = SpineEdges.find(in: image, lines: lines, boards: LineSpines.boards(lines, picture: image))
        for (middle, spines) in Self.bookcase {
            let here = edges.boundaries.filter { $0.covers(middle) }.map { $0.x(at: middle) }
            // Between two neighbours (Emma and Lolita of one colour too, their gap the case's back), one boundary
            // within the gap or a few pixels of it.
            for (left, right) in zip(spines, spines.dropFirst()) {
                let gap = (left.1 - 3)...(right.0 + 3)
                #expect(here.filter { gap.contains($0) }.count == 1, "row at \(middle): \(gap) in \(here)")
            }
            // None through a spine's lettering or its colour.
            for spine in spines {
                let inside = here.filter { $0 > spine.0 + 4 && $0 < spine.1 - 4 }
                #expect(inside.isEmpty, "row at \(middle): \(inside) inside \(spine)")
            }
        }
    }

    /// A picture `width` wide and 420 tall of a wall and a shelf's board, with `books` standing on it (x ranges,
    /// colours) from row 40, each with a column of letters 16 pixels wide down its middle, and the lines read on them.
    static func drawnShelf(
        _ books: [(x: ClosedRange<Int>, colour: [UInt8])], shadows: [ClosedRange<Int>] = [], width: Int = 600
    ) -> (RGBImage, [TextLine]) {
        let height = 420
        var pixels = [UInt8](repeating: 200, count: width * height * 3)
        func paint(_ xs: ClosedRange<Int>, _ ys: ClosedRange<Int>, _ colour: [UInt8]) {
            for y in ys { for x in xs { for c in 0..<3 { pixels[(y * width + x) * 3 + c] = colour[c] } } }
        }
        paint(0...(width - 1), 380...(height - 1), [150, 105, 65])
        var lines: [TextLine] = []
        for book in books {
            paint(book.x, 40...379, book.colour)
            let centre = (book.x.lowerBound + book.x.upperBound) / 2
            // Letters 14 rows tall, 4 apart, from row 80 to 300, in the spine's opposite brightness.
            let ink: [UInt8] = book.colour.map { Int($0) }.reduce(0, +) > 3 * 128 ? [20, 20, 30] : [245, 240, 225]
            for top in stride(from: 80, to: 300, by: 18) { paint((centre - 8)...(centre + 8), top...(top + 13), ink) }
            // DB's box around the lettering, half as thick again, a little longer.
            lines.append(
                TextLine(
                    text: "Title", confidence: 0.9,
                    frame: LineFrame(
                        origin: SIMD2(Double(centre) + 12, 70), along: SIMD2(0, 240), across: SIMD2(-24, 0))))
        }
        for shadow in shadows { paint(shadow, 40...379, [30, 30, 30]) }
        return (RGBImage(width: width, height: height, pixels: pixels), lines)
    }

    @Test("Two thin neighbours of one colour show a boundary where a shadow parts them, none where nothing does")
    func drawnNeighbours() {
        let green: [UInt8] = [70, 110, 60], red: [UInt8] = [150, 40, 40]
        let (picture, lines) = Self.drawnShelf(
            [
                (60...109, green), (110...159, green), // one colour, no gap: the picture shows one spine
                (164...213, red), (216...265, red), // one colour, a shadow between them
                (270...369, [230, 220, 200]),
            ],
            shadows: [214...215])
        let edges = SpineEdges.find(in: picture, lines: lines, boards: [])
        let xs = edges.boundaries.map { $0.x(at: 210) }.sorted()
        for side in [60.0, 162, 215, 268, 370] {
            #expect(xs.filter { abs($0 - side) <= 3 }.count == 1, "\(side) in \(xs)")
        }
        #expect(xs.count == 5, "\(xs)")
        // Every boundary runs most of the spines' height, as far as the letters go.
        #expect(edges.boundaries.allSatisfy { $0.top <= 80 && $0.bottom >= 300 }, "\(edges.boundaries)")
    }

    @Test("Without lines read there is no row, and no boundary")
    func noLines() {
        let (picture, _) = Self.drawnShelf([(60...109, [70, 110, 60])])
        #expect(SpineEdges.find(in: picture, lines: [], boards: []).boundaries.isEmpty)
    }
}

/// How the spines' sides group the lines read (`LineSpines.spines` with `SpineEdges`).
@Suite("Grouping lines by the spines' sides")
struct SpineEdgesGroupingTests {
    /// Eight books 100 pixels wide, side by side from x 40, the fourth 220 wide, each with its title along it; the
    /// wide one's authors across its head, far wider than its title's lettering.
    static func shelf() -> (RGBImage, [TextLine]) {
        var books: [(x: ClosedRange<Int>, colour: [UInt8])] = []
        var x = 40
        for n in 0..<8 {
            let width = n == 3 ? 220 : 100
            books.append((x...(x + width - 1), n % 2 == 0 ? [28, 60, 96] : [232, 222, 200]))
            x += width + 4
        }
        var (picture, lines) = SpineEdgesTests.drawnShelf(books, width: 1200)
        lines.append(
            TextLine(
                text: "RICHARD DAWKINS", confidence: 0.9,
                frame: LineFrame(origin: SIMD2(372, 44), along: SIMD2(190, 0), across: SIMD2(0, 24))))
        return (picture, lines)
    }

    @Test("A name across a wide spine's head joins the title held between the same two sides")
    func nameAcrossAWideSpine() {
        let (picture, lines) = Self.shelf()
        let edges = SpineEdges.find(in: picture, lines: lines, boards: [])
        let spines = LineSpines.spines(
            lines, width: picture.width, height: picture.height, picture: picture, edges: edges)
        #expect(spines.contains { $0.text == "RICHARD DAWKINS Title" }, "\(spines.map(\.text))")
        #expect(spines.count == 8, "\(spines.map(\.text))")
        // Without the sides, the name is wider than a word across a spine its lettering's width may be, and stays apart.
        #expect(LineSpines.spines(lines, width: picture.width, height: picture.height, picture: picture).count == 9)
    }

    /// A line along a standing spine, centred on column `x`, `thickness` wide, over rows `y`.
    static func standing(_ text: String, x: Double, y: ClosedRange<Double>, thickness: Double = 30) -> TextLine {
        TextLine(
            text: text, confidence: 0.9,
            frame: LineFrame(
                origin: SIMD2(x + thickness / 2, y.lowerBound), along: SIMD2(0, y.upperBound - y.lowerBound),
                across: SIMD2(-thickness, 0)))
    }

    /// A side running down the picture at column `x` over rows `y`.
    static func side(_ x: Double, _ y: ClosedRange<Double>) -> SpineEdges.Boundary {
        SpineEdges.Boundary(x: x, middle: 0, slope: 0, top: y.lowerBound, bottom: y.upperBound)
    }

    @Test("Two lines in one column by their boxes, a side between them, are two books")
    func sideBetween() {
        // The second line's box reaches half its width into the first's column.
        let lines = [Self.standing("Title", x: 120, y: 60...180), Self.standing("Other", x: 132, y: 220...340)]
        #expect(LineSpines.spines(lines, width: 1000, height: 900).count == 1)
        let edges = SpineEdges(boundaries: [Self.side(126, 30...380)])
        #expect(LineSpines.spines(lines, width: 1000, height: 900, edges: edges).map(\.text) == ["Title", "Other"])
    }

    @Test("Names across a spine above its title and subtitle side by side are one text with both")
    func namesAboveTwoLines() {
        func across(_ text: String, x: ClosedRange<Double>, top: Double) -> TextLine {
            TextLine(
                text: text, confidence: 0.9,
                frame: LineFrame(
                    origin: SIMD2(x.lowerBound, top), along: SIMD2(x.upperBound - x.lowerBound, 0),
                    across: SIMD2(0, 24)))
        }
        // Between sides at x 100 and 220: the names, each nearer one of the two standing lines below them.
        let lines =
            [
                across("RICHARD", x: 120...220, top: 40), across("DAWKINS", x: 95...185, top: 80),
                Self.standing("The Ancestor's Tale", x: 175, y: 130...500),
                Self.standing("A Pilgrimage", x: 135, y: 140...480, thickness: 24),
            ] + PPOCRGeometryTests.standingBooks
        let edges = SpineEdges(boundaries: [Self.side(100, 30...560), Self.side(220, 30...560)])
        let spines = LineSpines.spines(
            lines, width: 1000, height: 900, picture: PPOCRGeometryTests.picture(), edges: edges)
        #expect(spines.first?.text == "RICHARD DAWKINS A Pilgrimage The Ancestor's Tale", "\(spines.map(\.text))")
        #expect(spines.count == 7, "\(spines.map(\.text))")
    }
}
