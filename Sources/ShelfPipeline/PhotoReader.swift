import Dispatch
import Foundation
import Logging
import ShelfCore
import ShelfEnrichment
import ShelfImaging
import ShelfProviders
import ShelfStore
import Synchronization

/// One provider's go at a photo.
package enum Step: Sendable {
    case answered(ModelAnswer, ResultDocument.Run)
    case failed(PhotoError, ResultDocument.Run)
    /// The provider is paused or backing off: not asked.
    case unavailable(ProviderHealth)
    /// Shutting down before the request was sent.
    case stopped
}

/// Hybrid: the accurate provider was not asked about a photo, so its fast reading is kept for review.
package struct AccurateNotAsked: Sendable {
    /// Every book of such a reading waits for a person with this reason.
    package static let reviewReason = "accurate_not_asked"
    package var provider: String
    package var reason: String
    /// Asked again when the provider answers (not after a recheck that it already answered).
    package var awaiting: Bool
    /// How the accurate provider failed; nil when it was not asked at all (paused, backing off, down).
    package var error: PhotoError? = nil

    package var note: String {
        "\(provider) (the accurate provider) was not asked: \(reason); this is the fast reading, every book waits for review"
            + (awaiting ? ", and the photo is read again when \(provider) answers" : "")
    }
}

/// A provider's answer kept on disk (the queue) or in memory (eval), replayed instead of asking again.
package struct SavedAnswer: Sendable {
    /// The queue's row for the answer; nil for one kept in memory.
    package var id: Int64?
    package var raw: RawResponse
    package var file: String
    package var latencyMs: Int?

    package init(id: Int64?, raw: RawResponse, file: String, latencyMs: Int?) {
        self.id = id; self.raw = raw; self.file = file; self.latencyMs = latencyMs
    }
}

/// Where the answers of one photo are kept: a photo's answer is never paid for twice.
package protocol AnswerJournal: Sendable {
    /// The saved answer of this photo from this provider and model, if there is a usable one.
    func saved(from provider: any VisionProvider) -> SavedAnswer?
    /// Keeps an answer before it is acted on, so a crash from here on replays it (a failure to keep it is
    /// logged: the answer is used all the same).
    func save(_ raw: RawResponse, from provider: any VisionProvider, latencyMs: Int) -> SavedAnswer
    /// A saved answer that does not parse is never replayed again.
    func discard(_ saved: SavedAnswer)
    /// A request of this photo that failed, remembered so it is not sent again (eval's run); nil: ask again.
    func failure(from provider: any VisionProvider) -> PhotoError?
    func failed(_ error: PhotoError, from provider: any VisionProvider)
    /// `save` also logs the request that brought the answer (the queue's, in the same transaction): the health
    /// recorder then hears only the requests that failed.
    var logsAnsweredRequests: Bool { get }
}

extension AnswerJournal {
    package var logsAnsweredRequests: Bool { false }
    /// The queue asks again: a failure is the queue's to retry, back off or give up on.
    package func failure(from provider: any VisionProvider) -> PhotoError? { nil }
    package func failed(_ error: PhotoError, from provider: any VisionProvider) {}
}

/// Charges the photo for a request, once, just before the first request that costs anything.
package protocol AttemptMeter: Sendable {
    /// The attempt the photo is on after charging.
    func charge() throws -> Int
    /// The queue's job this meter has still to charge (nil once charged, or outside the queue): its charge can
    /// ride on the request's turn (`RequestBudgetStore.takeRequestTurn(charging:)`).
    var unchargedJob: Int64? { get }
    /// The charge was made with the turn: the attempt the photo is on now.
    func charged(attempts: Int)
}

extension AttemptMeter {
    package var unchargedJob: Int64? { nil }
    package func charged(attempts: Int) {}
}

/// Hears how each provider is doing and says whether it may be asked. The queue keeps it in the database
/// (`StoredProviderHealth`); eval asks regardless and records nothing (`UntrackedProviderHealth`).
package protocol ProviderHealthRecorder: Sendable {
    /// Whether a request may go to the provider now: open, the one probe of a provider that is down, or wait.
    func turn(_ provider: String) -> ProviderTurn
    /// The provider's health as stored, in force or not (read while a photo waits for its turn); nil: never troubled.
    func current(_ provider: String) -> ProviderHealth?
    /// One request's latency and outcome (`ok` or the error's code), for `status`.
    func requested(_ provider: String, latency: Duration, outcome: String)
    /// The provider answered.
    func answered(_ provider: String)
    /// The provider failed; returns the health now in force because of it (nil when the failure is the photo's).
    @discardableResult
    func failed(_ provider: String, error: PhotoError, probe: Bool) -> ProviderHealth?
}

