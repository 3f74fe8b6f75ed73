import Foundation
import ShelfCore
import ShelfStore
import ShelfTesting
import Testing

/// Where a shared store's results are written: at the node that ingested the photo first when it writes files,
/// otherwise by one node with `writes_files = true`.
@Suite(.postgresServer, .serialized)
struct ResultPlacementTests {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Queues a photo seen at `node` (nil: a node that writes no files), reads it, and commits its result document.
    private func finishPhoto(_ sha: String, seenAt node: String?, in store: Store) throws {
        _ = try store.queue.recordSighting(
            path: "/in/\(sha).jpg", relativePath: "\(sha).jpg", sha256: sha, size: 1, mtime: 1,
            syncConflict: false, provider: "gemini", resultNode: node, now: start)
        let job = try #require(
            try store.queue.claim(limit: 1, provider: "gemini", owner: "w", lease: 60, now: start).first)
        try store.queue.finish(
            [
                JobOutcome(
                    job: job, result: .finished(books: [], resultPath: nil, review: false),
                    document: Data(sha.utf8))
            ], shelfOf: { _ in nil }, now: start)
    }

    private func unwritten(_ store: Store, node: String, takingOthers: Bool = false) throws -> [String] {
        try store.results.unwritten(node: node, takingOthers: takingOthers, limit: 100).map(\.sha256)
    }

    @Test(
        "Each result is for the node the photo arrived at; a photo from a node that writes no files is taken by one files node",
        arguments: StoreKind.allCases)
    func placement(kind: StoreKind) throws {
        try StoreSite.with(kind) { site in
            let store = try site.open()
            try finishPhoto("at-a", seenAt: "a", in: store)
            try finishPhoto("at-b", seenAt: "b", in: store)
            try finishPhoto("reader", seenAt: nil, in: store)
            // The same bytes dropped at b later: the photo stays a's.
            _ = try store.queue.recordSighting(
                path: "/b/at-a.jpg", relativePath: "at-a.jpg", sha256: "at-a", size: 1, mtime: 2,
                syncConflict: false, provider: "gemini", resultNode: "b", now: start)

            #expect(try unwritten(store, node: "a") == ["at-a"])
            #expect(try unwritten(store, node: "b") == ["at-b"], "a node on auto writes only its own photos' results")
            #expect(try unwritten(store, node: "c", takingOthers: true) == ["reader"])
            #expect(try unwritten(store, node: "d", takingOthers: true).isEmpty, "taken by one files node only")

            let written = try #require(try store.results.unwritten(node: "a", takingOthers: false, limit: 10).first)
            try store.results.markWritten(jobID: written.jobID, path: "/a/results/at-a.json", now: start)
            #expect(try unwritten(store, node: "a").isEmpty)

            // b stops writing files: its photo's result, and c's taken one, go to a files node.
            try store.results.leave(node: "b")
            try store.results.leave(node: "c")
            #expect(try unwritten(store, node: "b").isEmpty)
            #expect(try Set(unwritten(store, node: "d", takingOthers: true)) == ["at-b", "reader"])
        }
    }
}
