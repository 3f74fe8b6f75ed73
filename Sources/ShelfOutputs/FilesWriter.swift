import Foundation
import ShelfCore
import ShelfStore
import Synchronization

/// The one writer of the files for people in a process: every commit (a batch, a review decision, a library edit)
/// hands it what it changed and goes on; the answer to a decision never waits for a file, nor for the files lock
/// another process holds.
///
/// Each commit returns what it changed (`FilesChange`), and the files follow from that report, not from a re-read:
/// review/ at once, on the writer's own thread, item by item (`LibraryFiles.updateReview(_:)`); a change it cannot
/// name item by item (another worker's) and the first change of each day reconcile review/ with every open item.
/// library.json and the exports are whole-library files: their rewrite is coalesced (`RewriteSchedule`).
/// A short-lived process (`shelfd review`, `shelfd library`) writes `immediately`, before it exits. A change whose
/// files a crash (kill -9) cut short is caught up by the full update at the next start.
package final class FilesWriter: Sendable {
    package let files: LibraryFiles
    private let immediately: Bool
    private let reviewQueue = DispatchQueue(label: "shelfd.files.review")
    private let libraryQueue = DispatchQueue(label: "shelfd.files.library")
    private let state: Mutex<State>

    private struct State {
        /// review/'s changes not yet written.
        var review = FilesChange()
        var library: RewriteSchedule
        /// Whether a pass of either kind is queued (it reads the flags when it runs).
        var reviewQueued = false
        var libraryQueued = false
        /// Photos of the batch just committed, by hash: their review crops are cut without reading them again.
        var originals: [String: [UInt8]] = [:]
        var lastReconcile: SomeClock.Instant
    }

    package init(
        files: LibraryFiles, immediately: Bool = false, time: TimeSource = .system,
        settle: Duration = .milliseconds(100),
        minimumSpacing: Duration = .milliseconds(250), maximumSpacing: Duration = .seconds(3)
    ) {
        var files = files
        files.time = time
        self.files = files; self.immediately = immediately
        state = Mutex(
            State(
                library: RewriteSchedule(
                    settle: settle, minimumSpacing: minimumSpacing, maximumSpacing: maximumSpacing),
                lastReconcile: time.clock.now))
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
        let now = time.clock.now
        let (queueReview, libraryDue) = state.withLock { state -> (Bool, SomeClock.Instant?) in
            if review { state.review.formUnion(change) }
            if library { state.library.changed(at: now) }
            state.originals.merge(originals) { new, _ in new }
            let queueReview = review && !state.reviewQueued
            if queueReview { state.reviewQueued = true }
            guard library && !state.libraryQueued else { return (queueReview, nil) }
            state.libraryQueued = true
            return (queueReview, state.library.due)
        }
        if queueReview { reviewQueue.async { self.writeReview() } }
        if let libraryDue { scheduleLibrary(at: libraryDue) }
    }

    /// Writes whatever is pending now and returns when it is written: a process about to exit, or a test.
    package func flush() {
        reviewQueue.sync { writeReview() }
        libraryQueue.sync { writeLibrary(now: true) }
    }

    /// The clock of the rewrite's pauses and of the daily reconcile: the one library.json's date is read from.
    private var time: TimeSource { files.time }

    private func scheduleLibrary(at due: SomeClock.Instant) {
        Task { [time] in
            try? await time.clock.sleep(until: due)
            libraryQueue.async { self.writeLibrary() }
        }
    }

    private func writeReview() {
        // Flags are cleared before reading the database: a change committed meanwhile queues the next pass.
        let now = time.clock.now
        let (pending, originals) = state.withLock { state -> (FilesChange?, [String: [UInt8]]) in
            defer { state.review = FilesChange(); state.reviewQueued = false; state.originals = [:] }
            guard state.review.changesReview else { return (nil, [:]) }
            var pending = state.review
            if now - state.lastReconcile > .seconds(86_400) { pending.reconcile = true }
            if pending.reconcile { state.lastReconcile = now }
            return (pending, state.originals)
        }
        guard let pending else { return }
        var files = self.files
        files.originals = originals
        files.updateReview(pending.reconcile ? nil : pending)
    }

    /// Rewrites library.json and the exports when they are due (`now`: whatever is pending, at once).
    private func writeLibrary(now: Bool = false) {
        // A change that came after this pass was queued can move the time: wait for it instead.
        enum Pass { case write, wait(SomeClock.Instant), none }
        let clock = time.clock
        let pass = state.withLock { state -> Pass in
            guard let due = state.library.due else {
                if !now { state.libraryQueued = false } // this was the queued pass
                return .none
            }
            guard now || due <= clock.now else { return .wait(due) }
            state.library.writing()
            return .write
        }
        switch pass {
        case .none: return
        case .wait(let due): return scheduleLibrary(at: due)
        case .write: break
        }
        let took = clock.measure { files.updateLibrary() }
        let finished = clock.now
        let next = state.withLock { state -> SomeClock.Instant? in
            state.library.wrote(at: finished, took: took)
            if now && state.libraryQueued { return nil } // the queued pass takes what came meanwhile
            state.libraryQueued = state.library.due != nil
            return state.library.due
        }
        if let next { scheduleLibrary(at: next) }
    }
}

/// When library.json and the exports are next rewritten. A rewrite waits until changes have paused for as long as
/// the last one took (at least `settle`), so a burst of decisions or commits is not slowed by a whole-library
/// rewrite running beside it; but no longer than `maximumSpacing` twice after the first change it would carry. And
/// while changes keep coming the next waits ten times what the last took, between `minimumSpacing` and
/// `maximumSpacing`: a large library (a rewrite of seconds) spends at most a tenth of the writer's time on it, a
/// small one follows within a fraction of a second. Either way the files follow the last change within about
/// twice `maximumSpacing` and two rewrites.
package struct RewriteSchedule: Sendable {
    package var settle: Duration
    package var minimumSpacing: Duration
    package var maximumSpacing: Duration
    /// The first and the last change not yet written.
    private var firstChange: SomeClock.Instant?
    private var lastChange: SomeClock.Instant?
    private var lastWrite: SomeClock.Instant?
    private var took: Duration = .zero

    package init(settle: Duration, minimumSpacing: Duration, maximumSpacing: Duration) {
        self.settle = settle; self.minimumSpacing = minimumSpacing; self.maximumSpacing = maximumSpacing
    }

    package mutating func changed(at instant: SomeClock.Instant) {
        firstChange = firstChange ?? instant
        lastChange = instant
    }

    /// When the pending changes are to be written; nil when nothing is pending.
    package var due: SomeClock.Instant? {
        guard let firstChange, let lastChange else { return nil }
        let paused = lastChange + min(maximumSpacing, max(settle, took))
        let due = min(paused, firstChange + maximumSpacing * 2)
        guard let lastWrite else { return due }
        return max(due, lastWrite + min(maximumSpacing, max(minimumSpacing, took * 10)))
    }

    /// A rewrite starts: it carries every change so far (it reads the database after this).
    package mutating func writing() { firstChange = nil; lastChange = nil }

    package mutating func wrote(at instant: SomeClock.Instant, took: Duration) {
        lastWrite = instant; self.took = took
    }
}
