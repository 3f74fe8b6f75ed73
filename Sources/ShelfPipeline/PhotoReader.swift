import Dispatch
import Foundation
import Logging
import ShelfCore
import ShelfEnrichment
import ShelfImaging
import ShelfProviders
import ShelfStore
import Synchronization

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
