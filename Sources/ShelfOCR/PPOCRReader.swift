import CMalloc
import Foundation
package import ShelfImaging

/// One line of text the PP-OCR reader read.
package struct TextLine: Sendable, Equatable {
    package var text: String
    /// 0…1: the mean probability of the characters kept.
    package var confidence: Double
    /// Where it is, in pixels of the picture read, in the text's reading frame.
    package var frame: LineFrame
}

/// PP-OCR's three models in ONNX Runtime, loaded together: the detector (DB), the orientation classifier and the
/// recogniser (CTC), with the recogniser's character list from its own metadata.
package final class PPOCRModels: Sendable {
    let detector: OnnxSession
    let classifier: OnnxSession
    let recogniser: OnnxSession
    /// The recogniser's classes: CTC's blank, the model's `character` list, then a space (PaddleOCR's
    /// CTCLabelDecode builds it so).
    let characters: [String]

    /// Loads the models of `files` with `threads` threads each (they run one after another).
    /// - Throws: `OCRError` `.missingFiles` naming scripts/install-deps.sh, `.engineInit` for a library that cannot
    ///   be used, `.modelLoad` for a model ONNX Runtime refuses.
    package init(files: PPOCRFiles, threads: Int) throws(OCRError) {
        if let missing = files.missing() { throw missing }
        let runtime = try OnnxRuntime.load(files.library)
        detector = try OnnxSession(runtime: runtime, path: files.detectorPath, threads: threads)
        classifier = try OnnxSession(runtime: runtime, path: files.classifierPath, threads: threads)
        recogniser = try OnnxSession(runtime: runtime, path: files.recogniserPath, threads: threads)
        guard let list = try recogniser.metadata("character") else {
            throw OCRError(
                .modelLoad,
                "\(files.recogniserPath) has no character list in its metadata. Reinstall the models with scripts/install-deps.sh."
            )
        }
        characters = ["blank"] + CTCDecoder.lines(list) + [" "]
    }
}

