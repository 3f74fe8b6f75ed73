import Foundation
import ShelfCore
import ShelfStore

extension PhotoQueue {
    /// Commits `books` as the first reading of the photo `sha256` at `incoming/<shelf>/<sha256>.jpg`, as the
    /// pipeline's batch commit does: a sighting, a claim, one finish. For tests that need a library, not a pipeline.
    package func commitReading(photo sha256: String, shelf: String?, _ books: [Book], at now: Date) throws {
        let relative = (shelf.map { "\($0)/" } ?? "") + "\(sha256).jpg"
        _ = try recordSighting(
            path: "/in/\(relative)", relativePath: relative, sha256: sha256, size: 1, mtime: now.timeIntervalSince1970,
            syncConflict: false, provider: "gemini", now: now)
        guard let job = try claim(limit: 1, provider: "gemini", owner: "test", lease: 60, now: now).first else {
            throw StoreError(code: StoreError.serverCode, message: "the photo \(sha256) was not claimable")
        }
        let outcome = JobOutcome(
            job: job,
            result: .finished(
                books: books, resultPath: "/r/\(sha256).json", review: books.contains { $0.status == .needsReview }))
        try finish([outcome], shelfOf: { _ in shelf }, now: now)
    }
}
