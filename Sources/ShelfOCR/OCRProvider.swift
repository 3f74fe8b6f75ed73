import Dispatch
import Foundation
package import Logging
package import ShelfCore
package import ShelfImaging
package import ShelfProviders

/// `[ocr]` as the provider needs it.
package struct OCRSettings: Sendable {
    /// The reader: PP-OCR through ONNX Runtime, or Tesseract.
    package enum Engine: Sendable, Equatable {
        case ppocr(PPOCRFiles)
        case tesseract
    }

    package var engine: Engine
    /// Tesseract traineddata names, tried together ("eng", "spa", "cat"…).
    package var languages: [String]
    /// Where the traineddata are; nil: `Traineddata.folder()`.
    package var dataPath: String?
    /// The long side the photo is read at: spine lettering is then a few tens of pixels high.
    package var maxSide: Int
    /// Threads PP-OCR's models use: `[pipeline] concurrency`, at most the machine's cores.
    package var threads: Int

    package init(
        engine: Engine = .tesseract, languages: [String] = ["eng"], dataPath: String? = Traineddata.folder(),
        maxSide: Int = 2400, threads: Int = 2
    ) {
        self.engine = engine; self.languages = languages; self.dataPath = dataPath; self.maxSide = maxSide
        self.threads = threads
    }

    /// PP-OCR when its files are installed (`files` as located), else Tesseract: the default of `[ocr] engine`.
    package static func defaultEngine(files: PPOCRFiles = .locate()) -> Engine {
        files.missing() == nil ? .ppocr(files) : .tesseract
    }
}

extension OCRSettings.Engine {
    /// The engine `[ocr] engine` names (`ppocr`, `tesseract`; nil or `auto`: PP-OCR when installed), PP-OCR's
    /// files located from `[ocr] library` and `[ocr] models_dir` where they are set.
    package init(named name: String?, library: String?, modelsFolder: String?) {
        let files = PPOCRFiles.locate(library: library, modelsFolder: modelsFolder)
        self =
            switch name {
            case "ppocr": .ppocr(files)
            case "tesseract": .tesseract
            default: OCRSettings.defaultEngine(files: files)
            }
    }
}

/// What the `ocr` provider saves as its raw response: the spines Tesseract read, so `parse` (also after a
/// crash) needs no Tesseract again. A response saved when the provider also matched the spines (schema
/// `shelfd.ocr/1`, with `match`, `decision` and `book` beside each spine) is read the same way: its spines.
package struct OCRResponse: Codable, Sendable, Equatable {
    package static let schema = "shelfd.ocr/2"

    package struct Reading: Codable, Sendable, Equatable {
        package var spine: Spine
    }

    package var schema = OCRResponse.schema
    package var languages: [String]
    package var width: Int
    package var height: Int
    package var spines: [Reading]
}

