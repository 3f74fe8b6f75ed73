import Dispatch
import Foundation
import Logging
import ShelfCore
import ShelfDigest
import ShelfEnrichment
import ShelfImaging
import ShelfOutputs
import ShelfProviders
import ShelfStore
import Synchronization

/// Where library.json and review/ are written after a commit.
private let filesQueue = DispatchQueue(label: "shelfd.files")

/// A book one photo of the batch verified, with that photo and its shelf: a work the batch's other photos may show.
typealias VerifiedHere = (sha256: String, shelf: String?, book: Book)

/// One photo's answer, ready to be written.
struct PhotoAnswer: Sendable {
    var document: ResultDocument
    var resultURL: URL
    /// What `resultURL` held for this same photo before: an earlier run, kept in results/.history.
    var previous: ResultDocument?
    /// Hybrid: the accurate provider this fast reading waits for.
    var awaiting: String? = nil
    /// The photo's bytes when a book waits for review: its crops are cut from them after the commit.
    var photo: [UInt8]? = nil
}

/// How a photo's turn ended: an answer to write, or an outcome for the queue.
enum PhotoEnd: Sendable {
    case answered(PhotoAnswer)
    case ended(JobOutcome.Result)
}

extension Pipeline {
    /// Processes one claimed batch: every photo (requests bounded by the slots), then the result files,
    /// then one commit for the whole batch, then library.json.
    func process(batch jobs: [ClaimedJob]) async {

        let ends = await withTaskGroup(of: (ClaimedJob, PhotoEnd).self) { group in
            for job in jobs { group.addTask { (job, await self.process(photo: job)) } }
            var collected: [(ClaimedJob, PhotoEnd)] = []
            for await item in group { collected.append(item) }
            return collected.sorted { $0.0.id < $1.0.id }
        }

        // Writing result files: on a shared store they go to the database with the commit, no step to show.
        let answered = ends.compactMap { job, end in if case .answered = end { job.id } else { nil } }
        if !store.isShared { try? store.recordStage(.writing, jobIDs: answered, now: time.now) }
        // The works the batch's photos verified, each a work its other photos' readings may be.
        let verifiedHere = ends.flatMap { job, end -> [VerifiedHere] in
            guard case .answered(let answer) = end else { return [] }
            let shelf = ReviewDocument.Photo.shelf(of: job.relativePath)
            return answer.document.books.filter { $0.status == .verified }.map { (job.sha256, shelf, $0) }
        }
        var outcomes: [JobOutcome] = []
        // The answered photos with readings in doubt: where their outcome is, their answer, the titles and ISBNs in
        // doubt (`LibraryEvidence.keys`), the library's works under them they were settled on, and the readings a
        // person decided.
        var inDoubt:
            [(
                index: Int, answer: PhotoAnswer, keys: Set<String>, works: [String: [LibraryWork]],
                decided: Set<String>
            )] = []
        var written = 0
        for (job, end) in ends {
            guard case .answered(let answer) = end else {
                if case .ended(let result) = end { outcomes.append(JobOutcome(job: job, result: result)) }
                continue
            }
            let decided =
                job.mayHaveDecisions ? (try? library.decidedReadings(sha256: answer.document.photo.sha256)) ?? [] : []
            if let previous = answer.previous, !store.isShared || writesResultHere(job) {
                keep(previous, from: answer.resultURL, newJobID: job.id)
            }
            let keys = LibraryEvidence.keys(of: answer.document.books)
            let works = keys.isEmpty ? [:] : (try? library.works(under: keys, besides: job.sha256)) ?? [:]
            if !keys.isEmpty { inDoubt.append((outcomes.count, answer, keys, works, decided)) }
            outcomes.append(
                settle(job, answer, on: works, verifiedHere: verifiedHere, decided: decided, written: &written))
        }

        let change: FilesChange
        do {
            // Inside the commit, under the one write lock: a photo's readings in doubt are looked up again in the
            // library as every commit before this one left it. When a batch committed meanwhile (in this process or
            // by another worker) changed what they may be, the photo is settled again on that and its result written
            // again; otherwise the files written above stand, and no file is written while the lock is held.
            change = try store.finish(
                settling: { lookup in
                    for photo in inDoubt {
                        let job = outcomes[photo.index].job
                        guard let works = try? lookup.works(photo.keys, job.sha256), works != photo.works else {
                            continue
                        }
                        outcomes[photo.index] = settle(
                            job, photo.answer, on: works, verifiedHere: verifiedHere, decided: photo.decided,
                            written: &written)
                    }
                    Failpoint.hit("before_commit")
                    return outcomes
                }, shelfOf: { ReviewDocument.Photo.shelf(of: $0.relativePath) }, now: time.now)
        } catch {
            // Nothing is lost: the jobs stay leased until their lease runs out, are claimed again, and
            // their saved answers are replayed without a new request.
            logger.error("Cannot commit a batch", metadata: ["error": "\(error)", "batch.size": "\(jobs.count)"])
            return
        }
        Failpoint.hit("after_commit") // committed, its files not yet written: the next start catches up
        var originals: [String: [UInt8]] = [:]
        for case (_, .answered(let answer)) in ends {
            if let photo = answer.photo { originals[answer.document.photo.sha256] = photo }
        }
        await withCheckedContinuation { done in // crops decode whole photos: off the cooperative pool
            filesQueue.async { [originals] in
                self.writeLibrary(change, originals: originals); done.resume()
            }
        }
        for outcome in outcomes { afterCommit(outcome) }
    }

