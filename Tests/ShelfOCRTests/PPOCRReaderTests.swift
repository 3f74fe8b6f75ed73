import Foundation
import Logging
import ShelfCore
import ShelfImaging
@testable import ShelfOCR
import ShelfTesting
import Testing

/// The PP-OCR reader with the real ONNX Runtime and models, as scripts/install-deps.sh installs them.
@Suite("Reading with PP-OCR", .serialized)
struct PPOCRReaderTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let engine = PPOCREngine(files: PPOCRFiles.locate(), threads: 2)

    static func photo(_ path: String) throws -> RGBImage {
        let bytes = try [UInt8](Data(contentsOf: repository.appendingPathComponent(path)))
        return try Preprocessor.rgb(bytes, maxSide: 4000)
    }

    /// Letters and digits only, lower case: how a title is looked for in what was read.
    static func plain(_ text: String) -> String {
        String(String.UnicodeScalarView(text.lowercased().unicodeScalars.filter(Character.isLetterOrDigit)))
    }

    @Test("On the rendered samples the spines' texts hold the books' titles, the sideways photo turned by its EXIF tag")
    func samples() async throws {
        var found = 0, total = 0
        for name in ["classics", "europe", "america", "scifi", "modern", "adventure"] {
            let image = try Self.photo("samples/\(name).jpg")
            let truth = try JSONSerialization.jsonObject(
                with: Data(contentsOf: Self.repository.appendingPathComponent("samples/\(name).truth.json")))
            let titles = ((truth as? [String: Any])?["books"] as? [[String: Any]] ?? []).compactMap {
                $0["title"] as? String
            }
            let clock = ContinuousClock(), start = clock.now
            let lines = try await Self.engine.lines(in: image)
            let spines = LineSpines.spines(lines, width: image.width, height: image.height, picture: image)
            let read = spines.map { Self.plain($0.text) }
            let hits = titles.filter { title in read.contains { $0.contains(Self.plain(title)) } }
            print(
                "\(name): \(hits.count) of \(titles.count) titles in \(lines.count) lines, \(spines.count) spines, \(clock.now - start)"
            )
            found += hits.count; total += titles.count
            #expect(image.width > image.height) // america.jpg is stored portrait, upright by its EXIF tag
        }
        // Measured: 58 of 59 (Little Women in low contrast reads "Women").
        #expect(Double(found) / Double(total) >= 0.95, "\(found) of \(total) titles")
    }

    static let libraryPhoto = SharedData.file("data/library-dataset/one_shelf_example.jpg")

    @Test(
        "A dense shelf's photo sent at a quarter of its size is read enlarged, and more of its titles are read",
        .enabled(if: libraryPhoto != nil, "shared data set not found"))
    func smallCopyIsReadEnlarged() async throws {
        let original = try [UInt8](Data(contentsOf: try #require(Self.libraryPhoto)))
        // As a messaging app passes it on: 1,156 pixels on its long side instead of 4,624.
        let small = try Preprocessor.prepare(
            original, preset: ImagePreset(maxSide: 1156, quality: 90, targetBytes: 0...4_000_000, minQuality: 90)
        ).jpeg
        let provider = OCRProvider(
            settings: OCRSettings(engine: .ppocr(PPOCRFiles.locate())), logger: Logger(label: "test"))
        let found = try Self.libraryTitlesRead(in: try await provider.read(small).spines.map(\.text))
        // Measured: 22 of 37 read enlarged and sharpened (20 enlarged alone), 16 as sent.
        #expect(found >= 21, "\(found) titles read")
    }

    @Test(
        "A dense shelf's photo is read sharpened, and more of its titles are read than on the picture as decoded",
        .enabled(if: libraryPhoto != nil, "shared data set not found"))
    func densePhotoIsReadSharpened() async throws {
        let original = try [UInt8](Data(contentsOf: try #require(Self.libraryPhoto)))
        let side = OCRSettings(engine: .ppocr(PPOCRFiles.locate())).maxSide
        let decoded = try Preprocessor.rgb(original, maxSide: side)
        func titlesRead(on picture: RGBImage) async throws -> Int {
            let lines = try await Self.engine.lines(in: picture)
            let spines = LineSpines.spines(lines, width: picture.width, height: picture.height, picture: picture)
            return try Self.libraryTitlesRead(in: spines.map(\.text))
        }
        let sharpened = try await titlesRead(on: PPOCRReader.readingPicture(decoded, side: side))
        let plain = try await titlesRead(on: decoded)
        // Measured: 30 of 37 read sharpened, 29 as decoded (the library's two photos: 78 of 90 books accepted, 76).
        #expect(sharpened > plain, "\(sharpened) titles read sharpened, \(plain) as decoded")
    }

    /// How many titles of the library's one-shelf photo (its labels in Benchmarks/Labels) `texts` read: a title is
    /// read when one text shows at least half the words of its main title (three letters or more).
    static func libraryTitlesRead(in texts: [String]) throws -> Int {
        let read = texts.map(plain)
        let labels = try JSONSerialization.jsonObject(
            with: Data(
                contentsOf: repository.appendingPathComponent(
                    "Benchmarks/Labels/library-dataset/one_shelf_example.truth.json")))
        let titles = ((labels as? [[String: Any]]) ?? []).compactMap { $0["title"] as? String }.map { title in
            title.prefix { $0 != ":" }.split(separator: " ").map { plain(String($0)) }.filter { $0.count >= 3 }
        }
        return titles.filter { words in
            read.contains { text in words.filter(text.contains).count * 2 >= words.count }
        }.count
    }

    @Test("Titles with accents are read whichever way the picture is turned", arguments: [0, 1, 2, 3])
    func accents(quarters: Int) async throws {
        var image = try Self.photo("Tests/ShelfOCRTests/Fixtures/flat-spines.jpg")
        for _ in 0..<quarters { image = image.quarterTurned(clockwise: true) }
        let lines = try await Self.engine.lines(in: image)
        let texts = lines.map(\.text)
        for expected in [
            "Cien años de soledad", "Gabriel García Márquez", "Les Misérables", "Victor Hugo",
            "Le città invisibili", "Italo Calvino",
        ] {
            #expect(texts.contains { $0.contains(expected) }, "\(expected) not in \(texts)")
        }
        let spines = LineSpines.spines(lines, width: image.width, height: image.height, picture: image)
        #expect(spines.count == 3, "\(spines.map(\.text))")
        let reading: Spine.Reading = quarters == 1 ? .downward : quarters == 3 ? .upward : .across
        #expect(spines.allSatisfy { $0.reading == reading }, "\(spines.map(\.reading))")
        #expect(spines.allSatisfy { $0.confidence > 0.9 })
    }

    @Test("A line the classifier left upside down is read again turned, and kept the right way round")
    func upsideDownLineReadAgain() async throws {
        let image = try Self.photo("Tests/ShelfOCRTests/Fixtures/flat-spines.jpg")
        let lines = try await Self.engine.lines(in: image)
        let expected = ["Cien años de soledad", "Les Misérables", "Le città invisibili"]
        let titles = lines.filter { line in expected.contains { line.text.contains($0) } }
        try #require(titles.count == expected.count, "\(lines.map(\.text))")
        // Every title as a classifier that turned it wrongly would leave it.
        let upsideDown = titles.map(\.frame.turned)
        let (once, eitherWay) = try await Self.engine.run { models throws(OCRError) in
            (
                try PPOCRReader.recognise(image, frames: upsideDown, models: models),
                try PPOCRReader.recogniseEitherWay(image, frames: upsideDown, models: models)
            )
        }.get()
        for (title, reading) in zip(titles, once) {
            #expect(!reading.text.contains(title.text) && reading.confidence < PPOCRReader.doubtfulReading)
        }
        for (title, (frame, reading)) in zip(titles, zip(eitherWay.frames, eitherWay.readings)) {
            #expect(reading.text == title.text && reading.confidence > 0.9)
            let offset = frame.centre - title.frame.centre
            #expect(max(abs(offset.x), abs(offset.y)) < 1e-6 && frame.along == title.frame.along)
        }
    }

    @Test("The recogniser writes European accents but no letter of the scripts Tesseract is kept for")
    func scriptsRead() async throws {
        // docs/reading.md ("Choosing a provider") keeps Tesseract for shelves in scripts PP-OCR cannot write at all.
        let characters = try await Self.engine.run { models in models.characters }.get()
        let scalars = Set(characters.joined().unicodeScalars.map(\.value))
        for letter in "éèàçñüöäßøåłœ" {
            #expect(scalars.contains(letter.unicodeScalars.first!.value), "\(letter) missing")
        }
        let unwritten: [(script: String, range: ClosedRange<UInt32>)] = [
            ("Cyrillic", 0x0400...0x04FF), ("Arabic", 0x0600...0x06FF), ("Hebrew", 0x0590...0x05FF),
            ("Devanagari", 0x0900...0x097F), ("Thai", 0x0E00...0x0E7F), ("Hangul", 0xAC00...0xD7A3),
            ("Greek capitals with accents", 0x0386...0x038F), ("Greek with accents", 0x03AC...0x03AF),
            ("Greek with accents", 0x03CC...0x03CE), ("polytonic Greek", 0x1F00...0x1FFF),
        ]
        for (script, range) in unwritten {
            #expect(!scalars.contains { range.contains($0) }, "the recogniser writes some \(script)")
        }
        #expect(scalars.contains(0x03B1) && scalars.contains(0x4E66), "the bare Greek alphabet and Chinese are written")
    }

    @Test("A picture with no text reads nothing")
    func noText() async throws {
        // Wood-like bands with noise: colour and texture, no letters.
        var pixels = [UInt8](repeating: 0, count: 1200 * 800 * 3)
        var seed: UInt64 = 42
        for y in 0..<800 {
            for x in 0..<1200 {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                let grain = Int(seed >> 59), band = Int(30 * sin(Double(x) / 37 + Double(y) / 400))
                let i = (y * 1200 + x) * 3
                pixels[i] = UInt8(150 + band + grain); pixels[i + 1] = UInt8(110 + band + grain);
                pixels[i + 2] = UInt8(70 + band / 2 + grain)
            }
        }
        let lines = try await Self.engine.lines(in: RGBImage(width: 1200, height: 800, pixels: pixels))
        #expect(lines.isEmpty, "\(lines.map(\.text))")
    }

    @Test("A truncated model is an error that says to reinstall the models")
    func truncatedModel() throws {
        let installed = PPOCRFiles.locate()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-ppocr-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try copyFiles(
            PPOCRFiles.models, from: installed.modelsFolder, to: folder, truncating: PPOCRFiles.detector)
        let error = #expect(throws: OCRError.self) {
            try PPOCRModels(files: PPOCRFiles(library: installed.library, modelsFolder: folder.path), threads: 1)
        }
        #expect(error?.code == .modelLoad)
        #expect(
            error?.message.contains(PPOCRFiles.detector) == true
                && error?.message.contains("scripts/install-deps.sh") == true,
            "\(error?.message ?? "")")
    }

    @Test("A missing library or model is an error naming scripts/install-deps.sh, found before anything is loaded")
    func missingFiles() throws {
        let installed = PPOCRFiles.locate()
        let files = PPOCRFiles(library: "/nonexistent/\(OnnxRuntime.libraryName)", modelsFolder: installed.modelsFolder)
        let error = #expect(throws: OCRError.self) { try PPOCRModels(files: files, threads: 1) }
        #expect(error?.code == .missingFiles)
        #expect(error?.message.contains("/nonexistent/\(OnnxRuntime.libraryName)") == true)
        #expect(error?.message.contains("scripts/install-deps.sh") == true)
        // Nowhere to be found: the error names where they belong.
        let nowhere = PPOCRFiles.locate(prefixes: ["/nonexistent"])
        #expect(nowhere.library == "/nonexistent/lib/shelfd/\(OnnxRuntime.libraryName)")
        #expect(nowhere.missing()?.message.contains("/nonexistent/share/shelfd/ocr/\(PPOCRFiles.detector)") == true)
    }

    @Test("A file that is not ONNX Runtime is an error, not a crash")
    func notTheLibrary() throws {
        let error = #expect(throws: OCRError.self) { try OnnxRuntime.load(#filePath) }
        #expect(error?.code == .engineInit)
        #expect(error?.message.contains("scripts/install-deps.sh") == true)
    }

    @Test("The models are released after five idle minutes on the clock, and loaded again on the next photo")
    func idleRelease() async throws {
        let clock = ManualClock()
        let engine = PPOCREngine(files: PPOCRFiles.locate(), threads: 1, time: clock.time)
        let white = RGBImage(width: 64, height: 64, pixels: [UInt8](repeating: 255, count: 64 * 64 * 3))
        _ = try await engine.lines(in: white)
        #expect(engine.isLoaded)
        clock.advance(by: .seconds(299))
        try await Task.sleep(for: .milliseconds(100))
        #expect(engine.isLoaded, "idle for less than its five minutes")
        clock.advance(by: .seconds(1))
        try await waitUntil("the idle models are released", timeout: .seconds(10)) { !engine.isLoaded }
        _ = try await engine.lines(in: white)
        #expect(engine.isLoaded)
    }
}

@Suite("PP-OCR's geometry and decoding")
struct PPOCRGeometryTests {
    @Test("A rotated rectangle's region gives back its rectangle, in the frame it is read in")
    func rectangle() {
        // A 200×20 bar at 30°, drawn into a 300×300 map.
        let angle = Double.pi / 6, axis = SIMD2(cos(angle), sin(angle)), normal = SIMD2(-axis.y, axis.x)
        var map = [Float](repeating: 0, count: 300 * 300)
        for y in 0..<300 {
            for x in 0..<300 {
                let d = SIMD2(Double(x) + 0.5, Double(y) + 0.5) - SIMD2(150, 150)
                if abs((d * axis).sum()) <= 100 && abs((d * normal).sum()) <= 10 { map[y * 300 + x] = 0.9 }
            }
        }
        let lines = TextLineFinder.lines(probabilities: map, width: 300, height: 300)
        #expect(lines.count == 1)
        guard let line = lines.first else { return }
        #expect(abs(line.frame.centre.x - 150) < 2 && abs(line.frame.centre.y - 150) < 2)
        #expect(abs(line.frame.along.x / line.frame.length - axis.x) < 0.02) // reads along the bar, left to right
        #expect(line.frame.length > 200 && line.frame.thickness > 20) // grown by DB's unclip margin
        #expect(line.score > 0.8 && line.score <= 0.9) // the dilated edge counts too, as in DB
    }

    @Test("A line much taller than wide is read downwards; the upside-down one is the same place turned")
    func tallLine() {
        let frame = LineFrame.reading(centre: SIMD2(50, 200), axis: SIMD2(0, 1), width: 300, height: 40)
        #expect(frame.along.y > 0 && abs(frame.along.x) < 1e-9 && abs(frame.length - 300) < 1e-9)
        #expect(frame.across.x < 0) // the letters' tops face right: read with the head turned right
        #expect(frame.turned.centre == frame.centre && frame.turned.along == -frame.along)
        let wide = LineFrame.reading(centre: SIMD2(50, 50), axis: SIMD2(0, 1), width: 30, height: 40)
        #expect(wide.along.x > 0) // not half as tall again: read left to right
    }

    @Test("CTC merges repeats, drops blanks, and averages the kept characters' probabilities")
    func ctc() {
        let characters = ["blank", "a", "ñ", " "]
        // Steps: a a blank a ñ ñ space
        let best = [1, 1, 0, 1, 2, 2, 3], p: [Float] = [0.9, 0.8, 0.99, 0.7, 0.6, 0.9, 0.5]
        var values = [Float](repeating: 0, count: best.count * 4)
        for (t, c) in best.enumerated() { values[t * 4 + c] = p[t]; values[t * 4 + (c + 1) % 4] = (1 - p[t]) / 2 }
        let decoded = values.withUnsafeBufferPointer {
            CTCDecoder.decode($0, steps: 7, classes: 4, characters: characters)
        }
        #expect(decoded.text == "aañ ")
        #expect(abs(decoded.confidence - Double(0.9 + 0.7 + 0.6 + 0.5) / 4) < 1e-6)
    }

    @Test("The detector's tiles cover the picture in parts of at most the tile side, each a multiple of 32")
    func tiles() {
        #expect(PPOCRReader.parts(1440) == [0..<736, 736..<1440])
        #expect(PPOCRReader.parts(1088) == [0..<544, 544..<1088])
        #expect(PPOCRReader.parts(768) == [0..<768])
        #expect(PPOCRReader.parts(32) == [0..<32])
        #expect(PPOCRReader.parts(2400).map(\.count) == [608, 608, 608, 576])
    }

    @Test("Recogniser batches go by width, with at most six lines and the column limit once padded")
    func recogniserBatches() {
        let widths = [2400, 100, 2300, 900, 2200, 300, 50, 60, 70, 80]
        let batches = PPOCRReader.batches(widths)
        #expect(batches == [[6, 7, 8, 9, 1, 5], [3, 4], [2, 0]])
        #expect(
            batches.allSatisfy { batch in
                batch.count * max(PPOCRReader.recogniserMinimumWidth, batch.map { widths[$0] }.max()!)
                    <= PPOCRReader.batchColumns
            })
    }

    @Test("The character list splits as Python's splitlines does")
    func characterList() {
        #expect(CTCDecoder.lines("a\nb\r\nc\rd\u{2028}e\n") == ["a", "b", "c", "d", "e"])
        #expect(CTCDecoder.lines("x\n\ny") == ["x", "", "y"])
    }

    @Test("Lines along one spine are one spine text in reading order; a parallel neighbour is another spine")
    func spines() {
        func line(_ text: String, x: Double, y: ClosedRange<Double>) -> TextLine {
            TextLine(
                text: text, confidence: 0.9,
                frame: LineFrame(
                    origin: SIMD2(x + 20, y.lowerBound), along: SIMD2(0, y.upperBound - y.lowerBound),
                    across: SIMD2(-20, 0)))
        }
        let lines = [
            line("Stoker", x: 100, y: 500...600), line("Dracula", x: 102, y: 100...400),
            line("Emma", x: 200, y: 100...300),
        ]
        let spines = LineSpines.spines(lines, width: 1000, height: 800)
        #expect(spines.map(\.text) == ["Dracula Stoker", "Emma"])
        #expect(spines.allSatisfy { $0.reading == .downward })
        #expect(abs(spines[0].box.y1 - 0.125) < 1e-3 && abs(spines[0].box.y2 - 0.75) < 1e-3)
    }

    /// An upright line 20 pixels thick at `x`, running down the rows `y`.
    static func upright(_ text: String, x: Double, y: ClosedRange<Double>) -> TextLine {
        TextLine(
            text: text, confidence: 0.9,
            frame: LineFrame(
                origin: SIMD2(x + 20, y.lowerBound), along: SIMD2(0, y.upperBound - y.lowerBound),
                across: SIMD2(-20, 0)))
    }

    @Test(
        "Books standing on two shelves are two spines, not one text across the board, though some stand one above the other"
    )
    func shelves() {
        // The lower shelf's books stand where they stand: two of five line up with a book above, the others do not.
        let upper = [100.0, 200, 300, 400, 500], lower = [100.0, 165, 265, 365, 500]
        let lines =
            upper.map { Self.upright("upper \(Int($0))", x: $0, y: 100...380) }
            + lower.map { Self.upright("lower \(Int($0))", x: $0, y: 480...780) }
        let spines = LineSpines.spines(lines, width: 1000, height: 900)
        #expect(spines.count == 10, "\(spines.map(\.text))")
        #expect(spines.allSatisfy { !$0.text.contains("upper") || !$0.text.contains("lower") }, "\(spines.map(\.text))")
        #expect(LineSpines.boards(lines) == [LineSpines.Board(top: 380, bottom: 480)])
    }

    @Test(
        "On one shelf whose titles all stand at the head and authors at the foot, each spine is one text, however far apart"
    )
    func titlesAboveAuthors() {
        // The rows 260…700 are free across the whole shelf, as between two shelves, but every title's column goes
        // on in its author below; the authors are 22 of their heights below the titles.
        let columns = [100.0, 200, 300, 400, 500, 600]
        let lines = columns.flatMap { x in
            [Self.upright("Title \(Int(x))", x: x, y: 60...260), Self.upright("Author \(Int(x))", x: x, y: 700...860)]
        }
        #expect(LineSpines.boards(lines).isEmpty)
        let spines = LineSpines.spines(lines, width: 1000, height: 900)
        #expect(spines.map(\.text) == columns.map { "Title \(Int($0)) Author \(Int($0))" })
    }

    @Test("Books of one size on two shelves, one above the other, are told apart by the board's edge in the picture")
    func alignedShelves() {
        // Every lower book stands under an upper one, as in a library: the lines alone cannot tell two shelves from
        // titles above authors on one. A picture with the board (rows 400…460, lighter) across it tells them.
        let columns = [100.0, 200, 300, 400, 500]
        let lines = columns.flatMap { x in
            [Self.upright("upper \(Int(x))", x: x, y: 100...380), Self.upright("lower \(Int(x))", x: x, y: 480...780)]
        }
        func picture(board: Bool) -> RGBImage {
            var pixels = [UInt8](repeating: 60, count: 1000 * 900 * 3)
            if board { for i in (400 * 1000 * 3)..<(460 * 1000 * 3) { pixels[i] = 170 } }
            return RGBImage(width: 1000, height: 900, pixels: pixels)
        }
        #expect(LineSpines.boards(lines, picture: picture(board: true)) == [LineSpines.Board(top: 380, bottom: 480)])
        let spines = LineSpines.spines(lines, width: 1000, height: 900, picture: picture(board: true))
        #expect(
            spines.count == 10 && spines.allSatisfy { !$0.text.contains("upper") || !$0.text.contains("lower") },
            "\(spines.map(\.text))")
        // The same lines on a picture with nothing across the band: one shelf, each title with the line below it.
        #expect(LineSpines.boards(lines, picture: picture(board: false)).isEmpty)
        #expect(LineSpines.spines(lines, width: 1000, height: 900, picture: picture(board: false)).count == 5)
    }

    @Test("On one shelf a title and its author at the two ends of a spine still join, and a few books make no board")
    func oneShelf() {
        // The first book's title and author leave rows 250…320 free on it; the other books' titles cross them.
        var lines = [Self.upright("Dracula", x: 100, y: 100...250), Self.upright("Bram Stoker", x: 100, y: 320...400)]
        lines += [200.0, 300, 400, 500].map { Self.upright("Book \(Int($0))", x: $0, y: 120...390) }
        #expect(LineSpines.boards(lines).isEmpty)
        #expect(LineSpines.spines(lines, width: 1000, height: 500).first?.text == "Dracula Bram Stoker")
        // Two books alike, title above and author below: a free band, but too few lines for a board.
        let pair = [
            Self.upright("Emma", x: 100, y: 100...250), Self.upright("Austen", x: 100, y: 320...400),
            Self.upright("Persuasion", x: 200, y: 100...250), Self.upright("Austen", x: 200, y: 320...400),
        ]
        #expect(LineSpines.boards(pair).isEmpty)
        #expect(LineSpines.spines(pair, width: 1000, height: 500).map(\.text) == ["Emma Austen", "Persuasion Austen"])
    }

    /// A line across the picture `length` wide and 30 pixels tall, its left end at `x`, its top at `y`.
    static func across(_ text: String, x: Double, y: Double, length: Double) -> TextLine {
        TextLine(
            text: text, confidence: 0.9,
            frame: LineFrame(origin: SIMD2(x, y), along: SIMD2(length, 0), across: SIMD2(0, 30)))
    }

    /// A 1000×900 picture of one colour, with dark lines three pixels wide: across it from each of `darkRows`, down it
    /// from each of `darkColumns`.
    static func picture(darkRows rows: [Int] = [], darkColumns columns: [Int] = []) -> RGBImage {
        var pixels = [UInt8](repeating: 180, count: 1000 * 900 * 3)
        func darken(_ xs: Range<Int>, _ ys: Range<Int>) {
            for y in ys { for x in xs { for c in 0..<3 { pixels[(y * 1000 + x) * 3 + c] = 40 } } }
        }
        for row in rows { darken(0..<1000, row..<(row + 3)) }
        for column in columns { darken(column..<(column + 3), 0..<900) }
        return RGBImage(width: 1000, height: 900, pixels: pixels)
    }

    /// Six books standing with upright lettering, at x 400…900: enough upright lines for the picture to show a shelf.
    static let standingBooks = [400.0, 500, 600, 700, 800, 900].flatMap { x in
        [upright("Title \(Int(x))", x: x, y: 100...400), upright("Author \(Int(x))", x: x, y: 600...800)]
    }

    @Test("Words set across a standing spine, one above another, are one spine text read from the top")
    func stackedWords() {
        let words = [("HOW TO", 150.0), ("SPEND", 230), ("A", 310), ("TRILLION", 390), ("ROWAN", 470), ("HOOPER", 550)]
            .map { Self.across($0.0, x: 120, y: $0.1, length: 110) }
        let spines = LineSpines.spines(words + Self.standingBooks, width: 1000, height: 900, picture: Self.picture())
        #expect(spines.first?.text == "HOW TO SPEND A TRILLION ROWAN HOOPER", "\(spines.map(\.text))")
        #expect(spines.count == 7)
    }

    @Test("Books lying in a pile stay one spine each: the picture shows their edges between their lines")
    func pile() {
        // Three books, each 80 rows thick, their titles stacked as a thick spine's words are; the books' edges are
        // dark rows between them.
        let titles = [
            Self.across("Dune", x: 120, y: 160, length: 110), Self.across("Kim", x: 130, y: 240, length: 90),
            Self.across("Heidi", x: 120, y: 320, length: 110),
        ]
        let lines = titles + Self.standingBooks
        let pile = LineSpines.spines(lines, width: 1000, height: 900, picture: Self.picture(darkRows: [215, 295]))
        #expect(pile.filter { ["Dune", "Kim", "Heidi"].contains($0.text) }.count == 3, "\(pile.map(\.text))")
        // Without the edges the same lines are one spine's words; without a picture words never stack.
        #expect(
            LineSpines.spines(lines, width: 1000, height: 900, picture: Self.picture()).first?.text == "Dune Kim Heidi")
        #expect(LineSpines.spines(lines, width: 1000, height: 900).count == 9)
    }

    @Test("A word across a standing spine joins that spine's upright lettering, not its neighbour's")
    func nameAtTheHead() {
        // "LEM" across the head of the book at x 400…420 (its lettering 20 thick, the word 36 wide), above its title.
        let name = TextLine(
            text: "LEM", confidence: 0.9,
            frame: LineFrame(origin: SIMD2(392, 60), along: SIMD2(36, 0), across: SIMD2(0, 24)))
        let spines = LineSpines.spines([name] + Self.standingBooks, width: 1000, height: 900, picture: Self.picture())
        #expect(spines.contains { $0.text == "LEM Title 400 Author 400" }, "\(spines.map(\.text))")
        #expect(spines.count == 6)
    }

    @Test("Words side by side on two standing spines stay apart where the picture shows the spines' sides between them")
    func wordsOnNeighbours() {
        // Two thick books at x 100…240 and 250…400, each with words across it; their bottom words share a row.
        let lines =
            [Self.across("WRATH", x: 120, y: 300, length: 100), Self.across("ERNEST", x: 270, y: 300, length: 110)]
            + Self.standingBooks
        let apart = LineSpines.spines(lines, width: 1000, height: 900, picture: Self.picture(darkColumns: [244]))
        #expect(apart.contains { $0.text == "WRATH" } && apart.contains { $0.text == "ERNEST" }, "\(apart.map(\.text))")
        // On one book lying flat (nothing between them), a title and its author in one row are one text.
        #expect(
            LineSpines.spines(lines, width: 1000, height: 900, picture: Self.picture()).contains {
                $0.text == "WRATH ERNEST"
            })
    }

    @Test(
        "A box the detector drew around two lines, its direction askew, does not carry a neighbour's author into its spine"
    )
    func askewBox() {
        // "THE POSSIBILITY OF LIFE" stands at x 1960…2040 (leaning 0.06), its authors' names below it; the box of the
        // neighbour's "NUMBERS DON'T LIE" is three times as thick and leans 0.11, so carried down its own direction it
        // reaches the names.
        func leaning(_ text: String, centre: SIMD2<Double>, length: Double, thickness: Double, lean: Double) -> TextLine
        {
            let along = SIMD2(-lean, 1) / (1 + lean * lean).squareRoot(), across = SIMD2(-along.y, along.x)
            return TextLine(
                text: text, confidence: 0.9,
                frame: LineFrame(
                    origin: centre - length / 2 * along - thickness / 2 * across,
                    along: along * length, across: across * thickness))
        }
        let lines = [
            leaning("THE POSSIBILITY OF LIFE", centre: SIMD2(1998, 912), length: 982, thickness: 79, lean: 0.06),
            leaning("JAIME", centre: SIMD2(1982, 1523), length: 183, thickness: 60, lean: 0.05),
            leaning("NUMBERS DON'T LIE", centre: SIMD2(2162, 973), length: 718, thickness: 253, lean: 0.11),
            leaning("VACLAV", centre: SIMD2(2187, 1205), length: 314, thickness: 86, lean: 0.09),
        ]
        let spines = LineSpines.spines(lines, width: 2400, height: 1800)
        #expect(
            spines.map(\.text).sorted() == ["NUMBERS DON'T LIE VACLAV", "THE POSSIBILITY OF LIFE JAIME"],
            "\(spines.map(\.text))")
    }
}
