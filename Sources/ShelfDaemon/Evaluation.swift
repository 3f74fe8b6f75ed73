import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDigest
import ShelfEnrichment
import ShelfHTTP
import ShelfImaging
import ShelfOutputs
import ShelfPipeline
import ShelfProviders
import ShelfStore
import Synchronization

/// A photo with a truth file, read once for every provider.
package struct EvalPhoto: Sendable {
    package var name: String
    package var url: URL
    package var truth: TruthDocument
    package var bytes: [UInt8]
    package var sha256: String

    static let truthSuffix = ".truth.json"

    /// Every `*.truth.json` in `folder` (not below it) with its photo, by file name. A truth file is either a
    /// shelfd.truth/1 document, which names its photo, or a person's list of the photo's books (a JSON array of
    /// `{title, authors}`), whose photo is the image named like it without `.truth.json` (`IMG_9797.jpg` for
    /// `IMG_9797.truth.json`, whatever its image extension).
    /// - Throws: `StartupError` for a truth file that cannot be read, or whose photo is not there.
    package static func all(in folder: URL) throws -> [EvalPhoto] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder.path) } catch {
            throw StartupError(
                "Cannot read the truth folder \(folder.path): \((error as NSError).localizedDescription).")
        }
        return try names.filter { $0.hasSuffix(truthSuffix) && !$0.hasPrefix(".") }.sorted().map { name in
            let file = folder.appendingPathComponent(name)
            let data: Data
            do { data = try Data(contentsOf: file) } catch {
                throw StartupError(
                    "Cannot read the truth file \(file.path): \((error as NSError).localizedDescription).")
            }
            let truth =
                TruthDocument.isList(data)
                ? try listed(data, file: file, names: names)
                : try document(data, file: file)
            let url = folder.appendingPathComponent(truth.photo)
            switch PhotoFile.read(url.path) {
            case .success(let bytes):
                return EvalPhoto(name: truth.photo, url: url, truth: truth, bytes: bytes, sha256: SHA256.hex(of: bytes))
            case .failure(let error):
                throw StartupError("\(name) names the photo \(truth.photo), which cannot be read: \(error.message).")
            }
        }
    }

    private static func document(_ data: Data, file: URL) throws -> TruthDocument {
        let truth: TruthDocument
        do { truth = try JSONStyle.decoder().decode(TruthDocument.self, from: data) } catch {
            throw StartupError(
                "\(file.path) is not a truth file (shelfd.truth/1: {photo, books: [{title, author, isbn13?, box?}]}, or a list [{title, authors}]): \(error)"
            )
        }
        guard truth.schema == TruthDocument(photo: "", books: []).schema else {
            throw StartupError("\(file.path) has schema \"\(truth.schema)\"; this shelfd reads shelfd.truth/1.")
        }
        return truth
    }

    /// A list of books, with its photo: the one image (judged by its content, `ImageFormat`) among the files of
    /// `names` called like the truth file without `.truth.json`, with or without an extension.
    private static func listed(_ data: Data, file: URL, names: [String]) throws -> TruthDocument {
        let books: [TruthDocument.ListedBook]
        do { books = try JSONStyle.decoder().decode([TruthDocument.ListedBook].self, from: data) } catch {
            throw StartupError("\(file.path) is not a list of books ([{\"title\": …, \"authors\": [...]}]): \(error)")
        }
        let stem = String(file.lastPathComponent.dropLast(truthSuffix.count))
        let folder = file.deletingLastPathComponent()
        let photos = names.filter { name in
            guard name == stem || (name.hasPrefix(stem + ".") && !name.dropFirst(stem.count + 1).contains(".")) else {
                return false
            }
            guard let head = try? FileHandle(forReadingFrom: folder.appendingPathComponent(name)).read(upToCount: 64)
            else { return false }
            return ImageFormat.sniff(head) != .unknown
        }.sorted()
        guard let photo = photos.first else {
            throw StartupError(
                "\(file.lastPathComponent) lists books, but there is no photo \(stem).jpg (or .jpeg, .png, .heic …) beside it in \(folder.path). Put the photo there, named like its truth file without .truth.json."
            )
        }
        guard photos.count == 1 else {
            throw StartupError(
                "\(file.lastPathComponent) could be the list of \(photos.joined(separator: " or ")). Keep one photo named \(stem), or rename the others."
            )
        }
        return TruthDocument(photo: photo, listed: books)
    }
}