/// The offline provider: PP-OCR (or Tesseract, `[ocr] engine`) reads the spines, and each spine's text (with its
/// box and the reader's confidence) is a book whose title is that text. The enrichment matches the texts against the book sources
/// (the local catalogue first), as it matches any model's reading.
package final class OCRProvider: VisionProvider {
    package let name = "ocr"
    package let settings: OCRSettings
    private let lane: OCRLane
    private let logger: Logger
    /// The date a reading is recorded at, and the clock its time is measured on.
    private let time: TimeSource

    /// PP-OCR's models, loaded on the first photo and dropped when idle; nil with Tesseract.
    private let ppocr: PPOCREngine?

    package init(settings: OCRSettings, logger: Logger, time: TimeSource = .system) {
        self.settings = settings; self.logger = logger; self.time = time
        lane = OCRLane(languages: settings.languages, dataPath: settings.dataPath)
        if case .ppocr(let files) = settings.engine {
            ppocr = PPOCREngine(files: files, threads: settings.threads, time: time)
        } else {
            ppocr = nil
        }
    }

    package var model: String { Self.model(settings) }

    /// The engine (and Tesseract's languages), as results record them and `status` shows them.
    package static func model(_ settings: OCRSettings) -> String {
        switch settings.engine {
        case .ppocr: "ppocr-v6-small"
        case .tesseract: "tesseract-\(OCRLane.version):\(settings.languages.joined(separator: "+"))"
        }
    }

    /// Near-lossless at the size Tesseract reads: the JPEG made for it is only decoded again.
    package var preset: ImagePreset {
        ImagePreset(
            maxSide: settings.maxSide, quality: 95, targetBytes: 0...(settings.maxSide * settings.maxSide),
            minQuality: 90)
    }

    package func send(_ photo: PhotoUpload) async throws(PhotoError) -> RawResponse {
        let started = time.clock.now
        let (spines, width, height, _) = try await read(photo.bytes)
        let languages = ppocr == nil ? settings.languages : []
        let response = OCRResponse(
            languages: languages, width: width, height: height,
            spines: spines.map { OCRResponse.Reading(spine: $0) })
        let body: Data
        do { body = try JSONStyle.encoder(pretty: false).encode(response) } catch {
            throw PhotoError(.internal, "could not encode the OCR reading: \(error)", disposition: .retry(after: nil))
        }
        logger.debug("Photo read", metadata: ["ocr.spines": "\(spines.count)"])
        return RawResponse(body: Array(body), receivedAt: time.now, latency: time.clock.now - started)
    }

    package func parse(_ raw: RawResponse) throws(PhotoError) -> ModelAnswer {
        let response: OCRResponse
        do { response = try JSONStyle.decoder().decode(OCRResponse.self, from: Data(raw.body)) } catch {
            throw PhotoError(
                .providerNonsense, "the saved OCR reading is not a \(OCRResponse.schema) document: \(error)",
                disposition: .retry(after: nil))
        }
        return ModelAnswer(books: response.spines.map { Self.book($0.spine) })
    }

    /// A spine as a book: its text as the title, to be matched by the enrichment.
    package static func book(_ spine: Spine) -> Detection {
        Detection(
            title: spine.text, confidence: spine.confidence, box: spine.box, form: .spineText, textRun: spine.reading)
    }

    package func checkReachable() async -> Result<String, PhotoError> {
        if case .ppocr(let files) = settings.engine {
            // `doctor` opens ONNX Runtime, to say whether it can be used; the daemon opens it on its first photo.
            do throws(OCRError) {
                if let missing = files.missing() { throw missing }
                let runtime = try OnnxRuntime.load(files.library)
                return .success(
                    "PP-OCRv6 with ONNX Runtime \(runtime.version) reads with the models in \(files.modelsFolder)")
            } catch {
                return .failure(error.photoError)
            }
        }
        if let problem = languageProblem() { return .failure(problem) }
        // `doctor` opens the library, to say whether it is installed; the daemon opens it on its first photo.
        guard let installed = TesseractEngine.installedVersion else {
            return .failure(
                PhotoError(
                    .providerModel, "libtesseract could not be opened. Install it: sudo apt-get install libtesseract5",
                    disposition: .providerBroken))
        }
        return .success(
            "Tesseract \(installed) reads \(settings.languages.joined(separator: "+")) from \(settings.dataPath ?? "?")"
        )
    }

    /// The configured languages' traineddata, when some are missing.
    func languageProblem() -> PhotoError? {
        let missing = Traineddata.missing(settings.languages, in: settings.dataPath)
        guard !missing.isEmpty else { return nil }
        return PhotoError(
            .providerModel,
            Traineddata.advice(missing: missing, folder: settings.dataPath) + ", then run 'shelfd doctor'.",
            disposition: .providerBroken)
    }

    /// How long each stage of reading a photo with PP-OCR took (`shelfd-bench-ocr` prints them).
    package struct StageTimes: Sendable {
        /// Decoding the photo and scaling it to `maxSide`.
        package var decoding: Duration = .zero
        package var models = PPOCRReader.StageTimes()
        /// Finding the spines' sides on the picture (`SpineEdges`).
        package var edges: Duration = .zero
        /// Grouping the lines into spines (`LineSpines`).
        package var grouping: Duration = .zero
    }

    /// The spines on the photo, read on the OCR lane (CPU-bound C work, never on the cooperative pool), and with
    /// PP-OCR how long each stage took.
    package func read(_ bytes: [UInt8]) async throws(PhotoError) -> (
        spines: [Spine], width: Int, height: Int, times: StageTimes?
    ) {
        if let ppocr {
            let clock = time.clock
            var times = StageTimes()
            var start = clock.now
            let image = PPOCRReader.readingPicture(
                try Preprocessor.rgb(bytes, maxSide: settings.maxSide), side: settings.maxSide)
            times.decoding = start.duration(to: clock.now)
            do throws(OCRError) {
                let (lines, models) = try await ppocr.read(image)
                times.models = models
                logger.debug(
                    "Models ran",
                    metadata: [
                        "ocr.lines": "\(lines.count)", "ocr.detector_ms": "\(models.detector.milliseconds)",
                        "ocr.closer_look_ms": "\(models.closerLook.milliseconds)",
                        "ocr.classifier_ms": "\(models.classifier.milliseconds)",
                        "ocr.recogniser_ms": "\(models.recogniser.milliseconds)",
                    ])
                start = clock.now
                let edges = SpineEdges.find(
                    in: image, lines: lines, boards: LineSpines.boards(lines, picture: image))
                times.edges = start.duration(to: clock.now)
                start = clock.now
                let spines = LineSpines.spines(
                    lines, width: image.width, height: image.height, picture: image, edges: edges)
                times.grouping = start.duration(to: clock.now)
                return (spines, image.width, image.height, times)
            } catch {
                throw error.photoError
            }
        }
        if let problem = languageProblem() { throw problem }
        let maxSide = settings.maxSide
        let result = await lane.run { engine throws(PhotoError) in
            let image = try Preprocessor.grey(bytes, maxSide: maxSide)
            do throws(OCRError) {
                let spines = try SpineFinder.spines(in: image) { picture throws(OCRError) in
                    try engine().words(in: picture)
                }
                return (spines, image.width, image.height, StageTimes?.none)
            } catch {
                throw error.photoError
            }
        }
        return try result.get()
    }
}

/// The Tesseract engine on a serial queue of its own, made on first use and kept: loading a language takes
/// a good fraction of a second, reading a photo several seconds of one core.
final class OCRLane: @unchecked Sendable { // unchecked: `engine` is only touched on `queue`
    private let queue = DispatchQueue(label: "shelfd.ocr")
    private let languages: [String], dataPath: String?
    private var engine: TesseractEngine?

    init(languages: [String], dataPath: String?) { self.languages = languages; self.dataPath = dataPath }

    static var version: String { TesseractEngine.version }

    /// Runs `body` on the lane; `engine()` gives the loaded engine (loading it the first time).
    func run<T: Sendable>(
        _ body: @escaping @Sendable (_ engine: () throws(OCRError) -> TesseractEngine) throws(PhotoError) -> T
    ) async
        -> Result<T, PhotoError>
    {
        await withCheckedContinuation { continuation in
            queue.async {
                let load = { () throws(OCRError) -> TesseractEngine in
                    if let engine = self.engine { return engine }
                    let engine = try TesseractEngine(languages: self.languages, dataPath: self.dataPath ?? "")
                    self.engine = engine
                    return engine
                }
                continuation.resume(returning: Result { () throws(PhotoError) in try body(load) })
            }
        }
    }
}
