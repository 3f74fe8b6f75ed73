import Foundation
import ShelfCore

// The narrow views of the store each side uses. The pipeline and the files people read hold these, never
// `Store` itself, so that their unit tests stand on small fakes and a second store can stand behind the same
// protocols. `Store.queue` (`PhotoQueue`) is the `JobQueue`; `Store.library` (`LibraryRecords`) is the review and library views.
// Requirements carry every argument (`now:` too): a protocol has no default arguments, so callers through these
// views pass the time they mean.

extension JobLeases {
    /// Commits outcomes made before the commit.
    @discardableResult
    package func finish(_ outcomes: [JobOutcome], shelfOf: (ClaimedJob) -> String?, now: Date) throws
        -> FilesChange
    {
        guard !outcomes.isEmpty else { return FilesChange() }
        return try finish(settling: { _ in outcomes }, shelfOf: shelfOf, now: now)
    }
}

/// What a batch's commit reads of the library inside its own transaction; used only while `settle` runs.
package struct CommitLookup {
    /// The verified works read under these keys (normalised titles, `LibraryWork.isbnKey`s) in photos other than the
    /// one given, by key (`LibraryRecords.works(under:besides:)`).
    package var works: (_ keys: Set<String>, _ besides: String) throws -> [String: [LibraryWork]]

    package init(works: @escaping (Set<String>, String) throws -> [String: [LibraryWork]]) { self.works = works }

    /// A library with no works, for a queue that keeps none.
    package static var empty: CommitLookup { CommitLookup { _, _ in [:] } }
}

/// The queue as the pipeline sees it: sightings in, jobs claimed and leased, attempts charged, saved answers
/// kept for replay, hybrid's rechecks, and one commit per batch. The pipeline holds all of it; the parts of a photo's
/// work hold only their own seam.
package typealias JobQueue = SightingLedger & JobLeases & JobSteps & AnswerLedger & RecheckQueue

/// Photos in: the files found, hashed and recorded, and the ones that could not be read.
package protocol SightingLedger: Sendable {
    /// The stored sightings of these paths, by path: an unchanged file is not hashed again.
    func knownSightings(paths: [String]) throws -> [String: KnownSighting]
    /// Hashed files recorded in one transaction: new content becomes a job, a known photo a sighting.
    /// A new photo in a shelf's folder joins the shelf's round, or opens one after `roundQuiet` (ShelfRounds.swift).
    func recordSightings(
        _ files: [HashedFile], provider: String, providerChoice: String?, resultNode: String?,
        roundQuiet: TimeInterval, now: Date
    ) throws -> [SightingOutcome]
    /// Which of these contents were seen before (at any path).
    func knownPhotos(among sha256s: [String]) throws -> Set<String>
    func recordPathProblem(
        path: String, code: PhotoError.Code, message: String, size: Int64?, mtime: Double?, now: Date) throws
    func prunePathProblems(stillThere: (String) -> Bool) throws

    /// Whether other machines' workers share this queue: the worker that finds a photo then stores its provider-ready
    /// image (`recordSighting(image:)`) for those that cannot see the folder it arrived in.
    var isShared: Bool { get }
    func photoImage(sha256: String) throws -> [UInt8]?
}

/// Jobs taken and given back: claims, their leases kept alive, and one commit per batch.
package protocol JobLeases: Sendable {
    func claim(limit: Int, provider: String, choice: String?, owner: String, lease: TimeInterval, now: Date) throws
        -> [ClaimedJob]
    func nextRetryDate() throws -> Date?
    func heartbeat(jobIDs: [Int64], owner: String, lease: TimeInterval, now: Date) throws
    /// Commits a batch; returns what it changed of the files for people. `settle` makes the outcomes inside the
    /// commit's own transaction, where `CommitLookup` reads the library as every commit before this one left it
    /// (another worker's too): what photos read together or at once learn of each other's works.
    @discardableResult
    func finish(settling settle: (CommitLookup) throws -> [JobOutcome], shelfOf: (ClaimedJob) -> String?, now: Date)
        throws -> FilesChange
    /// The job whose result is at `resultPath` (the run a rescan keeps in results/.history).
    func jobID(resultPath: String) throws -> Int64?
}

/// One claimed job on its way: its attempt charged before the first request that costs, and the steps it reaches.
package protocol JobSteps: Sendable {
    func chargeAttempt(jobID: Int64, now: Date) throws -> Int
    /// The step these leased jobs' photos reached (the overview shows it, also to other processes).
    func recordStage(_ stage: JobStage, jobIDs: [Int64], now: Date) throws
}

