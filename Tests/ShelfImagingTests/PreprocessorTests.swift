import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfImaging

@Suite struct PreprocessorTests {
    // MARK: Orientation

    @Test("Every EXIF orientation comes out upright: the red quadrant is top-left", arguments: 1...8)
    func orientationIsApplied(_ orientation: Int) throws {
        let jpeg = JPEGFactory.quadrants(width: 320, height: 200, orientation: orientation)
        let prepared = try Preprocessor.prepare(jpeg, preset: .cloudflare)
        #expect(prepared.source.orientation == orientation)
        #expect(prepared.width == 320 && prepared.height == 200)
        try expectQuadrants(prepared.jpeg, width: 320, height: 200)
    }

    // MARK: Size and bytes

    @Test(
        "Sizes and bytes per preset on a detailed photo",
        arguments: [
            ("gemini", ImagePreset.gemini, 3600, 2700),
            ("cloudflare", ImagePreset.cloudflare, 2400, 1800),
            ("openai", ImagePreset.openAICompatible(maxSide: 1536, quality: 85), 2400, 1800),
        ])
    func presetSizes(_ name: String, _ preset: ImagePreset, _ width: Int, _ height: Int) throws {
        let jpeg = JPEGFactory.textured(width: width, height: height, seed: 3)
        let prepared = try Preprocessor.prepare(jpeg, preset: preset)
        print(
            "\(name): \(width)×\(height) \(jpeg.count) B → \(prepared.width)×\(prepared.height) q\(prepared.quality) \(prepared.jpeg.count) B"
        )
        #expect(max(prepared.width, prepared.height) <= preset.maxSide)
        #expect(max(prepared.width, prepared.height) >= preset.maxSide / 2) // the floor
        #expect(prepared.jpeg.count <= preset.targetBytes.upperBound)
        #expect((preset.minQuality...preset.quality).contains(prepared.quality))
        #expect(abs(Double(prepared.width) / Double(prepared.height) - 4.0 / 3.0) < 0.01) // aspect kept
        let decoded = try #require(JPEGFactory.decode(prepared.jpeg))
        #expect(decoded.width == prepared.width && decoded.height == prepared.height)
    }

    @Test("Odd sizes come out upright and whole in every orientation", arguments: 1...8)
    func oddSizes(_ orientation: Int) throws {
        let jpeg = JPEGFactory.quadrants(width: 321, height: 203, orientation: orientation)
        let prepared = try Preprocessor.prepare(jpeg, preset: .cloudflare)
        try expectQuadrants(prepared.jpeg, width: 321, height: 203)
        let preset = ImagePreset(maxSide: 161, quality: 85, targetBytes: 1...400_000, minQuality: 65)
        let small = try Preprocessor.prepare(jpeg, preset: preset)
        #expect(small.width == 161 && small.height == 102)
        try expectQuadrants(small.jpeg, width: 161, height: 102)
    }

    @Test(
        "Grey, 4:4:4, 4:2:2, 4:4:0 and 4:1:1 JPEGs come out upright and resized like 4:2:0 ones",
        arguments: [(Int32(3), "grey"), (0, "4:4:4"), (1, "4:2:2"), (4, "4:4:0"), (5, "4:1:1")])
    func subsamplings(_ subsampling: Int32, _ name: String) throws {
        let (pixels, width, height) = JPEGFactory.quadrantPixels(width: 640, height: 400, orientation: 6)
        let stored = try JPEGCompressor().compress(
            RGBImage(width: width, height: height, pixels: pixels), quality: 90,
            subsampling: subsampling)
        let jpeg = JPEGFactory.withOrientation(stored, 6)
        let preset = ImagePreset(maxSide: 300, quality: 85, targetBytes: 1...400_000, minQuality: 65)
        let prepared = try Preprocessor.prepare(jpeg, preset: preset)
        #expect(prepared.width == 300 && prepared.height == 188, "\(name)")
        if subsampling == 3 {
            let decoded = try #require(JPEGFactory.decode(prepared.jpeg))
            #expect(decoded.width == 300 && decoded.height == 188)
        } else {
            try expectQuadrants(prepared.jpeg, width: 300, height: 188)
        }
    }

    @Test("A photo under the preset's side is not enlarged and keeps the preset's quality")
    func neverUpscales() throws {
        let jpeg = JPEGFactory.textured(width: 800, height: 600, seed: 1)
        for preset in [ImagePreset.gemini, .cloudflare, .openAICompatible(maxSide: 1536, quality: 85)] {
            let prepared = try Preprocessor.prepare(jpeg, preset: preset)
            #expect(prepared.width == 800 && prepared.height == 600)
            #expect(prepared.quality == preset.quality)
        }
    }