/// Runs photos with known books through the pipeline's steps (preprocessing, the provider, the book checker,
/// enrichment) and judges what comes out, without the queue: no job, result, review entry or library
/// change is made, so an evaluation never mixes with the user's catalogue of books.
package struct Evaluator: Sendable {
    let config: Configuration
    let secrets: Secrets
    let enricher: Enricher
    let memory: any ProviderMemory
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
        memory = StoredProviderMemory(store: store)
        enricher = Enricher(
            sources: try Runtime.makeSources(
                config: config, secrets: secrets, cache: store.lookupCache,
                catalogue: store.catalogue, refresh: false, logger: logger,
                time: .system),
            reviewThreshold: config.pipeline.reviewThreshold)
    }

    /// The evaluator `shelfd eval` runs: its enrichment reads `catalogue` imported into a scratch database under
    /// `scratch`, else the user's catalogue (only read, its lookup cache filled as the pipeline fills it), else an
    /// empty scratch one; `listedBooks` (the truth files' books, `--add-listed-books`) are added to the scratch
    /// catalogue, on top of `catalogue`'s books or alone, never to the user's. Its requests take their turns from
    /// the user's database, when there is one, as a running daemon's do.
    package static func forCommand(
        config: Configuration, secrets: Secrets, catalogue: String?,
        listedBooks: [TruthDocument.Book] = [], scratch: URL, logger: Logger
    ) throws -> Evaluator {
        let users =
            FileManager.default.fileExists(atPath: config.paths.database)
            ? try StoreAccess.catalogue(config: config, shared: nil) : nil
        func scratchStore() throws -> Store {
            do {
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                return try Store.open(path: scratch.appendingPathComponent("eval.db").path)
            } catch {
                throw StartupError(
                    "Cannot make a temporary database in \(scratch.path): \(error). Set TMPDIR to a writable folder.")
            }
        }
        let store: Store
        if catalogue != nil || !listedBooks.isEmpty {
            store = try scratchStore()
            if let catalogue {
                do { _ = try CatalogueImporter(catalogue: store.catalogue).importFile(catalogue) } catch {
                    throw StartupError("Cannot import the catalogue \(catalogue): \(error)")
                }
            }
            if !listedBooks.isEmpty {
                do { try addListed(listedBooks, to: store.catalogue) } catch {
                    throw StartupError("Cannot add the truth files' books to the temporary catalogue: \(error)")
                }
            }
        } else {
            store = try users ?? scratchStore()
        }
        return try Evaluator(config: config, secrets: secrets, store: store, limits: users, logger: logger)
    }

    /// The truth files' books as one import of the catalogue, as a CSV of title, author and ISBN would add them.
    static func addListed(_ books: [TruthDocument.Book], to catalogue: Catalogue) throws {
        let rows = books.map { CatalogueRow(title: $0.title, author: $0.author, isbn: $0.isbn13.flatMap(ISBN.init)) }
        try catalogue.importRows(rows, path: "truth files", format: "truth", now: TimeSource.system.now)
    }

    /// One provider (or hybrid pair) over every photo, one photo at a time so each photo's seconds are its own.
    /// - Throws: `StartupError` when the provider cannot be set up or its key is missing.
    package func evaluate(_ photos: [EvalPhoto], with kind: Configuration.Provider) async throws
        -> EvalDocument.Provider
    {
        let lineup = try Runtime.makeLineup(
            config: config, secrets: secrets, logger: logger, choice: kind, memory: memory,
            limits: limits, time: .system)
        for channel in lineup.channels {
            if let problem = Runtime.missingKeyProblem(for: channel.kind, secrets: secrets) {
                throw StartupError(problem)
            }
        }
        var reader = PhotoReader(
            lineup: lineup, enricher: enricher, reviewThreshold: config.pipeline.reviewThreshold,
            maxPixels: maxPixels, health: UntrackedProviderHealth(), time: .system)
        reader.barcodes = config.pipeline.barcodes
        var judged: [EvalDocument.Photo] = []
        for photo in photos {
            var logger = self.logger
            logger[metadataKey: "photo.path"] = "\(photo.name)"
            logger[metadataKey: "provider"] = "\(lineup.name)"
            let started = ContinuousClock.now
            let books = Self.books(
                of: await reader.read(
                    photo.bytes, journal: answers.of(photo), meter: EvalAttempt(),
                    logger: logger))
            // An answer replayed from an earlier provider of this run costs the seconds it took then.
            let replayed = books.runs.filter { $0.response?.replayed == true }.compactMap(\.latencyMs).reduce(0, +)
            let seconds = (ContinuousClock.now - started).seconds + Double(replayed) / 1000
            switch books.result {
            case .success(let (books, unread)):
                judged.append(
                    .judged(photo.name, books: books, truth: photo.truth.books, seconds: seconds, unread: unread))
                logger.info("Photo evaluated", metadata: ["books": "\(books.count)", "seconds": "\(seconds)"])
            case .failure(let error):
                judged.append(
                    .judged(
                        photo.name, books: [], truth: photo.truth.books, seconds: seconds,
                        error: error.description))
                logger.warning("The provider gave no answer", metadata: ["error": "\(error)"])
            }
        }
        // A choice made at run time (`auto`) names what it chose.
        let model = lineup.name == kind.rawValue ? lineup.model : "\(lineup.name):\(lineup.model)"
        return EvalDocument.Provider(provider: kind.rawValue, model: model, photos: judged)
    }

    /// The books eval judges: the reading's, or the error of the provider that gave none. A hybrid reading
    /// whose accurate provider failed counts as that failure (eval measures the pair, not the fallback).
    private static func books(of reading: PhotoReading) -> (
        result: Result<([Book], [ResultDocument.UnreadSpine]), PhotoError>, runs: [ResultDocument.Run]
    ) {
        switch reading {
        case .read(let read):
            if let error = read.notAsked?.error { return (.failure(error), read.runs) }
            return (.success((read.books, read.unread)), read.runs)
        case .unread(let step, let channel, let runs):
            let error: PhotoError =
                switch step {
                case .failed(let error, _): error
                case .unavailable(let health):
                    PhotoError(
                        .providerUnavailable, "\(channel.name) is \(health.summary)",
                        disposition: .dead)
                case .answered, .stopped:
                    PhotoError(.internal, "stopped before the request was sent", disposition: .dead)
                }
            return (.failure(error), runs)
        }
    }
}