/// A job's answers, saved before they are acted on, so a crash or another worker replays them instead of paying again.
package protocol AnswerLedger: Sendable {
    /// `body`: the answer itself, kept in the database too on a store other machines share (their workers cannot
    /// read this machine's file); nil on one machine. `request`: the request that brought it is logged with it, for
    /// the latency figures (then not through `recordRequest`).
    func recordResponse(
        jobID: Int64, sha256: String, provider: String, model: String, file: String, bytes: Int,
        body: [UInt8]?, latencyMs: Int?, request: Bool, now: Date
    ) throws -> Int64
    func usableResponse(jobID: Int64, provider: String, model: String) throws -> SavedResponse?
    func markResponseUnusable(id: Int64) throws
    /// Whether the answers' bodies are kept in the database too (a store other machines share).
    var isShared: Bool { get }
}

/// Hybrid's photos finished with the fast reading and waiting for the accurate provider to be asked again.
package protocol RecheckQueue: Sendable {
    func isRecheck(jobID: Int64) throws -> Bool
    func awaitingCount(provider: String) throws -> Int
    func requeueAwaiting(provider: String, oneMore: Bool, now: Date) throws -> [Int64]
}

extension SightingLedger {
    /// A stored sighting for this path, so an unchanged file is not hashed again on every rescan.
    package func knownSighting(path: String) throws -> KnownSighting? {
        try knownSightings(paths: [path])[path]
    }

    package func isKnownPhoto(sha256: String) throws -> Bool {
        try !knownPhotos(among: [sha256]).isEmpty
    }

    /// Records that `path` holds the photo `sha256`. A photo is known by its content: only new content
    /// becomes a job; another copy or a renamed copy is a sighting.
    /// `image`: a new photo's provider-ready image, stored in the same transaction as its job (a shared store's).
    /// `resultNode`: on a shared store, the node whose results/ gets the photo's results, kept from its first
    /// sighting (`ResultDocuments.swift`).
    package func recordSighting(
        path: String, relativePath: String, sha256: String, size: Int64, mtime: Double,
        syncConflict: Bool = false, provider: String, providerChoice: String? = nil, image: [UInt8]? = nil,
        resultNode: String? = nil, roundQuiet: TimeInterval = ShelfRounds.defaultQuiet,
        now: Date
    ) throws -> SightingOutcome {
        let file = HashedFile(
            path: path, relativePath: relativePath, sha256: sha256, size: size, mtime: mtime,
            syncConflict: syncConflict, image: image)
        return try recordSightings(
            [file], provider: provider, providerChoice: providerChoice, resultNode: resultNode,
            roundQuiet: roundQuiet,
            now: now)[0]
    }
}

/// Shelves' rounds as the pipeline sees them: closed once quiet and read (`ShelfRounds`).
package protocol ShelfRoundStore: Sendable {
    /// Closes the rounds due; returns what that changed of the files for people.
    func closeDue(quiet: TimeInterval, now: Date) throws -> FilesChange
}

extension ShelfRounds: ShelfRoundStore {}

/// The providers' and book sources' health, shared by every shelfd process.
package protocol ProviderHealthStore: Sendable {
    func providerHealth(_ name: String) throws -> ProviderHealth?
    func setProviderHealth(_ health: ProviderHealth, now: Date) throws
    func takeTurn(_ name: String, ceiling: TimeInterval, now: Date) throws -> ProviderTurn
    func recordOutage(
        _ name: String, state: ProviderHealth.State, code: String, message: String, probe: Bool,
        ceiling: TimeInterval, notBefore: Date?, now: Date
    ) throws -> ProviderHealth
    func recordRequest(provider: String, latencyMs: Int, outcome: String, now: Date) throws
    func liftPause(_ name: String, now: Date) throws
}

/// The request budgets every shelfd process that asks a provider takes its turns from. `now`: nil for the
/// store's own clock.
package protocol RequestBudgetStore: Sendable {
    func takeRequestTurn(provider: String, budget: RequestBudget, now: Date?) throws -> RequestTurn
    /// The same, and when the turn is granted the job's attempt charged in the same transaction (the photo is then
    /// `asking`): a request's two writes before it is sent are one. The attempts are the job's after the charge.
    func takeRequestTurn(
        provider: String, budget: RequestBudget, charging jobID: Int64,
        now: Date?
    ) throws -> (turn: RequestTurn, attempts: Int?)
}

/// The review queue: the open items and a person's decisions.
package protocol ReviewStore: Sendable {
    func openReviewItems() throws -> [ReviewItem]
    /// Every open item a page at a time, oldest first.
    func openReviewPages(size: Int, _ body: ([ReviewItem]) throws -> Void) throws
    func reviewItem(_ id: String) throws -> ReviewItem
    /// The readings of a photo a person already decided (they are not asked again).
    func decidedReadings(sha256: String) throws -> Set<String>
    func decide(_ id: String, _ verdict: ReviewVerdict, now: Date) throws -> ReviewResolution
    /// Several decisions taken at once, each carried out and recorded as `decide` does it alone.
    func decide(_ decisions: [(id: String, verdict: ReviewVerdict)], now: Date) throws -> [ReviewResolution]
    /// One photo's open items, by its sha256 or the start of it, in the order its spines stand.
    func openReviewItems(photo prefix: String) throws -> [ReviewItem]
    /// The queue's first open item, oldest first.
    func firstOpenReviewID() throws -> String?
    /// Where `item` stands among the open items, oldest first, and its neighbours.
    func reviewPlace(of item: ReviewItem) throws -> ReviewPlace
    /// The open item after `item` in that order, wrapping round to the first; nil when no other is open.
    func openReviewID(after item: ReviewItem) throws -> String?
    /// The photos of one shelf (nil: the top of incoming/) with open items, by path, with how many each has.
    func openReviewPhotos(shelf: String?) throws -> [OpenPhoto]
    /// Takes decisions back: their items open again as they were.
    func reopen(_ decisions: [ReviewUndo], now: Date) throws -> FilesChange
}

