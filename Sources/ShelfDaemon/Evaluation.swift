import Foundation
import Logging
import Synchronization
import ShelfConfig
import ShelfCore
import ShelfEnrichment
import ShelfHTTP
import ShelfImaging
import ShelfProviders
import ShelfStore

/// A photo with a truth file, read once for every provider.
package struct EvalPhoto: Sendable {
    package var name: String
    package var url: URL
    package var truth: TruthDocument
    package var bytes: [UInt8]
    package var sha256: String

    /// Every `*.truth.json` in `folder` (not below it) with the photo it names, by file name.
    /// - Throws: `StartupError` for a truth file that cannot be read or names a photo that is not there.
    package static func all(in folder: URL) throws -> [EvalPhoto] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder.path) } catch {
            throw StartupError("Cannot read the truth folder \(folder.path): \((error as NSError).localizedDescription).")
        }
        return try names.filter { $0.hasSuffix(".truth.json") && !$0.hasPrefix(".") }.sorted().map { name in
            let file = folder.appendingPathComponent(name)
            let truth: TruthDocument
            do { truth = try JSONStyle.decoder().decode(TruthDocument.self, from: Data(contentsOf: file)) } catch {
                throw StartupError("\(file.path) is not a truth file (shelfd.truth/1: {photo, books: [{title, author, isbn13?, box?}]}): \(error)")
            }
            guard truth.schema == TruthDocument(photo: "", books: []).schema else {
                throw StartupError("\(file.path) has schema \"\(truth.schema)\"; this shelfd reads shelfd.truth/1.")
            }
            let url = folder.appendingPathComponent(truth.photo)
            switch Pipeline.readFile(url.path) {
            case .success(let bytes):
                return EvalPhoto(name: truth.photo, url: url, truth: truth, bytes: bytes, sha256: SHA256.hex(of: bytes))
            case .failure(let error):
                throw StartupError("\(name) names the photo \(truth.photo), which cannot be read: \(error.message).")
            }
        }
    }
}