/// Eval's photos are no job: nothing to charge.
private struct EvalAttempt: AttemptMeter {
    func charge() throws -> Int { 1 }
}

/// The answers of one evaluation run, by photo, provider and model, kept in memory.
private final class AnswerMemo: Sendable {
    private let state = Mutex<[String: SavedAnswer]>([:])
    private let failures = Mutex<[String: PhotoError]>([:])

    /// One photo's answers.
    func of(_ photo: EvalPhoto) -> Journal { Journal(memo: self, sha256: photo.sha256) }

    struct Journal: AnswerJournal {
        let memo: AnswerMemo
        let sha256: String

        private func key(_ provider: any VisionProvider) -> String { "\(sha256)|\(provider.name)|\(provider.model)" }

        func saved(from provider: any VisionProvider) -> SavedAnswer? { memo.state.withLock { $0[key(provider)] } }

        func save(_ raw: RawResponse, from provider: any VisionProvider, latencyMs: Int) -> SavedAnswer {
            let saved = SavedAnswer(id: nil, raw: raw, file: "", latencyMs: latencyMs)
            memo.state.withLock { $0[key(provider)] = saved }
            return saved
        }

        /// Kept: an answer that does not parse fails the same way for the next provider of the run that asks.
        func discard(_ saved: SavedAnswer) {}

        func failure(from provider: any VisionProvider) -> PhotoError? { memo.failures.withLock { $0[key(provider)] } }

        func failed(_ error: PhotoError, from provider: any VisionProvider) {
            memo.failures.withLock { $0[key(provider)] = error }
        }
    }
}