    /// Whether this node writes `job`'s result file itself on a shared store: the photo arrived here.
    private func writesResultHere(_ job: ClaimedJob) -> Bool {
        settings.writesFiles && settings.node != nil && job.resultNode == settings.node
    }

    /// One answered photo ready for the commit: its readings with the library's evidence (`works`, and what the
    /// batch's other photos verified), their review ids, and its result written (on a shared store, into the outcome
    /// for the database, and to disk when the photo arrived here). A result that cannot be written keeps the job
    /// (its answer is saved) and says so.
    private func settle(
        _ job: ClaimedJob, _ answer: PhotoAnswer, on works: [String: [LibraryWork]],
        verifiedHere: [VerifiedHere], decided: Set<String>,
        written: inout Int
    ) -> JobOutcome {
        do {
            var document = answer.document
            document.books = withLibraryEvidence(document.books, of: job, works: works, verifiedHere: verifiedHere)
            markOpenReviews(in: &document, decided: decided)
            // What the library settled waits for no one: a photo whose readings it all took is done, not `review`.
            let review = document.books.contains { $0.status == .needsReview }
            let data = try JSONStyle.encoder().encode(document)
            if store.isShared {
                // The result is written where the photo arrived: it goes to the database with the batch, and the node
                // that ingested the photo writes it from there (`writeStoredResults`), or a node with `writes_files =
                // true` when that node writes no files. When that node is this one, it is written now and committed as
                // written, with no turn of its own.
                var resultPath: String?
                if writesResultHere(job) {
                    do {
                        try AtomicFile.write(data, to: answer.resultURL)
                        resultPath = answer.resultURL.path
                    } catch {
                        logger.error(
                            "Cannot write a result; it waits in the database",
                            metadata: [
                                "photo.path": "\(job.relativePath)", "error": "\(error)",
                            ])
                    }
                }
                return JobOutcome(
                    job: job, result: .finished(books: document.books, resultPath: resultPath, review: review),
                    awaiting: answer.awaiting, document: data, finishedAt: document.timings.finishedAt)
            }
            try AtomicFile.write(
                data, to: answer.resultURL, afterTemp: written == 0 ? { Failpoint.hit("mid_write") } : nil)
            written += 1
            return JobOutcome(
                job: job,
                result: .finished(books: document.books, resultPath: answer.resultURL.path, review: review),
                awaiting: answer.awaiting, finishedAt: document.timings.finishedAt)
        } catch {
            // The disk is full or the folder unwritable: keep the job (its answer is saved) and say so.
            logger.error("Cannot write a result", metadata: ["photo.path": "\(job.relativePath)", "error": "\(error)"])
            return JobOutcome(
                job: job, result: .failed(.internal, message: "\(error)", retryAt: time.now.addingTimeInterval(60)))
        }
    }

    /// The library's works as evidence for the readings left for review (`LibraryEvidence`): offered first among
    /// their candidates, or taken as a sighting of the one work of that title seen on this shelf before, or of the work
    /// whose ISBN they carry. The works are the library's (`works`, by title and ISBN) and those the batch's other
    /// photos verified. A library that cannot be read
    /// lends nothing: the readings wait for a person as they are.
    private func withLibraryEvidence(
        _ books: [Book], of job: ClaimedJob, works stored: [String: [LibraryWork]],
        verifiedHere: [VerifiedHere]
    ) -> [Book] {
        let keys = LibraryEvidence.keys(of: books)
        guard !keys.isEmpty else { return books }
        let others = verifiedHere.filter {
            $0.sha256 != job.sha256 && LibraryEvidence.keys(naming: $0.book).contains(where: keys.contains)
        }
        let works = LibraryEvidence.works(stored, adding: others.map { ($0.book, $0.shelf) })
        guard !works.isEmpty else { return books }
        return LibraryEvidence(matcher: enricher.matcher).apply(
            to: books, shelf: ReviewDocument.Photo.shelf(of: job.relativePath), works: works)
    }

