import Foundation
import ShelfCore
import ShelfDigest
import ShelfStore

/// A store filled through its API as a year of use fills it: photos finished evenly over `days`, in batches
/// of five, each with a saved provider answer and `booksPerPhoto` books drawn from `works` works (one in ten
/// to review). For the benchmarks of the database's size and of the web pages at scale.
package struct YearOfPhotos {
    package var photos = 10_000
    package var booksPerPhoto = 12
    package var works = 3_000
    package var days = 365

    package init(photos: Int = 10_000, booksPerPhoto: Int = 12, works: Int = 3_000, days: Int = 365) {
        self.photos = photos; self.booksPerPhoto = booksPerPhoto; self.works = works; self.days = days
    }

    /// Fills `store` with the photos from `first` (the earlier ones when a run fills in two steps); answers are
    /// written under `responses` (3 KB each, as a provider's are). `upTo`: the photo to stop before, `photos` unless
    /// given.
    package func fill(_ store: Store, responses: URL, from first: Int = 0, upTo end: Int? = nil, now: Date = Date()) throws {
        let answer = Data(repeating: UInt8(ascii: " "), count: 3_072)
        var generator = SystemRandomNumberGenerator()
        var next = first
        let end = min(end ?? photos, photos)
        while next < end {
            let batch = next..<min(end, next + 5)
            // Photo i finished `days` ago for i = 0, now for the last one.
            let at = now.addingTimeInterval(-Double(days) * 86_400 * Double(photos - 1 - next) / Double(max(1, photos - 1)))
            for i in batch {
                let sha = SHA256.hex(of: Array("photo \(i)".utf8))
                _ = try store.recordSighting(path: "/home/me/Shelves/incoming/shelf-\(i % 40)/IMG_\(i).jpg",
                                             relativePath: "shelf-\(i % 40)/IMG_\(i).jpg", sha256: sha, size: 3_500_000,
                                             mtime: at.timeIntervalSince1970, syncConflict: false, provider: "gemini", now: at)
            }
            let jobs = try store.claim(limit: 5, provider: "gemini", owner: "bench", lease: 600, now: at)
            var outcomes: [JobOutcome] = []
            for job in jobs {
                let file = responses.appendingPathComponent("\(job.sha256)-\(job.id)-1-gemini.json")
                try answer.write(to: file)
                try store.recordResponse(jobID: job.id, sha256: job.sha256, provider: "gemini", model: "gemini-2.5-flash",
                                         file: file.path, bytes: answer.count, latencyMs: 28_000, now: at)
                // Every work is seen at least once when there are enough sightings; then at random.
                let books = (0..<booksPerPhoto).map { k in
                    let sighting = (next + jobs.firstIndex { $0.id == job.id }!) * booksPerPhoto + k
                    let work = sighting < works ? sighting : Int.random(in: 0..<works, using: &generator)
                    return Book(title: "Book number \(work) of the shelves", author: "Author \(work % 997) Surname\(work)",
                                isbn13: nil, isbn10: nil, confidence: 0.9, box: Box(x1: 0.1, y1: 0.1, x2: 0.15, y2: 0.9),
                                status: work % 10 == 0 ? .needsReview : .verified, source: "gemini")
                }
                let review = books.contains { $0.status == .needsReview }
                outcomes.append(JobOutcome(job: job, result: .finished(books: books, resultPath: "/home/me/Shelves/results/\(job.relativePath).json",
                                                                       review: review)))
            }
            try store.finish(outcomes, shelfOf: { String($0.relativePath.prefix { $0 != "/" }) }, now: at)
            next = batch.upperBound
        }
    }
}