    @Test("A quarter-turned photo is resized on its displayed long side")
    func quarterTurnedResize() throws {
        let jpeg = JPEGFactory.textured(width: 2000, height: 1500, seed: 2, orientation: 6)
        let prepared = try Preprocessor.prepare(jpeg, preset: .cloudflare)
        #expect(prepared.width == 1152 && prepared.height == 1536)
    }

    @Test("The search shrinks the picture when the lowest quality is still too big")
    func shrinksWhenQualityIsNotEnough() throws {
        let jpeg = JPEGFactory.textured(width: 1600, height: 1200, seed: 4)
        let preset = ImagePreset(maxSide: 1600, quality: 90, targetBytes: 60_000...90_000, minQuality: 70)
        let prepared = try Preprocessor.prepare(jpeg, preset: preset)
        #expect(prepared.width < 1600 && prepared.width >= 800)
        // Each smaller size is searched from the preset's quality again, so the quality that fits may be above 70.
        #expect((preset.minQuality...preset.quality).contains(prepared.quality))
        #expect(prepared.jpeg.count <= 90_000)
    }

    // MARK: Privacy

    @Test("What is sent has no EXIF, XMP or ICC segment, and the original is left as it was")
    func noMetadata() throws {
        let original = JPEGFactory.withOrientation(JPEGFactory.textured(width: 640, height: 480, seed: 5), 6)
        let copy = original
        #expect(JPEGMarkers.headerSegments(of: original).contains { $0.marker == JPEGMarkers.app1 })
        let prepared = try Preprocessor.prepare(original, preset: .gemini)
        let markers = JPEGMarkers.headerSegments(of: prepared.jpeg).map(\.marker)
        #expect(!markers.isEmpty)
        #expect(markers.allSatisfy { !(0xE1...0xEF).contains($0) }, "APPn segments: \(markers)")
        #expect(
            !prepared.jpeg.indices.dropLast(4).contains { i in prepared.jpeg[i...].starts(with: Array("Exif".utf8)) })
        #expect(original == copy)
        let crop = try Preprocessor.crop(original, box: Box(x1: 0.2, y1: 0.2, x2: 0.6, y2: 0.8))
        #expect(JPEGMarkers.headerSegments(of: crop).allSatisfy { !(0xE1...0xEF).contains($0.marker) })
    }

    // MARK: Failures

    @Test("Truncated and corrupt inputs fail as unreadable, naming what was wrong", arguments: [0.3, 0.9, 0.999])
    func truncated(_ fraction: Double) {
        let jpeg = JPEGFactory.truncated(JPEGFactory.textured(width: 640, height: 480), keeping: fraction)
        let error = expectPhotoError(.unreadableImage) { try Preprocessor.prepare(jpeg, preset: .gemini) }
        #expect(error?.message.contains("truncated or corrupt JPEG") == true)
        expectPhotoError(.unreadableImage) { try Preprocessor.crop(jpeg, box: Box(x1: 0, y1: 0, x2: 1, y2: 1)) }
    }

    @Test("Not an image, an empty file and PNG fail with their reasons")
    func notImages() {
        let text = Array("shelf notes\n".utf8)
        let error = expectPhotoError(.unreadableImage) { try Preprocessor.prepare(text, preset: .gemini) }
        #expect(error?.message.hasPrefix("not an image: starts with text") == true)
        expectPhotoError(.unreadableImage) { try Preprocessor.prepare([], preset: .gemini) }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 64)
        expectPhotoError(.unsupportedFormat) { try Preprocessor.prepare(png, preset: .gemini) }
    }

    @Test("Never crashes on a JPEG with random bytes overwritten")
    func mutatedJPEGs() {
        let original = JPEGFactory.withOrientation(JPEGFactory.textured(width: 96, height: 64), 6)
        for jpeg in mutations(of: original, count: 200, seed: 7) {
            do {
                let prepared = try Preprocessor.prepare(jpeg, preset: .cloudflare)
                #expect(JPEGFactory.decode(prepared.jpeg) != nil)
            } catch {
                #expect(error.disposition == .dead)
            }
        }
    }

    @Test("A decompression bomb is refused from its header")
    func bomb() {
        let bomb = JPEGFactory.huge(width: 20_000, height: 20_000)
        expectPhotoError(.photoTooLarge) { try Preprocessor.prepare(bomb, preset: .gemini) }
        expectPhotoError(.photoTooLarge) { try Preprocessor.crop(bomb, box: Box(x1: 0, y1: 0, x2: 1, y2: 1)) }
        let jpeg = JPEGFactory.textured(width: 640, height: 480)
        expectPhotoError(.photoTooLarge) {
            try Preprocessor.prepare(jpeg, preset: .gemini, maxPixels: 640 * 480 - 1)
        }
    }

    // MARK: Crop

    @Test("The crop is the boxed region of the upright photo", arguments: 1...8)
    func cropRegion(_ orientation: Int) throws {
        let jpeg = JPEGFactory.quadrants(width: 400, height: 300, orientation: orientation)
        let corners: [(Box, [UInt8])] = [
            (Box(x1: 0.05, y1: 0.05, x2: 0.45, y2: 0.45), JPEGFactory.topLeft),
            (Box(x1: 0.55, y1: 0.05, x2: 0.95, y2: 0.45), JPEGFactory.topRight),
            (Box(x1: 0.05, y1: 0.55, x2: 0.45, y2: 0.95), JPEGFactory.bottomLeft),
            (Box(x1: 0.55, y1: 0.55, x2: 0.95, y2: 0.95), JPEGFactory.bottomRight),
        ]
        for (box, color) in corners {
            let crop = try Preprocessor.crop(jpeg, box: box, margin: 0.02)
            let decoded = try #require(JPEGFactory.decode(crop))
            #expect(decoded.width == 176 && decoded.height == 132) // (0.40 + 2 × 0.02) of 400×300
            expectColor(mean(decoded.pixels), color, "box \(box)")
        }
    }

    @Test(
        "A standing spine's crop is turned to read across: its top to the left unless its text runs upward",
        arguments: [nil, TextRun.downward, .upward, .across])
    func cropTurnedToReadAcross(_ run: TextRun?) throws {
        let jpeg = JPEGFactory.quadrants(width: 400, height: 300, orientation: 6)
        // A spine in the left column, from the photo's top (top-left colour) to its bottom (bottom-left colour).
        let crop = try Preprocessor.crop(
            jpeg, box: Box(x1: 0.1, y1: 0, x2: 0.3, y2: 1), margin: 0, readAcross: true, textRun: run)
        let decoded = try #require(JPEGFactory.decode(crop))
        guard run != .across else {
            #expect(decoded.width == 80 && decoded.height == 300) // a book lying flat is left as it is
            return
        }
        #expect(decoded.width == 300 && decoded.height == 80)
        func half(_ left: Bool) -> [UInt8] {
            var pixels: [UInt8] = []
            for y in 0..<decoded.height {
                let start = (y * decoded.width + (left ? 0 : decoded.width / 2 + 10)) * 3
                pixels += decoded.pixels[start..<(start + (decoded.width / 2 - 10) * 3)]
            }
            return pixels
        }
        let (first, second) =
            run == .upward
            ? (JPEGFactory.bottomLeft, JPEGFactory.topLeft) : (JPEGFactory.topLeft, JPEGFactory.bottomLeft)
        expectColor(mean(half(true)), first, "left half, \(String(describing: run))")
        expectColor(mean(half(false)), second, "right half, \(String(describing: run))")
    }

    @Test("A margin never reaches outside the photo")
    func cropMarginClamped() throws {
        let jpeg = JPEGFactory.quadrants(width: 400, height: 300)
        let crop = try Preprocessor.crop(jpeg, box: Box(x1: 0, y1: 0, x2: 0.1, y2: 1), margin: 0.05)
        let decoded = try #require(JPEGFactory.decode(crop))
        #expect(decoded.width == 60 && decoded.height == 300)
    }

    // MARK: Quality signals

    @Test("A sharp, well exposed photo gets no suggestion")
    func sharpPhoto() throws {
        let prepared = try Preprocessor.prepare(
            JPEGFactory.textured(width: 1280, height: 960, seed: 8), preset: .cloudflare)
        print("sharp: \(prepared.signals)")
        #expect(prepared.signals.sharpness > QualitySignals.Threshold.blurrySharpness * 3)
        #expect(prepared.signals.suggestions.isEmpty)
        #expect(prepared.signals.longSide == 1280)
    }

    @Test("A blurred photo is flagged blurry_image")
    func blurredPhoto() throws {
        var pixels = JPEGFactory.texturedPixels(width: 1280, height: 960, seed: 8)
        for _ in 0..<3 { boxBlur(&pixels, width: 1280, height: 960, radius: 7) }
        let prepared = try Preprocessor.prepare(
            JPEGFactory.jpeg(rgb: pixels, width: 1280, height: 960), preset: .cloudflare)
        print("blurred: \(prepared.signals)")
        #expect(prepared.signals.suggestions.map(\.type) == [.blurryImage])
    }

    @Test("A dark photo is flagged lighting_issues")
    func darkPhoto() throws {
        let pixels = JPEGFactory.texturedPixels(width: 1280, height: 960, seed: 8).map { $0 / 10 }
        let prepared = try Preprocessor.prepare(
            JPEGFactory.jpeg(rgb: pixels, width: 1280, height: 960), preset: .cloudflare)
        print("dark: \(prepared.signals)")
        #expect(prepared.signals.darkFraction > 0.9)
        #expect(prepared.signals.suggestions.map(\.type) == [.lightingIssues])
    }

    @Test("A small photo is flagged distance_too_far")
    func smallPhoto() throws {
        let prepared = try Preprocessor.prepare(JPEGFactory.textured(width: 800, height: 600), preset: .cloudflare)
        #expect(prepared.signals.suggestions.map(\.type).contains(.distanceTooFar))
    }

    @Test("Large bright colourless blobs are flagged glare_detected")
    func glare() throws {
        var pixels = JPEGFactory.texturedPixels(width: 1280, height: 960, seed: 9)
        for (cx, cy) in [(300, 400), (700, 500), (1000, 350)] { // three round reflections, r = 70
            for y in cy - 70..<cy + 70 {
                for x in cx - 70..<cx + 70 where (x - cx) * (x - cx) + (y - cy) * (y - cy) < 70 * 70 {
                    let i = (y * 1280 + x) * 3
                    pixels[i] = 255; pixels[i + 1] = 255; pixels[i + 2] = 255
                }
            }
        }
        let prepared = try Preprocessor.prepare(
            JPEGFactory.jpeg(rgb: pixels, width: 1280, height: 960), preset: .cloudflare)
        print("glare: \(prepared.signals)")
        #expect(prepared.signals.suggestions.map(\.type) == [.glareDetected])
    }

    // MARK: HEIC

    @Test("HEIC decodes upright, honouring its own rotation and mirroring", arguments: [1, 3, 6, 7])
    func heic(_ orientation: Int) throws {
        guard JPEGFactory.canEncodeHEIC else {
            print("skipped: this libheif has no HEVC encoder, so no HEIC can be made to test with")
            return
        }
        let (pixels, width, height) = JPEGFactory.quadrantPixels(width: 320, height: 240, orientation: orientation)
        let heic = try #require(JPEGFactory.heic(rgb: pixels, width: width, height: height, orientation: orientation))
        #expect(ImageFormat.sniff(heic) == .heic)
        let info = try PhotoInspector.inspect(heic)
        #expect(info.format == .heic && info.width == 320 && info.height == 240 && info.orientation == 1)
        let prepared = try Preprocessor.prepare(heic, preset: .gemini)
        #expect(prepared.source.format == .heic)
        #expect(prepared.width == 320 && prepared.height == 240)
        try expectQuadrants(prepared.jpeg, width: 320, height: 240)
        let crop = try Preprocessor.crop(heic, box: Box(x1: 0.55, y1: 0.55, x2: 0.95, y2: 0.95), margin: 0)
        expectColor(mean(try #require(JPEGFactory.decode(crop)).pixels), JPEGFactory.bottomRight, "HEIC crop")
    }

    @Test("A HEIC is resized like a JPEG, and a truncated one fails as unreadable")
    func heicResizeAndTruncation() throws {
        guard JPEGFactory.canEncodeHEIC else {
            print("skipped: this libheif has no HEVC encoder, so no HEIC can be made to test with")
            return
        }
        let pixels = JPEGFactory.texturedPixels(width: 2000, height: 1500, seed: 6)
        let heic = try #require(JPEGFactory.heic(rgb: pixels, width: 2000, height: 1500))
        let prepared = try Preprocessor.prepare(heic, preset: .cloudflare)
        #expect(prepared.width == 1536 && prepared.height == 1152)
        #expect(prepared.jpeg.count <= ImagePreset.cloudflare.targetBytes.upperBound)
        let error = expectPhotoError(.unreadableImage) {
            try Preprocessor.prepare(JPEGFactory.truncated(heic, keeping: 0.6), preset: .cloudflare)
        }
        #expect(error?.message.contains("HEIC/HEIF") == true)
    }

    // MARK: Real photos

    @Test(
        "The real shelf photos land within their presets",
        .enabled(if: realPhotosFolder != nil, "shared data set not found"),
        arguments: ["one_shelf_example.jpg", "two_shelves_example.jpg"])
    func realPhotos(_ name: String) throws {
        let bytes = Array(try Data(contentsOf: try #require(Self.realPhotosFolder).appendingPathComponent(name)))
        for (presetName, preset) in [("gemini", ImagePreset.gemini), ("cloudflare", .cloudflare)] {
            let prepared = try Preprocessor.prepare(bytes, preset: preset)
            print(
                "\(name) \(presetName): \(prepared.source.width)×\(prepared.source.height) \(bytes.count) B → "
                    + "\(prepared.width)×\(prepared.height) q\(prepared.quality) \(prepared.jpeg.count) B; \(prepared.signals)"
            )
            #expect(max(prepared.width, prepared.height) <= preset.maxSide)
            #expect(prepared.jpeg.count <= preset.targetBytes.upperBound)
            #expect(prepared.signals.suggestions.filter { $0.type == .blurryImage }.isEmpty)
        }
    }

    /// `shared/data/library-dataset` beside the repository or one of its parents (for a git worktree).
    static let realPhotosFolder: URL? = PhotoInspectorTests.realPhotoURL?.deletingLastPathComponent()
}

// MARK: Helpers

/// Checks that a decoded `jpeg` is `width`×`height` with `quadrants`' colours at the centre of each quadrant.
func expectQuadrants(_ jpeg: [UInt8], width: Int, height: Int, sourceLocation: SourceLocation = #_sourceLocation) throws
{
    let decoded = try #require(JPEGFactory.decode(jpeg), sourceLocation: sourceLocation)
    #expect(decoded.width == width && decoded.height == height, sourceLocation: sourceLocation)
    func pixel(_ x: Int, _ y: Int) -> [UInt8] {
        let i = (y * decoded.width + x) * 3
        return Array(decoded.pixels[i..<i + 3])
    }
    let w = decoded.width, h = decoded.height
    expectColor(pixel(w / 4, h / 4), JPEGFactory.topLeft, "top-left", sourceLocation: sourceLocation)
    expectColor(pixel(3 * w / 4, h / 4), JPEGFactory.topRight, "top-right", sourceLocation: sourceLocation)
    expectColor(pixel(w / 4, 3 * h / 4), JPEGFactory.bottomLeft, "bottom-left", sourceLocation: sourceLocation)
    expectColor(pixel(3 * w / 4, 3 * h / 4), JPEGFactory.bottomRight, "bottom-right", sourceLocation: sourceLocation)
}

func expectColor(
    _ actual: [UInt8], _ expected: [UInt8], _ what: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    let close = zip(actual, expected).allSatisfy { abs(Int($0) - Int($1)) <= 24 }
    #expect(close, "\(what): got \(actual), expected \(expected)", sourceLocation: sourceLocation)
}

func mean(_ pixels: [UInt8]) -> [UInt8] {
    var sums = [0, 0, 0]
    for (i, value) in pixels.enumerated() { sums[i % 3] += Int(value) }
    return sums.map { UInt8($0 / max(1, pixels.count / 3)) }
}

/// A box blur of the given radius (edges clamped), rows then columns, with running sums.
func boxBlur(_ pixels: inout [UInt8], width: Int, height: Int, radius: Int) {
    /// Blurs `count` values `step` apart starting at `start`, in place.
    func blurLine(_ p: UnsafeMutableBufferPointer<UInt8>, start: Int, count: Int, step: Int, line: inout [Int]) {
        for k in 0..<count { line[k] = Int(p[start + k * step]) }
        var sum = 0
        for k in -radius...radius { sum += line[min(max(k, 0), count - 1)] }
        for k in 0..<count {
            p[start + k * step] = UInt8(sum / (2 * radius + 1))
            sum += line[min(k + radius + 1, count - 1)] - line[max(k - radius, 0)]
        }
    }
    var line = [Int](repeating: 0, count: max(width, height))
    pixels.withUnsafeMutableBufferPointer { p in
        for y in 0..<height {
            for c in 0..<3 { blurLine(p, start: y * width * 3 + c, count: width, step: 3, line: &line) }
        }
        for x in 0..<width {
            for c in 0..<3 { blurLine(p, start: x * 3 + c, count: height, step: width * 3, line: &line) }
        }
    }
}
