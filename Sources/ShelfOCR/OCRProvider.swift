import Dispatch
import Foundation
package import Logging
package import ShelfCore
package import ShelfEnrichment
package import ShelfImaging
package import ShelfProviders

/// `[ocr]` as the provider needs it.
package struct OCRSettings: Sendable {
    /// Tesseract traineddata names, tried together ("eng", "spa", "cat"…).
    package var languages: [String]
    /// Where the traineddata are; nil: `Traineddata.folder()`.
    package var dataPath: String?
    /// The long side Tesseract reads the photo at: spine lettering is then a few tens of pixels high.
    package var maxSide: Int

    package init(languages: [String] = ["eng"], dataPath: String? = Traineddata.folder(), maxSide: Int = 2400) {
        self.languages = languages; self.dataPath = dataPath; self.maxSide = maxSide
    }
}

/// What the `ocr` provider saves as its raw response: the spines Tesseract read and the books made of them,
/// so `parse` (also after a crash) needs neither Tesseract nor the sources again.
package struct OCRResponse: Codable, Sendable, Equatable {
    package static let schema = "shelfd.ocr/1"

    package struct Reading: Codable, Sendable, Equatable {
        package var spine: Spine
        /// The record the text matched, when one did.
        package var match: SpineMatchLine.Record?
        package var decision: MatchDecision
        package var book: Detection
    }

    package var schema = OCRResponse.schema
    package var languages: [String]
    package var width: Int
    package var height: Int
    package var spines: [Reading]
    /// Sources that could not be asked (down, refusing): their books are decided by the text alone.
    package var notes: [String]
}