/// Reads the lines of text on a picture with PP-OCR: the detector at a bounded size finds the lines, each line is
/// cut out straightened from the full picture, the classifier turns the upside-down ones, and the recogniser reads
/// them in batches of similar width. Synchronous and CPU-bound: call it from a thread that may block.
package enum PPOCRReader {
    /// The longer side the detector sees (a multiple of 32 after padding). Measured (release, 2 cores, photos read at
    /// 2400): at 1280 real 12-megapixel shelf photos lost about a tenth of their lines, at 1600 such a photo took up
    /// to 5.5 s against about 3 s at 1440; samples/ reads the same at all three.
    package static let detectorSide = 1440
    /// Lines the recogniser is less sure of than this are not text.
    static let minimumConfidence = 0.5
    /// The classifier turns a line when it says "180°" with at least this probability.
    static let turnConfidence = 0.9
    static let classifierSize = (width: 192, height: 48)
    /// A batch is padded to its widest line, and to at least `recogniserMinimumWidth` (PaddleOCR pads to 320). Most
    /// lines on a shelf are short (call numbers, a surname), so at 320 about 45 % of the recogniser's columns were
    /// padding. Measured with scripts/bench-ocr.sh (release, 2 cores): at 160 the recogniser takes a third less time
    /// on 12-megapixel shelf photos, samples/ reads the same, and no book accepted at 320 is lost; 96 saves little
    /// more and feeds the model shapes further from the 320 it was trained on.
    static let recogniserHeight = 48, recogniserMinimumWidth = 160, recogniserMaximumWidth = 2400
    static let batchSize = 6
    /// A recogniser batch holds at most this many columns in all (six short lines, two of the widest): its memory
    /// grows with them, about 12 KB a column.
    static let batchColumns = 4800
    /// The detector runs on tiles of at most this side, each seeing `tileMargin` pixels of the picture beyond its
    /// own part (both multiples of 32): four for a 4:3 photo at `detectorSide`.
    static let tileSide = 768, tileMargin = 128

    /// How long each model took on one picture.
    package struct StageTimes: Sendable, Equatable {
        /// The detector, both looks.
        package var detector: Duration = .zero
        /// Of `detector`, the second look at small print (`smallPrintRegion`); zero when it did not look again.
        package var closerLook: Duration = .zero
        package var classifier: Duration = .zero
        package var recogniser: Duration = .zero
    }

    /// The lines on `image` (upright), in its pixels.
    package static func lines(
        in image: RGBImage, models: PPOCRModels, detectorSide: Int = detectorSide,
        lookCloser: Bool = true
    ) throws(OCRError) -> [TextLine] {
        try read(image, models: models, detectorSide: detectorSide, lookCloser: lookCloser).lines
    }

    /// The lines on `image` (upright), in its pixels, and how long each model took. The detector sees the picture
    /// at `detectorSide`, then, with `lookCloser`, where most of the print it found is small, at the picture's own
    /// size too (`smallPrintRegion`).
    package static func read(
        _ image: RGBImage, models: PPOCRModels, detectorSide: Int = detectorSide,
        lookCloser: Bool = true
    ) throws(OCRError) -> (lines: [TextLine], times: StageTimes) {
        // The heap ONNX Runtime's tensors leave behind is given back after each stage, so that the next stage (and
        // the next photo) starts from the models' own memory rather than on top of the last one's leftovers.
        defer { malloc_trim(0) }
        let clock = ContinuousClock()
        var times = StageTimes(), start = clock.now
        let frames = try detect(
            image, model: models.detector, side: detectorSide, lookCloser: lookCloser, closerLook: &times.closerLook)
        times.detector = clock.now - start
        guard !frames.isEmpty else { return ([], times) }
        start = clock.now
        let upright = try classify(image, frames: frames, model: models.classifier)
        times.classifier = clock.now - start
        start = clock.now
        let (asRead, readings) = try recogniseEitherWay(image, frames: upright, models: models)
        times.recogniser = clock.now - start
        let lines = zip(asRead, readings).compactMap { frame, reading -> TextLine? in
            guard reading.confidence >= minimumConfidence,
                reading.text.unicodeScalars.contains(where: Character.isLetterOrDigit)
            else { return nil }
            return TextLine(
                text: reading.text.trimmingCharacters(in: .whitespaces), confidence: reading.confidence, frame: frame)
        }
        return (lines, times)
    }

    /// The picture as it is read: one whose long side is under `detectorSide` is enlarged to `side`. The detector
    /// takes its second look at small print only on a picture larger than it sees at first, so a downscaled copy of a
    /// dense shelf (a messaging app's) lost most of its labels: the library data set's one- and two-shelf photos at a
    /// quarter of their size (1,156 pixels) had 36 of their 90 books accepted, and 56 read enlarged to 2,400; at
    /// 1,280 pixels, 49 and 56. Larger copies gained nothing (at 2,000 pixels three fewer), so they are read as they
    /// are; the home shelf's photos read alike at every size.
    /// Then it is sharpened (`sharpening`).
    package static func readingPicture(_ image: RGBImage, side: Int) -> RGBImage {
        let long = max(image.width, image.height)
        guard long > 0 else { return image }
        var picture = image
        if long < detectorSide, long < side {
            let factor = Double(side) / Double(long)
            picture = image.enlarged(
                width: Int((Double(image.width) * factor).rounded()),
                height: Int((Double(image.height) * factor).rounded()))
        }
        return picture.sharpened(sigma: sharpening.sigma, amount: sharpening.amount)
    }

    /// The unsharp mask the picture gets before it is read: a common choice (ImageMagick's `-unsharp 0x1+1.5`), not
    /// fitted. A phone's photo scaled down to the reading size by averaging is soft, and a dense shelf's labels are a
    /// few pixels high in it: the library data set's two photos had 78 of their 90 books accepted sharpened, 76 as
    /// they were, and more in every copy of them tried (blurred, darker, smaller, tilted: 1 to 4 more); the home
    /// shelf and samples/ the same books (its blurred copy one fewer, its half-size copy one more). None wrong. It
    /// takes about 0.13 s of a 2,400-pixel picture (release, one core), which is read in 2 to 5 s.
    static let sharpening = (sigma: 1.0, amount: 1.5)

    // MARK: detection

    /// A line thinner than this on the detector's map (pixels, the line's box as found, which DB grows to about
    /// 2.6 times its lettering) is small print: lettering under 8 pixels high at `detectorSide`, near the least the
    /// detector finds. Of the lines on the library data set's two shelf photos, half and three quarters are this
    /// thin; on the home shelf of the development data, one in eight (publishers' marks).
    static let smallPrint = 20.0
    /// The detector looks again, at the picture's own resolution, when at least this share of the lines it found
    /// (and at least `smallPrintLines`) are small print: a shelf of thin spines and labels, where what it missed
    /// is like what it found. A picture of a few small marks among large titles is not read twice, since the
    /// second look costs about as much again as the whole first reading.
    static let smallPrintShare = 1.0 / 3, smallPrintLines = 3

    static func detect(
        _ image: RGBImage, model: OnnxSession, side: Int, lookCloser: Bool, closerLook: inout Duration
    ) throws(OCRError) -> [LineFrame] {
        let scale = min(1, Double(side) / Double(max(image.width, image.height)))
        let small =
            scale < 1
            ? image.resized(
                width: Int((Double(image.width) * scale).rounded()),
                height: Int((Double(image.height) * scale).rounded())) : image
        let actualScale = Double(small.width) / Double(image.width)
        let first = try lines(small, model: model).map { $0.scaled(1 / actualScale) }
        guard lookCloser, actualScale < 1,
            let region = smallPrintRegion(first, scale: actualScale, width: image.width, height: image.height)
        else { return first }
        // The second look keeps only lines the first did not find: large lettering is found best at the first
        // look's size, and a line found at both is read once.
        let offset = SIMD2(Double(region.x), Double(region.y))
        let clock = ContinuousClock(), start = clock.now
        defer { closerLook = clock.now - start }
        let closer = try lines(
            image.cut(x: region.x, y: region.y, width: region.width, height: region.height), model: model
        )
        .map { frame in
            var frame = frame; frame.origin += offset; return frame
        }
        return first + closer.filter { line in !first.contains { $0.overlaps(line) } }
    }

    /// The lines the detector finds on `picture`, in its pixels.
    static func lines(_ picture: RGBImage, model: OnnxSession) throws(OCRError) -> [LineFrame] {
        let map = try probabilities(picture, model: model)
        return TextLineFinder.lines(probabilities: map.values, width: map.width, height: map.height).map(\.frame)
    }

    /// Where the detector looks again: the rectangle around the small-print lines of `lines` (found at `scale`),
    /// grown on each side by their mean length, so that the thin spines beside them are inside; nil when the
    /// picture's print is not mostly small.
    static func smallPrintRegion(_ lines: [LineFrame], scale: Double, width: Int, height: Int)
        -> (x: Int, y: Int, width: Int, height: Int)?
    {
        let small = lines.filter { $0.thickness * scale < smallPrint }
        guard small.count >= smallPrintLines, Double(small.count) >= smallPrintShare * Double(lines.count) else {
            return nil
        }
        let corners = small.flatMap(\.corners)
        let reach = small.map(\.length).reduce(0, +) / Double(small.count)
        let x0 = max(0, Int(corners.map(\.x).min()! - reach)), x1 = min(width, Int(corners.map(\.x).max()! + reach))
        let y0 = max(0, Int(corners.map(\.y).min()! - reach)), y1 = min(height, Int(corners.map(\.y).max()! + reach))
        guard x1 - x0 >= 32, y1 - y0 >= 32 else { return nil }
        return (x0, y0, x1 - x0, y1 - y0)
    }

    /// The detector's map of `picture` padded to multiples of 32 (the network halves it five times) with the mean
    /// grey, 0 once normalised. It runs a tile at a time: on a whole 1440×1088 picture it took the process from
    /// about 190 to 490 MB at its peak. Each tile sees `tileMargin` of the picture around its own part, of whose
    /// map only that part is kept, so lettering at a tile's edge is seen with what surrounds it. The network
    /// weighs its channels by their mean over what it is shown, so a tile's map is not exactly that part of the
    /// whole picture's (6–7 % of the text pixels of a 12-megapixel shelf photo fall on the other side of the
    /// threshold); the model was trained on 640-pixel crops, and samples/ reads the same either way.
    static func probabilities(_ picture: RGBImage, model: OnnxSession) throws(OCRError) -> (
        values: [Float], width: Int, height: Int
    ) {
        let width = (picture.width + 31) / 32 * 32, height = (picture.height + 31) / 32 * 32
        var map = [Float](repeating: 0, count: width * height)
        for rows in parts(height) {
            for columns in parts(width) {
                let x0 = max(0, columns.lowerBound - tileMargin), y0 = max(0, rows.lowerBound - tileMargin)
                let w = min(width, columns.upperBound + tileMargin) - x0,
                    h = min(height, rows.upperBound + tileMargin) - y0
                var values = [Float](repeating: 0, count: 3 * w * h)
                picture.pixels.withUnsafeBufferPointer { pixels in
                    for y in y0..<min(y0 + h, picture.height) {
                        for x in x0..<min(x0 + w, picture.width) {
                            let source = (y * picture.width + x) * 3, target = (y - y0) * w + (x - x0)
                            // BGR, as PaddleOCR's OpenCV pictures are, each channel to -1…1.
                            for c in 0..<3 { values[c * w * h + target] = Float(pixels[source + 2 - c]) / 127.5 - 1 }
                        }
                    }
                }
                let tile = try model.run(Tensor(shape: [1, 3, h, w], values: values))
                guard tile.shape.count == 4, tile.shape[2] == h, tile.shape[3] == w else {
                    throw OCRError(.modelRun, "the detector gave a map of shape \(tile.shape) for a \(w)×\(h) picture")
                }
                for y in rows {
                    for x in columns { map[y * width + x] = tile.values[(y - y0) * w + (x - x0)] }
                }
                malloc_trim(0)
            }
        }
        return (map, width, height)
    }

    /// `length` (a multiple of 32) cut into the fewest parts of at most `tileSide`, each a multiple of 32.
    static func parts(_ length: Int) -> [Range<Int>] {
        let count = max(1, (length + tileSide - 1) / tileSide)
        let part = (length / 32 + count - 1) / count * 32
        return stride(from: 0, to: length, by: part).map { $0..<min(length, $0 + part) }
    }

    // MARK: orientation

    static func classify(_ image: RGBImage, frames: [LineFrame], model: OnnxSession) throws(OCRError) -> [LineFrame] {
        var frames = frames
        let (width, height) = classifierSize
        for start in stride(from: 0, to: frames.count, by: batchSize) {
            let batch = Array(start..<min(frames.count, start + batchSize))
            var values = [Float](repeating: 0, count: batch.count * 3 * height * width)
            for (n, index) in batch.enumerated() {
                LineSampler.fill(
                    &values, at: n * 3 * height * width, tensorWidth: width, height: height, from: image,
                    frame: frames[index], maximumWidth: width)
            }
            let output = try model.run(Tensor(shape: [batch.count, 3, height, width], values: values))
            guard output.shape == [batch.count, 2] else {
                throw OCRError(.modelRun, "the orientation classifier gave an output of shape \(output.shape)")
            }
            for (n, index) in batch.enumerated() where Double(output.values[2 * n + 1]) >= turnConfidence {
                frames[index] = frames[index].turned
            }
        }
        return frames
    }

    // MARK: recognition

    /// A line read less surely than this is read again turned half round. The classifier sees a line squeezed to
    /// 192×48, so a long spine line (thirty times longer than thick) tilted a little is often left upside down. Read
    /// so, a line came out between 0.5 and 0.82 ("LOULEYO NUTM H U S T T" for "LO QUE NO ES TUYO" on a library
    /// photo, "Le es" for a rendered "Les Misérables"); lines read the right way round mostly come out above 0.95.
    /// The second reading is kept when it is surer and not itself doubtful: a small-print line read upside down may
    /// come out a little surer than its poor reading the right way round ("olo. oad lapp jafnu e7" for "La muer del
    /// elo rojo"). On the library data set's two-shelf photo 40 of 156 lines are read twice.
    static let doubtfulReading = 0.9

    /// The lines read as the classifier turned them, and those read doubtfully read again the other way round: the
    /// frames as read (a line the second reading won is turned) and their readings.
    static func recogniseEitherWay(_ image: RGBImage, frames: [LineFrame], models: PPOCRModels) throws(OCRError)
        -> (frames: [LineFrame], readings: [(text: String, confidence: Double)])
    {
        var frames = frames
        var readings = try recognise(image, frames: frames, models: models)
        let doubtful = readings.indices.filter { readings[$0].confidence < doubtfulReading }
        guard !doubtful.isEmpty else { return (frames, readings) }
        let turned = doubtful.map { frames[$0].turned }
        for (index, (frame, reading)) in zip(
            doubtful, zip(turned, try recognise(image, frames: turned, models: models)))
        where reading.confidence >= doubtfulReading && reading.confidence > readings[index].confidence {
            frames[index] = frame
            readings[index] = reading
        }
        return (frames, readings)
    }

    static func recognise(_ image: RGBImage, frames: [LineFrame], models: PPOCRModels) throws(OCRError) -> [(
        text: String, confidence: Double
    )] {
        let height = recogniserHeight
        let widths = frames.map {
            min(recogniserMaximumWidth, max(1, Int((Double(height) * $0.length / max(1, $0.thickness)).rounded(.up))))
        }
        var results = [(text: String, confidence: Double)](repeating: ("", 0), count: frames.count)
        for batch in batches(widths) {
            let width = max(recogniserMinimumWidth, batch.map { widths[$0] }.max()!)
            var values = [Float](repeating: 0, count: batch.count * 3 * height * width)
            for (n, index) in batch.enumerated() {
                LineSampler.fill(
                    &values, at: n * 3 * height * width, tensorWidth: width, height: height, from: image,
                    frame: frames[index], maximumWidth: widths[index])
            }
            let output = try models.recogniser.run(Tensor(shape: [batch.count, 3, height, width], values: values))
            guard output.shape.count == 3, output.shape[0] == batch.count, output.shape[2] == models.characters.count
            else {
                throw OCRError(
                    .modelRun,
                    "the recogniser gave an output of shape \(output.shape) for \(models.characters.count) characters")
            }
            let steps = output.shape[1], classes = output.shape[2]
            for (n, index) in batch.enumerated() {
                results[index] = output.values.withUnsafeBufferPointer { values in
                    CTCDecoder.decode(
                        UnsafeBufferPointer(rebasing: values[(n * steps * classes)..<((n + 1) * steps * classes)]),
                        steps: steps, classes: classes, characters: models.characters)
                }
            }
        }
        return results
    }
}

