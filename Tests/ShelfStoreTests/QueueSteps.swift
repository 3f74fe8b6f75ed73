import Foundation
import ShelfCore
import Testing
@testable import ShelfStore

/// The steps of a photo's turn that the store's tests take again and again, as one worker of `shelfd watch` takes them.
extension PhotoQueue {
    /// A photo of one byte seen at incoming/`file` (`<sha256>.jpg` unless named), as the watcher records it: a new
    /// content is queued for gemini, one seen before is another sighting.
    @discardableResult
    func queuePhoto(_ sha256: String, at file: String? = nil, mtime: Double = 1, now: Date = Date()) throws
        -> SightingOutcome
    {
        let file = file ?? "\(sha256).jpg"
        return try recordSighting(
            path: "/in/\(file)", relativePath: file, sha256: sha256, size: 1, mtime: mtime, provider: "gemini", now: now
        )
    }

    /// The next due job, claimed by "me" under a minute's lease.
    func claimOne(now: Date = Date(), sourceLocation: SourceLocation = #_sourceLocation) throws -> ClaimedJob {
        try #require(
            try claim(limit: 1, provider: "gemini", owner: "me", lease: 60, now: now).first,
            sourceLocation: sourceLocation)
    }

    /// Finishes `job` as read: `books` on `shelf`, its result in /r/<sha256>.json, for review when a book needs it.
    @discardableResult
    func finishReading(_ job: ClaimedJob, _ books: [Book], shelf: String? = nil, now: Date = Date()) throws
        -> FilesChange
    {
        try finish(
            [
                JobOutcome(
                    job: job,
                    result: .finished(
                        books: books, resultPath: "/r/\(job.sha256).json",
                        review: books.contains { $0.status == .needsReview }))
            ],
            shelfOf: { _ in shelf }, now: now)
    }
}