/// The offline provider: Tesseract reads the spines, and each spine's text is matched against the book
/// sources (the local catalogue first). A matched record gives title, author and ISBN; a spine that matches
/// nothing is reported with the text read as its title, unsure, so it goes to review.
package final class OCRProvider: VisionProvider {
    package let name = "ocr"
    package let settings: OCRSettings
    private let sources: [any BookSource]
    private let matcher: SpineMatcher
    private let lane: OCRLane
    private let logger: Logger
    /// Records asked of each source per spine; the matcher ranks them itself.
    static let candidatesPerSource = 10
    /// How much of a book's confidence is the match score; the rest is the OCR's.
    static let matchWeight = 0.65
    /// A spine that matched nothing keeps this share of its OCR confidence: below any review threshold.
    static let unmatchedFactor = 0.4

    package init(settings: OCRSettings, sources: [any BookSource], matcher: SpineMatcher = SpineMatcher(), logger: Logger) {
        self.settings = settings; self.sources = sources; self.matcher = matcher; self.logger = logger
        lane = OCRLane(languages: settings.languages, dataPath: settings.dataPath)
    }

    package var model: String { "tesseract-\(OCRLane.version):\(settings.languages.joined(separator: "+"))" }

    /// Near-lossless at the size Tesseract reads: the JPEG made for it is only decoded again.
    package var preset: ImagePreset {
        ImagePreset(maxSide: settings.maxSide, quality: 95, targetBytes: 0...(settings.maxSide * settings.maxSide), minQuality: 90)
    }

    package func send(_ photo: PhotoUpload) async throws(PhotoError) -> RawResponse {
        let started = ContinuousClock.now
        let (spines, width, height) = try await read(photo.bytes)
        let (readings, notes) = await books(for: spines)
        let response = OCRResponse(languages: settings.languages, width: width, height: height, spines: readings, notes: notes)
        let body: Data
        do { body = try JSONStyle.encoder(pretty: false).encode(response) } catch {
            throw PhotoError(.internal, "could not encode the OCR reading: \(error)", disposition: .retry(after: nil))
        }
        logger.debug("Photo read", metadata: ["ocr.spines": "\(spines.count)", "ocr.matched": "\(readings.filter { $0.match != nil }.count)"])
        return RawResponse(body: Array(body), receivedAt: Date(), latency: ContinuousClock.now - started)
    }

    package func parse(_ raw: RawResponse) throws(PhotoError) -> ModelAnswer {
        let response: OCRResponse
        do { response = try JSONStyle.decoder().decode(OCRResponse.self, from: Data(raw.body)) } catch {
            throw PhotoError(.providerNonsense, "the saved OCR reading is not a \(OCRResponse.schema) document: \(error)",
                             disposition: .retry(after: nil))
        }
        return ModelAnswer(books: response.spines.map(\.book), notes: response.notes)
    }

    package func checkReachable() async -> Result<String, PhotoError> {
        if let problem = languageProblem() { return .failure(problem) }
        return .success("Tesseract \(OCRLane.version) reads \(settings.languages.joined(separator: "+")) from \(settings.dataPath ?? "?")")
    }

    /// The configured languages' traineddata, when some are missing.
    func languageProblem() -> PhotoError? {
        let missing = Traineddata.missing(settings.languages, in: settings.dataPath)
        guard !missing.isEmpty else { return nil }
        return PhotoError(.providerModel, Traineddata.advice(missing: missing, folder: settings.dataPath) + ", then run 'shelfd doctor'.",
                          disposition: .providerBroken)
    }

    /// The spines on the photo, read on the OCR lane (CPU-bound C work, never on the cooperative pool).
    func read(_ bytes: [UInt8]) async throws(PhotoError) -> (spines: [Spine], width: Int, height: Int) {
        if let problem = languageProblem() { throw problem }
        let maxSide = settings.maxSide
        let result = await lane.run { engine throws(PhotoError) in
            let image = try Preprocessor.grey(bytes, maxSide: maxSide)
            do throws(OCRError) {
                let spines = try SpineFinder.spines(in: image) { picture throws(OCRError) in try engine().words(in: picture) }
                return (spines, image.width, image.height)
            } catch {
                throw error.photoError
            }
        }
        return try result.get()
    }

    /// Each spine's text matched against the sources in order (a source is no longer asked about a spine once
    /// one has an accepted match), then records assigned one-to-one across the photo.
    func books(for spines: [Spine]) async -> (readings: [OCRResponse.Reading], notes: [String]) {
        var search = CandidateSearch(sources: sources, matcher: matcher)
        search.perSource = Self.candidatesPerSource
        let found = await search.run(spines.map { SpineQuery(text: $0.text) })
        var notes = found.notes
        var readings = spines.indices.map { index in
            Self.reading(spines[index], result: found.results[index], matcher: matcher)
        }
        let fragments = Set(readings.indices.filter { Self.isFragment(readings[$0], among: readings) })
        if !fragments.isEmpty {
            notes.append("spine_fragments_dropped: \(fragments.count)")
            readings = readings.indices.filter { !fragments.contains($0) }.map { readings[$0] }
        }
        return (readings, notes)
    }

    /// A piece of a spine read apart from its title (the author's name alone, a publisher's line) is offered
    /// that author's other books by the matcher. Beside a spine that shows its title, by the same author, and
    /// with none of the offered title's words in its own text, it is part of that spine, not another book.
    static func isFragment(_ reading: OCRResponse.Reading, among readings: [OCRResponse.Reading]) -> Bool {
        guard reading.decision == .review, let record = reading.match, !showsTitle(reading) else { return false }
        let surname = TextNormalization.surname(record.author)
        guard !surname.isEmpty else { return false }
        return readings.contains { other in
            guard other.decision != .none, let book = other.match, showsTitle(other),
                  TextNormalization.surname(book.author) == surname else { return false }
            let a = reading.spine.box, b = other.spine.box
            let overlap = min(a.x2, b.x2) - max(a.x1, b.x1)
            return overlap > 0 || abs((a.x1 + a.x2) - (b.x1 + b.x2)) / 2 < 1.5 * max(a.x2 - a.x1, b.x2 - b.x1)
        }
    }

    /// Whether the spine's text holds a word of its matched record's title (three letters or more).
    static func showsTitle(_ reading: OCRResponse.Reading) -> Bool {
        guard let record = reading.match else { return false }
        let text = Set(TextNormalization.fold(reading.spine.text).split(separator: " ").map(String.init))
        return TextNormalization.title(record.title).split(separator: " ").map(String.init)
            .contains { $0.count >= 3 && text.contains($0) }
    }

    /// A spine and what it matched as a book: the record's title and author when the match is at least
    /// plausible (accepted or for review), the text read otherwise.
    static func reading(_ spine: Spine, result: MatchResult, matcher: SpineMatcher) -> OCRResponse.Reading {
        guard let best = result.best, result.decision != .none else {
            return OCRResponse.Reading(spine: spine, match: nil, decision: .none,
                                       book: Detection(title: spine.text, confidence: spine.confidence * unmatchedFactor,
                                                       box: spine.box))
        }
        let record = best.record
        var confidence = matchWeight * best.score + (1 - matchWeight) * spine.confidence
        // A match the matcher would not accept stays below the accept threshold, whatever the OCR said.
        if result.decision == .review { confidence = min(confidence, matcher.acceptThreshold - 0.05) }
        let line = SpineMatchLine(text: spine.text, result: result)
        return OCRResponse.Reading(spine: spine, match: line.match, decision: result.decision,
                                   book: Detection(title: record.title, author: record.author,
                                                   isbn: record.isbn13 ?? record.isbn10,
                                                   confidence: (confidence * 1000).rounded() / 1000, box: spine.box))
    }
}

/// The Tesseract engine on a serial queue of its own, made on first use and kept: loading a language takes
/// a good fraction of a second, reading a photo several seconds of one core.
final class OCRLane: @unchecked Sendable {      // unchecked: `engine` is only touched on `queue`
    private let queue = DispatchQueue(label: "shelfd.ocr")
    private let languages: [String], dataPath: String?
    private var engine: TesseractEngine?

    init(languages: [String], dataPath: String?) { self.languages = languages; self.dataPath = dataPath }

    static var version: String { TesseractEngine.version }

    /// Runs `body` on the lane; `engine()` gives the loaded engine (loading it the first time).
    func run<T: Sendable>(_ body: @escaping @Sendable (_ engine: () throws(OCRError) -> TesseractEngine) throws(PhotoError) -> T) async
        -> Result<T, PhotoError> {
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