extension PPOCRReader {
    /// The lines of `widths` (their indices) in batches for the recogniser: sorted by width, so each batch pads its
    /// lines to a width close to their own, at most `batchSize` lines and `batchColumns` columns once padded.
    static func batches(_ widths: [Int]) -> [[Int]] {
        var batches: [[Int]] = []
        for index in widths.indices.sorted(by: { widths[$0] < widths[$1] }) {
            // Each line is padded to the batch's widest: the one being added.
            let columns = max(recogniserMinimumWidth, widths[index])
            if let batch = batches.last, batch.count < batchSize, (batch.count + 1) * columns <= batchColumns {
                batches[batches.count - 1].append(index)
            } else {
                batches.append([index])
            }
        }
        return batches
    }
}

/// CTC's greedy decoding: the most probable class at each step, repeats merged, blanks dropped.
enum CTCDecoder {
    /// `probabilities` is `steps`×`classes`; class 0 is the blank. The confidence is the mean probability of the
    /// characters kept (0 when none is).
    static func decode(
        _ probabilities: UnsafeBufferPointer<Float>, steps: Int, classes: Int,
        characters: [String]
    ) -> (text: String, confidence: Double) {
        var text = "", sum = 0.0, kept = 0, previous = -1
        for t in 0..<steps {
            var best = 0, bestValue = -Float.infinity
            for c in 0..<classes where probabilities[t * classes + c] > bestValue {
                best = c; bestValue = probabilities[t * classes + c]
            }
            defer { previous = best }
            guard best != 0, best != previous, best < characters.count else { continue }
            text += characters[best]; sum += Double(bestValue); kept += 1
        }
        return (text, kept > 0 ? sum / Double(kept) : 0)
    }