extension ReviewStore {
    /// A store that holds few items (a test's fake): read from the whole list.
    package func firstOpenReviewID() throws -> String? { try openReviewItems().first?.id }

    package func openReviewPages(size: Int, _ body: ([ReviewItem]) throws -> Void) throws {
        let items = try openReviewItems()
        if !items.isEmpty { try body(items) }
    }

    package func reviewPlace(of item: ReviewItem) throws -> ReviewPlace {
        let items = try openReviewItems()
        let index = items.firstIndex { $0.id == item.id }
        return ReviewPlace(
            position: (index ?? 0) + 1, total: items.count,
            previous: index.flatMap { $0 > 0 ? items[$0 - 1].id : nil },
            next: index.flatMap { $0 + 1 < items.count ? items[$0 + 1].id : nil })
    }

    /// One transaction per decision: the store does them in one.
    package func decide(_ decisions: [(id: String, verdict: ReviewVerdict)], now: Date) throws -> [ReviewResolution] {
        try decisions.map { try decide($0.id, $0.verdict, now: now) }
    }

    package func openReviewItems(photo prefix: String) throws -> [ReviewItem] {
        try openReviewItems().filter { $0.photo.sha256.hasPrefix(prefix.lowercased()) }
            .sorted(by: ReviewItem.standingOrder)
    }

    package func openReviewPhotos(shelf: String?) throws -> [OpenPhoto] {
        Dictionary(grouping: try openReviewItems().filter { $0.photo.shelf == shelf }, by: \.photo)
            .map { OpenPhoto(photo: $0.key, open: $0.value.count) }.sorted { $0.photo.path < $1.photo.path }
    }

    package func reopen(_ decisions: [ReviewUndo], now: Date) throws -> FilesChange {
        throw ReviewError(code: .notFound, message: "This store keeps no decisions to take back.")
    }

    package func openReviewID(after item: ReviewItem) throws -> String? {
        let items = try openReviewItems()
        let later = items.first { ($0.createdAt, $0.id) > (item.createdAt, item.id) }
        return (later ?? items.first { $0.id != item.id })?.id
    }
}

/// What library.json and review/ are written from: the library, and the review queue as `ReviewStore` reads it.
package protocol LibraryStore: ReviewStore {
    func entries() throws -> [LibraryDocument.Entry]
    /// The library a page of works at a time, first seen first: what library.json and the exports stream from.
    func libraryPages(size: Int, _ body: ([LibraryDocument.Entry]) throws -> Void) throws
    /// The open items of these photos.
    func openReviewItems(photos: Set<String>) throws -> [ReviewItem]
    /// Where a photo has been seen, newest first: its review crops are cut from the original.
    func photoLocations(sha256: String) throws -> [String]
    /// The provider-ready image a shared store keeps: crops are cut from it where no original is readable.
    func photoImage(sha256: String) throws -> [UInt8]?
    /// Whether `photoImage` has an image to give.
    func hasPhotoImage(sha256: String) throws -> Bool
    /// The verified works read under these keys (normalised titles, `LibraryWork.isbnKey`s) in photos other than
    /// `photo`, by key.
    func works(under keys: Set<String>, besides photo: String) throws -> [String: [LibraryWork]]
}

/// A shared store's results and the change counter, for the node that keeps the files for people.
package protocol SharedFilesStore: Sendable {
    func unwritten(node: String, takingOthers: Bool, limit: Int) throws -> [StoredResult]
    func markWritten(jobID: Int64, path: String, now: Date) throws
    func filesVersion() throws -> Int64?
}

extension LibraryStore {
    /// A fake's library lends no evidence.
    package func works(under keys: Set<String>, besides photo: String) throws -> [String: [LibraryWork]] { [:] }

    // A store that holds little (a test's fake): the whole library as one page, the open items read whole.
    package func libraryPages(size: Int, _ body: ([LibraryDocument.Entry]) throws -> Void) throws {
        let books = try entries()
        if !books.isEmpty { try body(books) }
    }

    package func openReviewItems(photos: Set<String>) throws -> [ReviewItem] {
        try openReviewItems().filter { photos.contains($0.photo.sha256) }
    }

    package func hasPhotoImage(sha256: String) throws -> Bool { try photoImage(sha256: sha256) != nil }
}

extension PhotoQueue: JobQueue {}
extension LibraryRecords: LibraryStore {}
