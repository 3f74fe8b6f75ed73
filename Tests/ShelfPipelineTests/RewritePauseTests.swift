import Foundation
import Logging
import ShelfCore
import ShelfOutputs
import ShelfStore
import ShelfTesting
import Synchronization
import Testing

/// A library that grows as a test commits works to it, and records each time library.json was written from it: when
/// on the test's clock, and how many works it listed.
final class GrowingLibrary: LibraryStore {
    struct NoReview: Error {}
    let clock: ManualClock
    private let state = Mutex<(works: [LibraryDocument.Entry], rewrites: [(at: Duration, works: Int)])>(([], []))

    init(clock: ManualClock) { self.clock = clock }

    func add(_ title: String) {
        let entry = LibraryDocument.Entry(
            work: "title:\(title)", title: title, author: nil, isbn13: nil, isbn10: nil,
            confidence: 0.9, status: .verified, source: "gemini",
            firstSeen: Date(timeIntervalSince1970: 1_790_000_000), sightings: [])
        state.withLock { $0.works.append(entry) }
    }

    var rewrites: [(at: Duration, works: Int)] { state.withLock { $0.rewrites } }

    func entries() throws -> [LibraryDocument.Entry] {
        let now = clock.now.offset
        return state.withLock { state in
            state.rewrites.append((now, state.works.count))
            return state.works
        }
    }

    // Review is not this test's concern.
    func openReviewItems() throws -> [ReviewItem] { [] }
    func photoLocations(sha256: String) throws -> [String] { [] }
    func photoImage(sha256: String) throws -> [UInt8]? { nil }
    func reviewItem(_ id: String) throws -> ReviewItem { throw NoReview() }
    func decidedReadings(sha256: String) throws -> Set<String> { [] }
    func decide(_ id: String, _ verdict: ReviewVerdict, now: Date) throws -> ReviewResolution { throw NoReview() }
}

/// library.json follows the library on the writer's clock: a burst of commits or decisions waits for its pause and is
/// written once, and changes that never pause are still written within twice the maximum spacing. The clock moves only
/// when the test moves it, and only while the writer sleeps.
@Suite("The rewrite's pause, on a manual clock")
struct RewritePauseTests {
    let clock: ManualClock
    let library: GrowingLibrary
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-rewrite-\(UUID().uuidString)")
    let writer: FilesWriter

    init() throws {
        clock = ManualClock()
        library = GrowingLibrary(clock: clock)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let files = LibraryFiles(
            libraryFile: folder.appendingPathComponent("library.json"),
            review: folder.appendingPathComponent("review"),
            processed: folder.appendingPathComponent("processed"),
            filesLock: folder.appendingPathComponent("files.lock"),
            store: library, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        writer = FilesWriter(
            files: files, time: clock.time, settle: .milliseconds(100),
            minimumSpacing: .milliseconds(250), maximumSpacing: .seconds(3))
    }

    /// How many works library.json lists now.
    func listed() -> Int {
        guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent("library.json").path),
            let document = try? JSONStyle.decoder().decode(LibraryDocument.self, from: data)
        else { return 0 }
        return document.books.count
    }

    /// Work number `n` committed, `gap` after the one before. Then the test waits (in real time) until the writer,
    /// woken or not by the clock's step, has done what it had to: it sleeps until its next rewrite is due, or it has
    /// just written all `n`. So the clock does not move while it works.
    func commit(_ n: Int, after gap: Duration) async throws {
        clock.advance(by: gap)
        library.add("Book \(n)")
        writer.changed(FilesChange(works: [Int64(n)]))
        try await writerDone(committed: n)
    }

    func writerDone(committed n: Int) async throws {
        try await waitUntil("the writer sleeps until its next rewrite", every: .milliseconds(1)) {
            clock.sleepers == 1 || listed() == n
        }
    }

    @Test("Twenty decisions 10 ms apart: library.json is not written during the burst, then once, 100 ms after it")
    func burstIsWrittenOnceAfterItPauses() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        for n in 1...20 { try await commit(n, after: .milliseconds(10)) }
        clock.advance(by: .milliseconds(99))
        try await writerDone(committed: 20)
        #expect(library.rewrites.isEmpty, "written during the burst or before its pause had passed")
        #expect(listed() == 0)

        clock.advance(by: .milliseconds(1))
        try await waitUntil("library.json lists the burst") { listed() == 20 }
        #expect(library.rewrites.map(\.works) == [20], "one rewrite, of the whole burst")
        #expect(library.rewrites.first?.at == .milliseconds(300), "the last decision at 200 ms, and its 100 ms pause")
    }

    @Test("Changes every 50 ms for 20 s never pause, yet library.json follows each within 6 s, in a few rewrites")
    func steadyChangesAreWrittenWithinTwiceTheSpacing() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        for n in 1...400 { try await commit(n, after: .milliseconds(50)) }
        clock.advance(by: .milliseconds(100)) // the changes pause: the last is written now
        try await waitUntil("library.json lists every change") { listed() == 400 }

        let rewrites = library.rewrites
        #expect((4...6).contains(rewrites.count), "\(rewrites.count) rewrites for 400 changes")
        for n in 1...400 {
            let committed = Duration.milliseconds(50 * n)
            let shown = try #require(rewrites.first { $0.works >= n })
            #expect(shown.at - committed <= .milliseconds(6_050), "change \(n) waited \(shown.at - committed)")
        }
    }
}