    /// Gives each book that will wait for a person its review id, so the result names `review/<id>.json`; a
    /// reading a person already decided for this photo (`decided`, by reading key) gets none (the decision applies
    /// again at commit).
    private func markOpenReviews(in document: inout ResultDocument, decided: Set<String>) {
        for i in document.books.indices where document.books[i].status == .needsReview {
            let book = document.books[i]
            document.books[i].reviewID =
                decided.contains(book.titleKey)
                ? nil : ReviewDocument.id(photoSHA256: document.photo.sha256, reading: book)
        }
    }

    private func afterCommit(_ outcome: JobOutcome) {
        let job = outcome.job
        var logger = self.logger
        logger[metadataKey: "photo.path"] = "\(job.relativePath)"
        logger[metadataKey: "job.id"] = "\(job.id)"
        switch outcome.result {
        case .finished(let books, let resultPath, let review):
            logger.info(
                "Photo done",
                metadata: [
                    "books": "\(books.count)", "review": "\(review)",
                    "result": "\(resultPath ?? "in the database")",
                ])
            if settings.moveAfter { moveOriginal(job) }
        case .failed(let code, let message, let retryAt):
            logger.warning(
                "Photo failed; will retry",
                metadata: [
                    "code": "\(code.rawValue)", "reason": "\(message)",
                    "retry_at": "\(retryAt)",
                ])
        case .dead(let code, let message):
            logger.error(
                "Photo failed for good",
                metadata: [
                    "code": "\(code.rawValue)", "reason": "\(message)",
                    "event": "photo_dead",
                ])
        case .released:
            break
        }
    }

    /// A rescan keeps every run's result: the current one stays at results/<name>.json, earlier ones move to
    /// results/.history/<name>/<provider>-<job>.json.
    private func keep(_ previous: ResultDocument, from url: URL, newJobID: Int64) {
        guard let previousJob = try? store.jobID(resultPath: url.path), previousJob != newJobID else { return }
        let relative = String(url.deletingPathExtension().path.dropFirst(settings.results.path.count + 1))
        let target = settings.results.appendingPathComponent(
            ".history/\(relative)/\(previous.decidedBy)-\(previousJob).json")
        do {
            if !FileManager.default.fileExists(atPath: target.path) {
                try AtomicFile.write(try Data(contentsOf: url), to: target, afterTemp: { Failpoint.hit("mid_history") })
            }
        } catch {
            logger.warning("Cannot keep the previous result", metadata: ["result": "\(url.path)", "error": "\(error)"])
        }
    }

    /// Brings library.json, review/ and exports/ in line with the database (the database is the truth; the files
    /// follow it): `full` at once and whole (at start, catching up a crash between a commit and its files; at the
    /// end of a run), else handed to `files`, which writes review/ at once and library.json and the exports off this
    /// path. `change`: what this process's commit changed (nil: a turn of a shared store's file node, or a full
    /// update); `originals`: the photos the batch read, still in memory, by hash. On a shared store, only a node that
    /// writes files writes: first its results any worker left in the database, then the rest when the library or the
    /// review queue changed since it last looked.
    package func writeLibrary(_ change: FilesChange? = nil, originals: [String: [UInt8]] = [:], full: Bool = false) {
        if change?.works.isEmpty == false { worksChanged.notify() }
        if store.isShared {
            guard settings.writesFiles else { return }
            // This process's commit, and nothing else since the files were written: they follow it alone, and
            // other workers' results wait for the next turn of `keepFilesCurrent`.
            if let change, !full, let before = change.filesVersionBefore, let after = change.filesVersionAfter,
                filesWritten.withLock({ written in
                    guard written == before else { return false }
                    written = after
                    return true
                })
            {
                files.changed(change, originals: originals)
                return
            }
            writeStoredResults()
            let version: Int64?
            do { version = try sharedResults.filesVersion() } catch {
                logger.error("Cannot read whether the library changed", metadata: ["error": "\(error)"])
                return
            }
            // Read before writing: a change made while the files are written is seen at the next turn.
            let changed = filesWritten.withLock { written in
                defer { written = version }
                return written != version
            }
            guard changed || full else { return }
        }
        if full {
            files.flush()
            var whole = files.files
            whole.originals = originals
            whole.update()
        } else if store.isShared {
            // A shared store's change may be another worker's: review/ is reconciled whole, library.json rewritten.
            var whole = change ?? FilesChange()
            whole.reconcile = true
            files.changed(whole, originals: originals)
        } else if let change {
            files.changed(change, originals: originals)
        }
    }

