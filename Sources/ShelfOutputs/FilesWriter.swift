import Foundation
import ShelfStore
import Synchronization

/// The one writer of the files for people in a process: every commit (a batch, a review decision, a library edit)
/// hands it what it changed and goes on; the answer to a decision never waits for a file, nor for the files lock
/// another process holds.
///
/// Each commit returns what it changed (`FilesChange`), and the files follow from that report, not from a re-read:
/// review/ at once, on the writer's own thread, item by item (`LibraryFiles.updateReview(_:)`); a change it cannot
/// name item by item (another worker's) and the first change of each day reconcile review/ with every open item. library.json and the exports are whole-library files:
/// their rewrite is coalesced. It starts `settle` after a change, and while changes keep coming the next waits ten
/// times what the last rewrite took, between `minimumSpacing` and `maximumSpacing`: a small library follows within
/// a fraction of a second, a large one (a rewrite of seconds) is rewritten at most every few seconds and spends at
/// most a tenth of the writer's time on it; either way the files follow the last change within
/// `settle + maximumSpacing` and a rewrite.
/// A short-lived process (`shelfd review`, `shelfd library`) writes `immediately`, before it exits. A change whose
/// files a crash (kill -9) cut short is caught up by the full update at the next start.
package final class FilesWriter: Sendable {
    package let files: LibraryFiles
    private let immediately: Bool
    private let settle: Duration
    private let minimumSpacing: Duration
    private let maximumSpacing: Duration
    private let reviewQueue = DispatchQueue(label: "shelfd.files.review")
    private let libraryQueue = DispatchQueue(label: "shelfd.files.library")
    private let state = Mutex(State())

    private struct State {
        /// review/'s changes not yet written.
        var review = FilesChange()
        var library = false
        /// Whether a pass of either kind is queued (it reads the flags when it runs).
        var reviewQueued = false
        var libraryQueued = false
        var lastLibraryWrite: ContinuousClock.Instant?
        /// How long the next rewrite waits after the last one, from what that one took.
        var spacing: Duration = .zero
        /// Photos of the batch just committed, by hash: their review crops are cut without reading them again.
        var originals: [String: [UInt8]] = [:]
        var lastReconcile = ContinuousClock.now
    }

    package init(files: LibraryFiles, immediately: Bool = false, settle: Duration = .milliseconds(100),
                 minimumSpacing: Duration = .milliseconds(250), maximumSpacing: Duration = .seconds(3)) {
        self.files = files; self.immediately = immediately; self.settle = settle
        self.minimumSpacing = minimumSpacing; self.maximumSpacing = maximumSpacing
    }

    /// A commit's report of what it changed. `originals`: the photos a batch read, still in memory, by hash.
    package func changed(_ change: FilesChange, originals: [String: [UInt8]] = [:]) {
        let review = change.changesReview, library = change.changesLibrary
        guard review || library else { return }
        if immediately {
            var files = self.files
            files.originals = originals
            if review { files.updateReview(change.reconcile ? nil : change) }
            if library { files.updateLibrary() }
            return
        }
        let (queueReview, libraryDelay) = state.withLock { state -> (Bool, Duration?) in
            if review { state.review.formUnion(change) }
            state.library = state.library || library
            state.originals.merge(originals) { new, _ in new }
            let queueReview = review && !state.reviewQueued
            if queueReview { state.reviewQueued = true }
            guard state.library && !state.libraryQueued else { return (queueReview, nil) }
            state.libraryQueued = true
            let sinceLast = state.lastLibraryWrite.map { ContinuousClock.now - $0 } ?? state.spacing
            return (queueReview, max(settle, state.spacing - sinceLast))
        }
        if queueReview { reviewQueue.async { self.writeReview() } }
        if let libraryDelay { scheduleLibrary(after: libraryDelay) }
    }

    /// Writes whatever is pending now and returns when it is written: a process about to exit, or a test.
    package func flush() {
        reviewQueue.sync { writeReview() }
        libraryQueue.sync { writeLibrary() }
    }

    private func scheduleLibrary(after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        libraryQueue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { self.writeLibrary() }
    }

    private func writeReview() {
        // Flags are cleared before reading the database: a change committed meanwhile queues the next pass.
        let (pending, originals) = state.withLock { state -> (FilesChange?, [String: [UInt8]]) in
            defer { state.review = FilesChange(); state.reviewQueued = false; state.originals = [:] }
            guard state.review.changesReview else { return (nil, [:]) }
            var pending = state.review
            if ContinuousClock.now - state.lastReconcile > .seconds(86_400) { pending.reconcile = true }
            if pending.reconcile { state.lastReconcile = .now }
            return (pending, state.originals)
        }
        guard let pending else { return }
        var files = self.files
        files.originals = originals
        files.updateReview(pending.reconcile ? nil : pending)
    }

    private func writeLibrary() {
        let pending = state.withLock { state in
            defer { state.library = false }
            return state.library
        }
        let took = ContinuousClock().measure { if pending { files.updateLibrary() } }
        // A change that came while writing waits the spacing from this write, at least `settle`.
        let again = state.withLock { state -> Duration? in
            if pending {
                state.lastLibraryWrite = .now
                state.spacing = min(maximumSpacing, max(minimumSpacing, took * 10))
            }
            state.libraryQueued = state.library
            return state.library ? max(settle, state.spacing) : nil
        }
        if let again { scheduleLibrary(after: again) }
    }
}