/// Runs photos with known books through the pipeline's steps (preprocessing, the provider, the book checker,
/// enrichment) and judges what comes out, without the queue: no job, result, review entry or library
/// change is made, so an evaluation never mixes with the user's catalogue of books.
package struct Evaluator: Sendable {
    let config: Configuration
    let secrets: Secrets
    let enricher: Enricher
    let licenses: any CloudflareLicenseMemory
    let logger: Logger
    /// Answers already paid for in this run, by photo, provider and model: asking `gemini` and then `hybrid`
    /// (whose accurate provider is gemini) sends each photo to Gemini once.
    private let answers = AnswerMemo()
    /// Where the providers' request budgets are: eval's requests count against the same per-minute and daily
    /// limits as the pipeline's, since the provider counts every request made with the key.
    let limits: Store
    /// Larger photos are refused, as the pipeline refuses them.
    package var maxPixels = 64_000_000

    /// `store` holds the catalogue and lookup cache the enrichment sources read and fill; `limits` is the
    /// database every shelfd process takes its request turns from (default: `store`).
    package init(config: Configuration, secrets: Secrets, store: Store, limits: Store? = nil, logger: Logger) throws {
        self.config = config; self.secrets = secrets; self.logger = logger
        self.limits = limits ?? store
        licenses = StoredCloudflareLicenses(store: store)
        enricher = Enricher(sources: try Runtime.makeSources(config: config, secrets: secrets, store: store,
                                                             refresh: false, logger: logger),
                            reviewThreshold: config.pipeline.reviewThreshold)
    }

    /// One provider (or hybrid pair) over every photo, one photo at a time so each photo's seconds are its own.
    /// - Throws: `StartupError` when the provider cannot be set up or its key is missing.
    package func evaluate(_ photos: [EvalPhoto], with kind: Configuration.Provider) async throws -> EvalDocument.Provider {
        let lineup = try Runtime.makeLineup(config: config, secrets: secrets, logger: logger, choice: kind, licenses: licenses,
                                            limits: limits)
        for channel in lineup.channels {
            if let problem = Runtime.missingKeyProblem(for: channel.kind, secrets: secrets) { throw StartupError(problem) }
        }
        var judged: [EvalDocument.Photo] = []
        for photo in photos {
            let started = ContinuousClock.now
            let outcome = await books(of: photo, lineup: lineup)
            let seconds = outcome.askedSeconds + (ContinuousClock.now - started - outcome.askedNow).seconds
            var logger = self.logger
            logger[metadataKey: "photo.path"] = "\(photo.name)"
            logger[metadataKey: "provider"] = "\(lineup.name)"
            switch outcome.books {
            case .success(let books):
                judged.append(.judged(photo.name, books: books, truth: photo.truth.books, seconds: seconds))
                logger.info("Photo evaluated", metadata: ["books": "\(books.count)", "seconds": "\(seconds)"])
            case .failure(let error):
                judged.append(.judged(photo.name, books: [], truth: photo.truth.books, seconds: seconds,
                                      error: error.description))
                logger.warning("The provider gave no answer", metadata: ["error": "\(error)"])
            }
        }
        // A choice made at run time (`auto`) names what it chose.
        let model = lineup.name == kind.rawValue ? lineup.model : "\(lineup.name):\(lineup.model)"
        return EvalDocument.Provider(provider: kind.rawValue, model: model,
                                     score: judged.map(\.score).reduce(EvalScore(), +), photos: judged)
    }

    /// The checked, enriched books of a photo, as the pipeline makes them; `askedSeconds` is what the provider
    /// answers cost when they were first asked, `askedNow` the part of this call spent asking.
    private func books(of photo: EvalPhoto, lineup: Lineup) async
        -> (books: Result<[Book], PhotoError>, askedSeconds: Double, askedNow: Duration) {
        let checker = BookChecker(reviewThreshold: config.pipeline.reviewThreshold)
        var askedSeconds = 0.0, askedNow = Duration.zero
        func ask(_ channel: ProviderChannel) async -> Result<ModelAnswer, PhotoError> {
            let started = ContinuousClock.now
            let asked = await answer(photo, from: channel)
            askedSeconds += asked.seconds
            askedNow += ContinuousClock.now - started
            return asked.answer
        }
        let books: [Book]
        switch lineup {
        case .single(let channel):
            switch await ask(channel) {
            case .success(let answer): books = checker.check(answer.books, source: channel.name)
            case .failure(let error): return (.failure(error), askedSeconds, askedNow)
            }
        case .hybrid(let fast, let accurate, let escalateBelow):
            var fastBooks: [Book] = []
            if case .success(let answer) = await ask(fast) {
                fastBooks = checker.check(answer.books, source: fast.name)
                if !Pipeline.needsAccurateProvider(answer, escalateBelow: escalateBelow) {
                    return (.success(await enricher.enrich(fastBooks).books), askedSeconds, askedNow)
                }
            }
            switch await ask(accurate) {
            case .success(let answer):
                books = Pipeline.merge(accurate: checker.check(answer.books, source: accurate.name), fast: fastBooks)
            case .failure(let error): return (.failure(error), askedSeconds, askedNow)
            }
        }
        return (.success(await enricher.enrich(books).books), askedSeconds, askedNow)
    }

    /// The provider's answer for a photo: from this run's memory, or prepared, sent and read now (with the
    /// pipeline's quick retries for a short outage).
    private func answer(_ photo: EvalPhoto, from channel: ProviderChannel) async -> AnswerMemo.Asked {
        let provider = channel.provider
        let key = "\(photo.sha256)|\(provider.name)|\(provider.model)"
        if let known = answers[key] { return known }
        let started = ContinuousClock.now
        let answer: Result<ModelAnswer, PhotoError>
        switch await prepareOffPool(photo.bytes, preset: provider.preset, maxPixels: maxPixels) {
        case .failure(let error): answer = .failure(error)
        case .success(let prepared):
            switch await channel.waitForTurn(logger: logger, shouldStop: { Task.isCancelled }) {
            case .granted:
                let sent = await channel.send(PhotoUpload(bytes: prepared.jpeg, mimeType: "image/jpeg"), logger: logger)
                answer = sent.flatMap { raw in Result { () throws(PhotoError) in try provider.parse(raw) } }
            case .stopped:
                answer = .failure(PhotoError(.internal, "stopped before the request was sent", disposition: .dead))
            case .dayUsedUp(let quota):
                answer = .failure(quota)
            }
        }
        let asked = AnswerMemo.Asked(answer: answer, seconds: (ContinuousClock.now - started).seconds)
        answers[key] = asked
        return asked
    }
}

/// The answers of one evaluation run.
private final class AnswerMemo: Sendable {
    struct Asked: Sendable {
        var answer: Result<ModelAnswer, PhotoError>
        var seconds: Double
    }
    private let state = Mutex<[String: Asked]>([:])

    subscript(key: String) -> Asked? {
        get { state.withLock { $0[key] } }
        set { state.withLock { $0[key] = newValue } }
    }
}