    /// Shared store, on a node that writes files: the results of the photos that arrived here (and, with
    /// `writes_files = true`, of those whose node writes no files), written once, under results/ as this machine
    /// would have named them; the job then names the file.
    private func writeStoredResults() {
        guard let node = settings.node else { return }
        while true {
            let pending: [StoredResult]
            do {
                pending = try sharedResults.unwritten(
                    node: node, takingOthers: settings.writesOthersResults, limit: 100)
            } catch {
                logger.error("Cannot read the results to write", metadata: ["error": "\(error)"])
                return
            }
            guard !pending.isEmpty else { return }
            for result in pending {
                let location = resultLocation(relativePath: result.relativePath, sha256: result.sha256)
                do {
                    if let previous = location.previous { keep(previous, from: location.url, newJobID: result.jobID) }
                    try AtomicFile.write(result.document, to: location.url)
                    try sharedResults.markWritten(jobID: result.jobID, path: location.url.path, now: time.now)
                } catch {
                    // The disk is full or the folder unwritable: the result stays in the database for the next turn.
                    logger.error(
                        "Cannot write a result",
                        metadata: ["photo.path": "\(result.relativePath)", "error": "\(error)"])
                    return
                }
            }
        }
    }

    /// `watch` on a shared store, on the node that writes files: keeps them current from the database, off the
    /// cooperative pool and one turn at a time with the writes after this process's own commits.
    package func keepFilesCurrent() async {
        await withCheckedContinuation { done in
            filesQueue.async {
                self.writeLibrary(); done.resume()
            }
        }
    }

    /// `pipeline.after = "move"`: each path the photo was seen at goes to processed/, if it still holds this photo.
    /// Phones reuse names (IMG_0001.jpg): a new photo, perhaps still being copied, may be there now; it is left for
    /// the watcher to take as new. Judged by the hash, the photo's identity, rather than the size and time recorded
    /// at ingest: a copy can carry the old file's time, and this is the one change shelfd makes to a person's
    /// files. It costs one more read of a photo shelfd has just read, next to seconds at the provider.
    private func moveOriginal(_ job: ClaimedJob) {
        for path in job.paths where FileManager.default.fileExists(atPath: path.path) {
            let target = settings.processed.appendingPathComponent(path.relativePath)
            guard !FileManager.default.fileExists(atPath: target.path) else { continue }
            guard case .success(let bytes) = PhotoFile.read(path.path), SHA256.hex(of: bytes) == job.sha256 else {
                logger.notice(
                    "Not moving a path that holds another photo now", metadata: ["photo.path": "\(path.relativePath)"])
                continue
            }
            do {
                try FileManager.default.createDirectory(
                    at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.moveItem(atPath: path.path, toPath: target.path)
            } catch {
                logger.warning(
                    "Cannot move a finished photo",
                    metadata: ["photo.path": "\(path.relativePath)", "error": "\(error)"])
            }
        }
    }

    /// results/<sub-path>/<name>.json; a different photo that had the same name gets its hash appended.
    /// Also what the file holds for this same photo, read once here for `keep` to move into the history.
    func resultLocation(for job: ClaimedJob) -> (url: URL, previous: ResultDocument?) {
        resultLocation(relativePath: job.relativePath, sha256: job.sha256)
    }

    func resultLocation(relativePath: String, sha256: String) -> (url: URL, previous: ResultDocument?) {
        func existing(_ url: URL) -> ResultDocument? {
            FileManager.default.contents(atPath: url.path).flatMap {
                try? JSONStyle.decoder().decode(ResultDocument.self, from: $0)
            }
        }
        let relative = (relativePath as NSString).deletingPathExtension
        let url = settings.results.appendingPathComponent(relative + ".json")
        let found = existing(url)
        guard let found, found.photo.sha256 != sha256 else { return (url, found) }
        let own = settings.results.appendingPathComponent(relative + "-\(sha256.prefix(8)).json")
        return (own, existing(own).flatMap { $0.photo.sha256 == sha256 ? $0 : nil })
    }
}
