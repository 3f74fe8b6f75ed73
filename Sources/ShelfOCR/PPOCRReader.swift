import Foundation
package import ShelfImaging

/// One line of text the PP-OCR reader read.
package struct TextLine: Sendable, Equatable {
    package var text: String
    /// 0…1: the mean probability of the characters kept.
    package var confidence: Double
    /// Where it is, in pixels of the picture read, in the text's reading frame.
    package var frame: LineFrame

    package init(text: String, confidence: Double, frame: LineFrame) {
        self.text = text; self.confidence = confidence; self.frame = frame
    }
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
            throw OCRError(.modelLoad, "\(files.recogniserPath) has no character list in its metadata. Reinstall the models with scripts/install-deps.sh.")
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
    static let recogniserHeight = 48, recogniserMinimumWidth = 320, recogniserMaximumWidth = 2400
    static let batchSize = 6

    /// The lines on `image` (upright), in its pixels.
    package static func lines(in image: RGBImage, models: PPOCRModels, detectorSide: Int = detectorSide) throws(OCRError) -> [TextLine] {
        let frames = try detect(image, model: models.detector, side: detectorSide)
        guard !frames.isEmpty else { return [] }
        let upright = try classify(image, frames: frames, model: models.classifier)
        let read = try recognise(image, frames: upright, models: models)
        return zip(upright, read).compactMap { frame, reading in
            guard reading.confidence >= minimumConfidence,
                  reading.text.unicodeScalars.contains(where: Character.isLetterOrDigit) else { return nil }
            return TextLine(text: reading.text.trimmingCharacters(in: .whitespaces), confidence: reading.confidence, frame: frame)
        }
    }

    // MARK: detection

    static func detect(_ image: RGBImage, model: OnnxSession, side: Int) throws(OCRError) -> [LineFrame] {
        let scale = min(1, Double(side) / Double(max(image.width, image.height)))
        let small = scale < 1 ? image.resized(width: Int((Double(image.width) * scale).rounded()),
                                              height: Int((Double(image.height) * scale).rounded())) : image
        // Padded to multiples of 32 (the network halves the picture five times) with the mean grey, 0 once normalised.
        let width = (small.width + 31) / 32 * 32, height = (small.height + 31) / 32 * 32
        var values = [Float](repeating: 0, count: 3 * width * height)
        small.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<small.height {
                for x in 0..<small.width {
                    let source = (y * small.width + x) * 3, target = y * width + x
                    // BGR, as PaddleOCR's OpenCV pictures are, each channel to -1…1.
                    for c in 0..<3 { values[c * width * height + target] = Float(pixels[source + 2 - c]) / 127.5 - 1 }
                }
            }
        }
        let map = try model.run(Tensor(shape: [1, 3, height, width], values: values))
        guard map.shape.count == 4, map.shape[2] == height, map.shape[3] == width else {
            throw OCRError(.modelRun, "the detector gave a map of shape \(map.shape) for a \(width)×\(height) picture")
        }
        let actualScale = Double(small.width) / Double(image.width)
        return TextLineFinder.lines(probabilities: map.values, width: width, height: height)
            .map { $0.frame.scaled(1 / actualScale) }
    }

    // MARK: orientation

    static func classify(_ image: RGBImage, frames: [LineFrame], model: OnnxSession) throws(OCRError) -> [LineFrame] {
        var frames = frames
        let (width, height) = classifierSize
        for start in stride(from: 0, to: frames.count, by: batchSize) {
            let batch = Array(start..<min(frames.count, start + batchSize))
            var values = [Float](repeating: 0, count: batch.count * 3 * height * width)
            for (n, index) in batch.enumerated() {
                LineSampler.fill(&values, at: n * 3 * height * width, tensorWidth: width, height: height, from: image,
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

    static func recognise(_ image: RGBImage, frames: [LineFrame], models: PPOCRModels) throws(OCRError) -> [(text: String, confidence: Double)] {
        let height = recogniserHeight
        let widths = frames.map { min(recogniserMaximumWidth, max(1, Int((Double(height) * $0.length / max(1, $0.thickness)).rounded(.up)))) }
        // Sorted by width, so each batch pads its lines to a width close to their own.
        let order = widths.indices.sorted { widths[$0] < widths[$1] }
        var results = [(text: String, confidence: Double)](repeating: ("", 0), count: frames.count)
        for start in stride(from: 0, to: order.count, by: batchSize) {
            let batch = Array(order[start..<min(order.count, start + batchSize)])
            let width = max(recogniserMinimumWidth, batch.map { widths[$0] }.max()!)
            var values = [Float](repeating: 0, count: batch.count * 3 * height * width)
            for (n, index) in batch.enumerated() {
                LineSampler.fill(&values, at: n * 3 * height * width, tensorWidth: width, height: height, from: image,
                                 frame: frames[index], maximumWidth: widths[index])
            }
            let output = try models.recogniser.run(Tensor(shape: [batch.count, 3, height, width], values: values))
            guard output.shape.count == 3, output.shape[0] == batch.count, output.shape[2] == models.characters.count else {
                throw OCRError(.modelRun, "the recogniser gave an output of shape \(output.shape) for \(models.characters.count) characters")
            }
            let steps = output.shape[1], classes = output.shape[2]
            for (n, index) in batch.enumerated() {
                results[index] = output.values.withUnsafeBufferPointer { values in
                    CTCDecoder.decode(UnsafeBufferPointer(rebasing: values[(n * steps * classes)..<((n + 1) * steps * classes)]),
                                      steps: steps, classes: classes, characters: models.characters)
                }
            }
        }
        return results
    }
}

/// CTC's greedy decoding: the most probable class at each step, repeats merged, blanks dropped.
enum CTCDecoder {
    /// `probabilities` is `steps`×`classes`; class 0 is the blank. The confidence is the mean probability of the
    /// characters kept (0 when none is).
    static func decode(_ probabilities: UnsafeBufferPointer<Float>, steps: Int, classes: Int,
                       characters: [String]) -> (text: String, confidence: Double) {
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
        let breaks: Set<Unicode.Scalar> = ["\n", "\r", "\u{0B}", "\u{0C}", "\u{1C}", "\u{1D}", "\u{1E}", "\u{85}", "\u{2028}", "\u{2029}"]
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
    static func fill(_ values: inout [Float], at offset: Int, tensorWidth: Int, height: Int, from image: RGBImage,
                     frame: LineFrame, maximumWidth: Int) {
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
                                let point = frame.origin + along * ((Double(i) + (Double(si) + 0.5) / Double(k)))
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
    static func bilinear(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int, at point: SIMD2<Double>) -> (Double, Double, Double) {
        let x = min(max(point.x - 0.5, 0), Double(width - 1)), y = min(max(point.y - 0.5, 0), Double(height - 1))
        let x0 = Int(x), y0 = Int(y), x1 = min(x0 + 1, width - 1), y1 = min(y0 + 1, height - 1)
        let fx = x - Double(x0), fy = y - Double(y0)
        func channel(_ c: Int) -> Double {
            let top = Double(pixels[(y0 * width + x0) * 3 + c]) * (1 - fx) + Double(pixels[(y0 * width + x1) * 3 + c]) * fx
            let bottom = Double(pixels[(y1 * width + x0) * 3 + c]) * (1 - fx) + Double(pixels[(y1 * width + x1) * 3 + c]) * fx
            return top * (1 - fy) + bottom * fy
        }
        return (channel(0), channel(1), channel(2))
    }
}
