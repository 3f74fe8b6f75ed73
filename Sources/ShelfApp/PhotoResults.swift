import Foundation
import ShelfCore
import ShelfStore

/// A finished photo's result as every door reads it (`scan` and `rescan`'s table, `/api/v1/results/<sha256>`, the
/// photo page): the document results/ holds, or on a shared store the database's copy (`ResultDocuments.document`).
package struct PhotoResults: Sendable {
    let store: Store

    package init(store: Store) { self.store = store }

    /// The photo's latest job and its result document as written (nil while it has none); nil when the photo has
    /// no job.
    package func latest(sha256: String) throws -> (job: FinishedJob, document: Data?)? {
        guard let job = try store.queue.finishedJob(sha256: sha256) else { return nil }
        return (job, try? store.results.document(sha256: sha256, resultPath: job.resultPath))
    }

    /// What became of a photo a command read: its result, or why it has none.
    package enum Outcome: Sendable {
        case read(ResultDocument)
        /// Not read (yet): its job's error, or its state.
        case unread(reason: String)
        /// shelfd has no job for it.
        case unknown
    }

    /// What became of the photo `sha256`, as `scan` and `rescan` report it.
    package func outcome(sha256: String) throws -> Outcome {
        guard let (job, data) = try latest(sha256: sha256) else { return .unknown }
        guard job.state == .done || job.state == .review, let document = data.flatMap(Self.decode) else {
            return .unread(reason: job.message.map { "\(job.code ?? "failed"): \($0)" } ?? job.state.rawValue)
        }
        return .read(document)
    }

    /// The result document of a photo whose job wrote `resultPath`, read; nil when there is none or it does not read.
    package func document(sha256: String, resultPath: String?) -> ResultDocument? {
        (try? store.results.document(sha256: sha256, resultPath: resultPath)).flatMap(Self.decode)
    }

    /// The newest finished photos' result documents, newest first, with the photo's path under incoming/ (a
    /// document that does not read is left out).
    package func recent(limit: Int) throws -> [(relativePath: String, finishedAt: Date, document: ResultDocument)] {
        try store.results.recent(limit: limit).compactMap { recent in
            Self.decode(recent.document).map { (recent.relativePath, recent.finishedAt, $0) }
        }
    }

    /// A result document's bytes as the document; nil when they are not one.
    package static func decode(_ data: Data) -> ResultDocument? {
        try? JSONStyle.decoder().decode(ResultDocument.self, from: data)
    }
}