/// What the reader made of a photo.
package enum PhotoReading: Sendable {
    case read(ReadPhoto)
    /// No provider gave an answer to use: how the last one asked ended, and which one it was.
    case unread(Step, ProviderChannel, runs: [ResultDocument.Run])
}

/// A photo's checked and enriched books, with the answer they were decided from and every run made.
package struct ReadPhoto: Sendable {
    package var answer: ModelAnswer
    /// The run whose answer decided the books.
    package var decided: ResultDocument.Run
    package var runs: [ResultDocument.Run]
    package var books: [Book]
    /// What was read besides the books and names none (`Enricher.Outcome.unread`).
    package var unread: [ResultDocument.UnreadSpine] = []
    /// The model's notes and the enrichment's (why the accurate provider was not asked is `notAsked.note`).
    package var notes: [String]
    package var notAsked: AccurateNotAsked?
    /// What was measured on the photo while it was prepared (nil when every answer was replayed).
    package var signals: QualitySignals?
}

/// Preprocessing is CPU-bound C work: it runs on one queue of its own, never on the cooperative pool,
/// and one photo at a time (a 48-megapixel photo needs tens of megabytes while it is prepared).
private let imagingQueue = DispatchQueue(label: "shelfd.imaging")

/// The ISBN barcodes on a photo, read on the imaging queue; none when libzbar cannot be opened, which the log says
/// once (`shelfd doctor` says it too).
private let barcodeReaderMissing = Mutex(false)

extension PhotoReader {
    static func barcodesOffPool(_ bytes: [UInt8], maxPixels: Int, logger: Logger) async -> [ISBNBarcode] {
        let result = await withCheckedContinuation { continuation in
            imagingQueue.async {
                continuation.resume(
                    returning: Result { () throws(BarcodeReaderUnavailable) in
                        try BarcodeReader.isbns(inPhoto: bytes, maxPixels: maxPixels)
                    })
            }
        }
        switch result {
        case .success(let found):
            if !found.isEmpty { logger.debug("Barcodes read", metadata: ["isbns": "\(found.map(\.isbn.isbn13))"]) }
            return found
        case .failure(let problem):
            let first = barcodeReaderMissing.withLock { said in
                defer { said = true }
                return !said
            }
            if first {
                logger.warning("Photos are read without their barcodes", metadata: ["problem": "\(problem)"])
            }
            return []
        }
    }
}

package func prepareOffPool(_ bytes: [UInt8], preset: ImagePreset, maxPixels: Int) async -> Result<
    PreparedPhoto, PhotoError
> {
    await withCheckedContinuation { continuation in
        imagingQueue.async {
            continuation.resume(
                returning: Result { () throws(PhotoError) in
                    try Preprocessor.prepare(bytes, preset: preset, maxPixels: maxPixels)
                })
        }
    }
}