    /// The model's character list split into lines as Python's `str.splitlines` does (RapidOCR reads it so):
    /// at \n, \r, \r\n, \u{0B}, \u{0C}, \u{1C}, \u{1D}, \u{1E}, \u{85}, \u{2028} and \u{2029}; no empty last line.
    static func lines(_ text: String) -> [String] {
        let breaks: Set<Unicode.Scalar> = [
            "\n", "\r", "\u{0B}", "\u{0C}", "\u{1C}", "\u{1D}", "\u{1E}", "\u{85}", "\u{2028}", "\u{2029}",
        ]
        var lines: [String] = [], current = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        var pending = scalars.next()
        while let scalar = pending {
            pending = scalars.next()
            guard breaks.contains(scalar) else { current.append(scalar); continue }
            if scalar == "\r", pending == "\n" { pending = scalars.next() }
            lines.append(String(current)); current = String.UnicodeScalarView()
        }
        if !current.isEmpty { lines.append(String(current)) }
        return lines
    }
}

/// Cuts a line out of a picture straightened, straight into a model's input.
enum LineSampler {
    /// Writes the line at `frame` of `image`, scaled to `height` rows and at most `maximumWidth` columns (its own
    /// proportions otherwise), into a 3×`height`×`tensorWidth` block of `values` at `offset`: BGR, each channel
    /// to -1…1, the columns past the line left at 0. Each output pixel averages a few bilinear samples when the
    /// line is larger than the output, so small print is not aliased.
    static func fill(
        _ values: inout [Float], at offset: Int, tensorWidth: Int, height: Int, from image: RGBImage,
        frame: LineFrame, maximumWidth: Int
    ) {
        let natural = Int((Double(height) * frame.length / max(1, frame.thickness)).rounded(.up))
        let width = max(1, min(maximumWidth, tensorWidth, natural))
        let along = frame.along / Double(width), across = frame.across / Double(height)
        let step = max((along * along).sum().squareRoot(), (across * across).sum().squareRoot())
        let k = max(1, min(4, Int(step.rounded(.up))))
        let plane = height * tensorWidth
        image.pixels.withUnsafeBufferPointer { pixels in
            values.withUnsafeMutableBufferPointer { out in
                for j in 0..<height {
                    for i in 0..<width {
                        var r = 0.0, g = 0.0, b = 0.0
                        for sj in 0..<k {
                            for si in 0..<k {
                                let point =
                                    frame.origin + along * ((Double(i) + (Double(si) + 0.5) / Double(k)))
                                    + across * ((Double(j) + (Double(sj) + 0.5) / Double(k)))
                                let (sr, sg, sb) = bilinear(pixels, width: image.width, height: image.height, at: point)
                                r += sr; g += sg; b += sb
                            }
                        }
                        let n = Double(k * k) * 127.5
                        let index = offset + j * tensorWidth + i
                        out[index] = Float(b / n - 1)
                        out[index + plane] = Float(g / n - 1)
                        out[index + 2 * plane] = Float(r / n - 1)
                    }
                }
            }
        }
    }

    /// The colour at continuous `point` (pixel centres at +0.5), edges repeated outwards.
    @inline(__always)
    static func bilinear(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int, at point: SIMD2<Double>) -> (
        Double, Double, Double
    ) {
        let x = min(max(point.x - 0.5, 0), Double(width - 1)), y = min(max(point.y - 0.5, 0), Double(height - 1))
        let x0 = Int(x), y0 = Int(y), x1 = min(x0 + 1, width - 1), y1 = min(y0 + 1, height - 1)
        let fx = x - Double(x0), fy = y - Double(y0)
        func channel(_ c: Int) -> Double {
            let top =
                Double(pixels[(y0 * width + x0) * 3 + c]) * (1 - fx) + Double(pixels[(y0 * width + x1) * 3 + c]) * fx
            let bottom =
                Double(pixels[(y1 * width + x0) * 3 + c]) * (1 - fx) + Double(pixels[(y1 * width + x1) * 3 + c]) * fx
            return top * (1 - fy) + bottom * fy
        }
        return (channel(0), channel(1), channel(2))
    }
}