/// Reads a photo with a lineup: prepares it for each provider, waits for the provider's turn, sends it (quick
/// retries for a short outage, a smaller photo when it is too large), parses and checks the answer, asks the
/// accurate provider when hybrid's fast one is unsure, and enriches the books. The queue, `scan`, `rescan` and
/// `eval` all read photos here; what only the queue does is given to it as a journal, a meter and a health
/// recorder.
package struct PhotoReader: Sendable {
    package let lineup: Lineup
    package let enricher: Enricher
    package let reviewThreshold: Double
    /// Larger photos are refused.
    package let maxPixels: Int
    package let health: any ProviderHealthRecorder
    /// The clock a turn is waited for and a quick retry waits on; the date a provider's pause is judged at.
    package let time: TimeSource
    /// Bounds the requests this process has in flight; nil: no bound (eval asks one photo at a time).
    package var slots: RequestSlots? = nil
    /// Shutting down: no new request goes out.
    package var shouldStop: @Sendable () -> Bool = { Task.isCancelled }
    /// Hears the steps a photo reaches while it is read: a request sent (`asking`), the books being matched.
    package var onStage: @Sendable (JobStage) -> Void = { _ in }
    /// `[pipeline] barcodes`: whether the photo's ISBN barcodes are read first, and whether they spare the provider.
    package var barcodes = BarcodeMode.off

    package init(
        lineup: Lineup, enricher: Enricher, reviewThreshold: Double, maxPixels: Int, health: any ProviderHealthRecorder,
        time: TimeSource, slots: RequestSlots? = nil, shouldStop: @escaping @Sendable () -> Bool = { Task.isCancelled }
    ) {
        self.lineup = lineup; self.enricher = enricher; self.reviewThreshold = reviewThreshold
        self.maxPixels = maxPixels
        self.health = health; self.time = time; self.slots = slots; self.shouldStop = shouldStop
    }

    /// The books of a photo. `logger` carries the photo's metadata.
    package func read(_ bytes: [UInt8], journal: any AnswerJournal, meter: any AttemptMeter, logger: Logger) async
        -> PhotoReading
    {
        var prepared: [ImagePreset: PreparedPhoto] = [:]
        func signals() -> QualitySignals? { prepared.values.first?.signals } // they describe the photo, not the preset

        let symbols = barcodes == .off ? [] : await Self.barcodesOffPool(bytes, maxPixels: maxPixels, logger: logger)
        let decided: Decided
        if barcodes == .only, !symbols.isEmpty {
            logger.info(
                "The photo's barcodes are its books; the provider is not asked",
                metadata: ["barcodes": "\(symbols.count)"])
            let run = ResultDocument.Run(
                provider: BarcodeBooks.source, model: BarcodeBooks.reader, books: symbols.count,
                latencyMs: nil, response: nil, sent: nil, error: nil)
            decided = Decided(answer: ModelAnswer(books: []), run: run, runs: [run], books: [])
        } else {
            switch await askLineup(bytes, journal: journal, meter: meter, prepared: &prepared, logger: logger) {
            case .decided(let reading): decided = reading
            case .unread(let step, let channel, let runs): return .unread(step, channel, runs: runs)
            }
        }

        onStage(.matching)
        let enrichment = await enricher.enrich(BarcodeBooks.merged(symbols, into: BarcodeBooks.printed(decided.books)))
        var books = enrichment.books
        let notes = decided.answer.notes + enrichment.notes
        if decided.notAsked != nil {
            // A barcode's book is exact whichever provider read the photo.
            for index in books.indices where books[index].form != .barcode {
                books[index].status = .needsReview
                books[index].reviewReasons = (books[index].reviewReasons ?? []) + [AccurateNotAsked.reviewReason]
            }
        }
        return .read(
            ReadPhoto(
                answer: decided.answer, decided: decided.run, runs: decided.runs, books: books,
                unread: enrichment.unread, notes: notes, notAsked: decided.notAsked, signals: signals()))
    }

    /// The answer that decides a photo's books, the run it came from, every run made, the books checked, and why
    /// hybrid's accurate provider was not asked, if it was not.
    struct Decided {
        var answer: ModelAnswer
        var run: ResultDocument.Run
        var runs: [ResultDocument.Run]
        var books: [Book]
        var notAsked: AccurateNotAsked? = nil
    }

    /// How the lineup's providers read a photo: an answer that decides, or how the last one asked ended.
    enum LineupReading {
        case decided(Decided)
        case unread(Step, ProviderChannel, runs: [ResultDocument.Run])
    }

    /// Asks the lineup's provider, or hybrid's fast one and, when it is unsure, the accurate one.
    private func askLineup(
        _ bytes: [UInt8], journal: any AnswerJournal, meter: any AttemptMeter,
        prepared: inout [ImagePreset: PreparedPhoto], logger: Logger
    ) async -> LineupReading {
        switch lineup {
        case .single(let channel):
            let step = await ask(
                channel, bytes: bytes, journal: journal, meter: meter, prepared: &prepared, logger: logger)
            guard case .answered(let answer, let run) = step else {
                return .unread(step, channel, runs: Self.runs(of: step))
            }
            return .decided(Decided(answer: answer, run: run, runs: [run], books: check(answer, source: channel.name)))
        case .hybrid(let fast, let accurate, let escalateBelow):
            let first = await ask(
                fast, bytes: bytes, journal: journal, meter: meter, prepared: &prepared, logger: logger)
            var runs: [ResultDocument.Run] = []
            var fastBooks: [Book] = []
            var fastAnswer: (answer: ModelAnswer, run: ResultDocument.Run)?
            switch first {
            case .answered(let answer, let run):
                runs.append(run)
                fastBooks = check(answer, source: fast.name)
                fastAnswer = (answer, run)
            case .failed(_, let run):
                runs.append(run) // a failed fast answer escalates (the fast provider may be paused)
            case .unavailable:
                break
            case .stopped:
                return .unread(first, fast, runs: runs)
            }
            if let fastAnswer, !Self.needsAccurateProvider(fastAnswer.answer, escalateBelow: escalateBelow) {
                return .decided(Decided(answer: fastAnswer.answer, run: fastAnswer.run, runs: runs, books: fastBooks))
            } else {
                logger.info("Asking the accurate provider", metadata: ["provider": "\(accurate.name)"])
                let second = await ask(
                    accurate, bytes: bytes, journal: journal, meter: meter, prepared: &prepared, logger: logger)
                switch second {
                case .answered(let answer, let run):
                    return .decided(
                        Decided(
                            answer: answer, run: run, runs: runs + [run],
                            books: Self.merge(accurate: check(answer, source: accurate.name), fast: fastBooks)))
                // The accurate provider is down, paused, out of quota or failed on this photo: the fast reading
                // is kept for a person to review, not thrown away (with no fast reading, the photo ends as usual).
                case .failed(let error, let run):
                    guard let fastAnswer else { return .unread(second, accurate, runs: runs + [run]) }
                    return .decided(
                        Decided(
                            answer: fastAnswer.answer, run: fastAnswer.run, runs: runs + [run], books: fastBooks,
                            notAsked: Self.notAsked(accurate, reason: error.shortReason, error: error, logger: logger)))
                case .unavailable(let health):
                    guard let fastAnswer else { return .unread(second, accurate, runs: runs) }
                    return .decided(
                        Decided(
                            answer: fastAnswer.answer, run: fastAnswer.run, runs: runs, books: fastBooks,
                            notAsked: Self.notAsked(accurate, reason: health.summary, error: nil, logger: logger)))
                case .stopped:
                    return .unread(second, accurate, runs: runs)
                }
            }
        }
    }

    private static func runs(of step: Step) -> [ResultDocument.Run] {
        switch step {
        case .answered(_, let run), .failed(_, let run): [run]
        case .unavailable, .stopped: []
        }
    }

    private static func notAsked(_ accurate: ProviderChannel, reason: String, error: PhotoError?, logger: Logger)
        -> AccurateNotAsked
    {
        logger.warning(
            "Keeping the fast reading for review; the accurate provider was not asked",
            metadata: [
                "provider": "\(accurate.name)", "reason": "\(reason)",
            ])
        return AccurateNotAsked(provider: accurate.name, reason: reason, awaiting: true, error: error)
    }

    package func check(_ answer: ModelAnswer, source: String) -> [Book] {
        BookChecker(reviewThreshold: reviewThreshold).check(answer.books, source: source)
    }

    /// Hybrid's rule: ask the accurate provider when the fast one saw no book at all, or any book below
    /// `escalateBelow` (a failed fast answer escalates too, before this is asked).
    package static func needsAccurateProvider(_ answer: ModelAnswer, escalateBelow: Double) -> Bool {
        answer.books.isEmpty || answer.books.contains { $0.confidence < escalateBelow }
    }

    /// Hybrid: the accurate provider's reading wins for every book both saw; books only the fast one saw
    /// stay, marked with its name as their source.
    package static func merge(accurate: [Book], fast: [Book]) -> [Book] {
        accurate + fast.filter { book in !accurate.contains { $0.isSameWork(as: book) } }
    }

    /// Asks one provider: its saved answer if there is one (never paid twice), else a request.
    package func ask(
        _ channel: ProviderChannel, bytes: [UInt8], journal: any AnswerJournal, meter: any AttemptMeter,
        prepared: inout [ImagePreset: PreparedPhoto], logger: Logger
    ) async -> Step {
        let provider = channel.provider
        var logger = logger
        logger[metadataKey: "provider"] = "\(provider.name)"
        var run = ResultDocument.Run(
            provider: provider.name, model: provider.model, books: nil, latencyMs: nil,
            response: nil, sent: nil, error: nil)
        let kept: SavedAnswer
        if let saved = journal.saved(from: provider) {
            kept = saved
            run.response = .init(file: saved.file, replayed: true)
            run.latencyMs = saved.latencyMs
            logger.info("Replaying a saved answer", metadata: ["response": "\(saved.file)"])
        } else if let error = journal.failure(from: provider) {
            run.error = error.description
            return .failed(error, run)
        } else {
            switch await request(
                channel, bytes: bytes, meter: meter, prepared: &prepared, run: &run,
                answersLogged: journal.logsAnsweredRequests, logger: logger)
            {
            case .success(let raw):
                let ms = (raw.latency ?? .zero).milliseconds
                run.latencyMs = ms
                kept = journal.save(raw, from: provider, latencyMs: ms)
                run.response = .init(file: kept.file, replayed: false)
            case .failure(let end):
                if case .failed(let error, _) = end.step { journal.failed(error, from: provider) }
                return end.step
            }
        }
        do {
            let answer = try provider.parse(kept.raw)
            run.books = answer.books.count
            return .answered(answer, run)
        } catch {
            journal.discard(kept)
            run.error = error.description
            return .failed(error, run)
        }
    }

    /// A request for a photo: turn, preparation, request slot, rate limit, attempt charge, sending, and once a
    /// smaller photo when the provider says it is too large. Fails with how the photo's go ended.
    private func request(
        _ channel: ProviderChannel, bytes: [UInt8], meter: any AttemptMeter,
        prepared: inout [ImagePreset: PreparedPhoto], run: inout ResultDocument.Run,
        answersLogged: Bool, logger: Logger
    ) async -> Result<RawResponse, StepEnd> {
        let provider = channel.provider
        // A provider that is down is asked by one photo per probe interval; the others wait in the queue.
        var probing = false
        switch health.turn(channel.name) {
        case .wait(let health): return .failure(StepEnd(.unavailable(health)))
        case .probe: probing = true
        case .open: break
        }
        // Upright, resized to the provider's preset, no metadata (no GPS position leaves the machine).
        var preset = provider.preset
        var photo: PreparedPhoto
        if let done = prepared[preset] {
            photo = done
        } else {
            switch await prepareOffPool(bytes, preset: preset, maxPixels: maxPixels) {
            case .success(let made): photo = made; prepared[preset] = made
            case .failure(let error): run.error = error.description; return .failure(StepEnd(.failed(error, run)))
            }
        }
        if let slots {
            guard await slots.acquire() else { return .failure(StepEnd(.stopped)) }
        }
        defer { slots?.release() }
        if shouldStop() { return .failure(StepEnd(.stopped)) }
        // The turn is taken holding the slot: at most `concurrency` photos of this process wait for one, and
        // the request goes out the moment it is granted.
        var seen: ProviderHealth?
        if let ended = await waitForTurn(
            on: channel, probing: probing, run: run, logger: logger, charging: meter, seen: &seen)
        {
            return .failure(ended)
        }
        // It may have gone down while this photo waited: the health read as the turn was taken says so; only a
        // provider seen down is asked again (its probe taken in the database).
        if !probing, let seen, seen.isOutage || seen.isInForce(at: time.now) {
            switch health.turn(channel.name) {
            case .wait(let health): return .failure(StepEnd(.unavailable(health)))
            case .probe: probing = true
            case .open: break
            }
        }
        let attempt: Int
        do { attempt = try meter.charge() } catch {
            return .failure(StepEnd(.failed(PhotoError(.internal, "\(error)", disposition: .retry(after: 60)), run)))
        }
        logger.info(
            "Scan started", metadata: ["event": "scan_started", "model": "\(provider.model)", "attempt": "\(attempt)"])
        onStage(.asking)
        var sent = await send(photo, to: channel, probe: probing, answersLogged: answersLogged, logger: logger)
        if case .failure(let error) = sent, error.code == .photoTooLarge {
            // The provider's own limit is lower than its preset: shrink once and try again.
            preset = ImagePreset(
                maxSide: preset.maxSide * 7 / 10, quality: preset.minQuality,
                targetBytes: preset.targetBytes.lowerBound / 2...preset.targetBytes.upperBound / 2,
                minQuality: preset.minQuality)
            logger.warning(
                "Photo too large for the provider; sending a smaller one", metadata: ["max_side": "\(preset.maxSide)"])
            if case .success(let smaller) = await prepareOffPool(bytes, preset: preset, maxPixels: maxPixels) {
                photo = smaller
                // A second request: a turn of its own.
                var ignored: ProviderHealth?
                if let ended = await waitForTurn(
                    on: channel, probing: probing, run: run, logger: logger, seen: &ignored)
                {
                    return .failure(ended)
                }
                sent = await send(photo, to: channel, probe: probing, answersLogged: answersLogged, logger: logger)
            }
        }
        run.sent = .init(width: photo.width, height: photo.height, quality: photo.quality, bytes: photo.jpeg.count)
        switch sent {
        case .success(let raw):
            health.answered(channel.name)
            return .success(raw)
        case .failure(let error):
            if Task.isCancelled { return .failure(StepEnd(.stopped)) } // the grace period ran out: back to the queue
            run.error = error.description
            // Recorded before the slot is given back, so no photo waiting for it is sent to a provider that
            // has just said no.
            health.failed(channel.name, error: error, probe: probing)
            return .failure(StepEnd(.failed(error, run)))
        }
    }

    /// How a request ended before an answer came.
    private struct StepEnd: Error {
        var step: Step
        init(_ step: Step) { self.step = step }
    }

    /// Waits for the channel's next turn, giving up when shutting down or when the provider is paused or
    /// backing off meanwhile (another photo, or another process, found it so). When `requests_per_day` is
    /// reached the provider backs off until its day ends, as for the provider's own daily quota: status
    /// shows why, and the photo goes back to the queue with no attempt charged.
    /// `probing`: this photo is the probe of a provider that is down, whose health stays in force meanwhile.
    /// Nil when the turn is granted; `seen` is then the provider's health as last read, just before the turn.
    private func waitForTurn(
        on channel: ProviderChannel, probing: Bool, run: ResultDocument.Run,
        logger: Logger, charging meter: (any AttemptMeter)? = nil, seen: inout ProviderHealth?
    ) async -> StepEnd? {
        var last: ProviderHealth?
        func pause() -> ProviderHealth? {
            guard !probing else { return nil }
            last = health.current(channel.name)
            return last.flatMap { $0.isInForce(at: time.now) ? $0 : nil }
        }
        defer { seen = last }
        switch await channel.waitForTurn(
            time: time, logger: logger, shouldStop: { shouldStop() || pause() != nil }, charging: meter)
        {
        case .granted:
            return nil
        case .stopped:
            return StepEnd(pause().map { .unavailable($0) } ?? .stopped)
        case .dayUsedUp(let error):
            if let backoff = health.failed(channel.name, error: error, probe: probing) {
                return StepEnd(.unavailable(backoff))
            }
            var run = run
            run.error = error.description
            return StepEnd(.failed(error, run))
        }
    }

    /// One request through the channel's quick retries, each recorded for the latency figures of `status`.
    /// A probe of a provider that is down is one request: no quick retries.
    /// `answersLogged`: the journal logs the request that answered as it saves the answer.
    private func send(
        _ photo: PreparedPhoto, to channel: ProviderChannel, probe: Bool, answersLogged: Bool,
        logger: Logger
    ) async -> Result<RawResponse, PhotoError> {
        await channel.send(
            PhotoUpload(bytes: photo.jpeg, mimeType: "image/jpeg"), time: time, logger: logger,
            shouldStop: { probe || shouldStop() }
        ) { latency, outcome in
            if outcome != "ok" || !answersLogged { health.requested(channel.name, latency: latency, outcome: outcome) }
        }
    }
}

/// Eval's providers: always asked, nothing recorded (eval never pauses the user's queue).
package struct UntrackedProviderHealth: ProviderHealthRecorder {
    package init() {}
    package func turn(_ provider: String) -> ProviderTurn { .open }
    package func current(_ provider: String) -> ProviderHealth? { nil }
    package func requested(_ provider: String, latency: Duration, outcome: String) {}
    package func answered(_ provider: String) {}
    package func failed(_ provider: String, error: PhotoError, probe: Bool) -> ProviderHealth? { nil }
}
