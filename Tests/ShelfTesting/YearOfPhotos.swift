import Foundation
import ShelfCore
import ShelfDigest
import ShelfStore

/// A store filled through its API as a year of use fills it: photos finished evenly over `days`, in batches
/// of five, each with a saved provider answer and `booksPerPhoto` books (one in ten to review). The `works` stand
/// on `shelves` shelves, each on one, as books do; photo i is of shelf i mod `shelves` and shows the next
/// `booksPerPhoto` of its books, round the shelf, so every work is seen as often as the others. For the
/// benchmarks of the database's size and of the web pages at scale.
package struct YearOfPhotos {
    package var photos = 10_000
    package var booksPerPhoto = 12
    package var works = 3_000
    package var days = 365
    package var shelves = 40
    /// A shelf's photos are one round while no more than this passes between them: by default the whole year, so
    /// that the year leaves one round a shelf (the benchmarks' own rounds are timed on shelves of their own).
    package var roundQuiet: TimeInterval = .infinity

    package init(photos: Int = 10_000, booksPerPhoto: Int = 12, works: Int = 3_000, days: Int = 365, shelves: Int = 40)
    {
        self.photos = photos; self.booksPerPhoto = booksPerPhoto; self.works = works; self.days = days
        self.shelves = min(shelves, works)
    }

    /// The `k`th book of photo `i`: its shelf's works are s, s + shelves, s + 2 × shelves, …
    func work(photo i: Int, book k: Int) -> Int {
        let shelf = i % shelves
        let onShelf = (works - shelf + shelves - 1) / shelves
        let slot = ((i / shelves) * booksPerPhoto + k) % onShelf
        return shelf + slot * shelves
    }

    /// Fills `store` with the photos from `first` (the earlier ones when a run fills in two steps); answers are
    /// written under `responses` (3 KB each, as a provider's are). `upTo`: the photo to stop before, `photos` unless
    /// given. `committed`: what each batch's commit changed, as the pipeline hands it to the files writer.
    package func fill(
        _ store: Store, responses: URL, from first: Int = 0, upTo end: Int? = nil, now: Date = Date(),
        committed: (FilesChange) -> Void = { _ in }
    ) throws {
        let answer = Data(repeating: UInt8(ascii: " "), count: 3_072)
        var next = first
        let end = min(end ?? photos, photos)
        while next < end {
            let batch = next..<min(end, next + 5)
            // Photo i finished `days` ago for i = 0, now for the last one.
            let at = now.addingTimeInterval(
                -Double(days) * 86_400 * Double(photos - 1 - next) / Double(max(1, photos - 1)))
            for i in batch {
                let sha = SHA256.hex(of: Array("photo \(i)".utf8))
                _ = try store.queue.recordSighting(
                    path: "/home/me/Shelves/incoming/shelf-\(i % shelves)/IMG_\(i).jpg",
                    relativePath: "shelf-\(i % shelves)/IMG_\(i).jpg", sha256: sha, size: 3_500_000,
                    mtime: at.timeIntervalSince1970, syncConflict: false, provider: "gemini",
                    roundQuiet: roundQuiet, now: at)
            }
            let jobs = try store.queue.claim(limit: 5, provider: "gemini", owner: "bench", lease: 600, now: at)
            var outcomes: [JobOutcome] = []
            for job in jobs {
                let file = responses.appendingPathComponent("\(job.sha256)-\(job.id)-1-gemini.json")
                try answer.write(to: file)
                try store.queue.recordResponse(
                    jobID: job.id, sha256: job.sha256, provider: "gemini", model: "gemini-2.5-flash",
                    file: file.path, bytes: answer.count, latencyMs: 28_000, now: at)
                let photo = next + jobs.firstIndex { $0.id == job.id }!
                let books = (0..<booksPerPhoto).map { k in
                    let number = work(photo: photo, book: k)
                    return Book(
                        title: "Book number \(number) of the shelves",
                        author: "Author \(number % 997) Surname\(number)",
                        isbn13: nil, isbn10: nil, confidence: 0.9, box: Box(x1: 0.1, y1: 0.1, x2: 0.15, y2: 0.9),
                        status: (number / shelves) % 10 == 0 ? .needsReview : .verified, source: "gemini")
                }
                let review = books.contains { $0.status == .needsReview }
                outcomes.append(
                    JobOutcome(
                        job: job,
                        result: .finished(
                            books: books, resultPath: "/home/me/Shelves/results/\(job.relativePath).json",
                            review: review)))
            }
            committed(
                try store.queue.finish(outcomes, shelfOf: { String($0.relativePath.prefix { $0 != "/" }) }, now: at))
            next = batch.upperBound
        }
    }

    /// One round of the shelf `shelf`, its own, the same at any size of library: 60 books in three shots of 20, read and
    /// committed; round `number` shows books `number` to `number + 59`, so from one round to the next the book at the
    /// left end is taken away (its place seen: the photos show room beyond the outer books) and one new comes at the
    /// right. The shots arrive a minute apart from `at`. Returns what the commit changed of the files.
    package func shelfRound(_ store: Store, number: Int, shelf: String = "bench-round", at: Date) throws -> FilesChange
    {
        for shot in 0..<3 {
            let name = "\(shelf)/R\(number)-\(shot).jpg"
            _ = try store.queue.recordSighting(
                path: "/home/me/Shelves/incoming/\(name)", relativePath: name,
                sha256: SHA256.hex(of: Array("\(shelf) round \(number) shot \(shot)".utf8)), size: 3_500_000,
                mtime: at.timeIntervalSince1970, provider: "gemini", now: at.addingTimeInterval(Double(shot) * 60))
        }
        let jobs = try store.queue.claim(
            limit: 3, provider: "gemini", owner: "bench", lease: 600, now: at.addingTimeInterval(180))
        let outcomes = jobs.map { job in
            let shot = Int(job.relativePath.split(separator: "-").last?.prefix { $0.isNumber } ?? "0") ?? 0
            let books = (0..<20).map { k in
                let book = number + shot * 20 + k
                let x = 0.1 + 0.8 * Double(k) / 19
                return Book(
                    title: "Round shelf book \(book)", author: "Bench Author \(book)", isbn13: nil, isbn10: nil,
                    confidence: 0.95, box: Box(x1: x - 0.01, y1: 0.1, x2: x + 0.01, y2: 0.9), status: .verified,
                    source: "gemini")
            }
            return JobOutcome(
                job: job,
                result: .finished(
                    books: books, resultPath: "/home/me/Shelves/results/\(job.relativePath).json",
                    review: false))
        }
        return try store.queue.finish(outcomes, shelfOf: { _ in shelf }, now: at.addingTimeInterval(240))
    }

    /// One more photo of shelf 0 whose `spines` readings all wait for a person, as a phone photo read badly leaves
    /// them: every fourth with candidates (library works), the rest scraps no source knows. Returns its sha256.
    package func photoToReview(
        _ store: Store, number: Int, spines: Int = 40, now: Date = Date(),
        committed: (FilesChange) -> Void = { _ in }
    ) throws -> String {
        let sha = SHA256.hex(of: Array("photo to review \(number)".utf8))
        _ = try store.queue.recordSighting(
            path: "/home/me/Shelves/incoming/shelf-0/REVIEW_\(number).jpg",
            relativePath: "shelf-0/REVIEW_\(number).jpg", sha256: sha, size: 3_500_000,
            mtime: now.timeIntervalSince1970, syncConflict: false, provider: "gemini", now: now)
        guard let job = try store.queue.claim(limit: 1, provider: "gemini", owner: "bench", lease: 600, now: now).first
        else {
            throw CancellationError()
        }
        let books = (0..<spines).map { k in
            let x = 0.02 + Double(k) * 0.024
            var book = Book(
                title: "Scrap \(number) \(k) qzv", author: nil, isbn13: nil, isbn10: nil, confidence: 0.2,
                box: Box(x1: x, y1: 0.1, x2: x + 0.02, y2: 0.9), status: .needsReview, source: "gemini")
            book.reviewReasons = ["low_confidence", "no_match"]
            if k % 4 == 0 {
                let work = work(photo: number, book: k)
                book.title = "Book numbr \(work) of the shelves"
                book.candidates = [
                    MatchCandidate(
                        record: CatalogueRecord(
                            source: "catalogue", key: "catalogue:\(work)", title: "Book number \(work) of the shelves",
                            author: "Author \(work % 997) Surname\(work)"), score: 0.7)
                ]
                book.reviewReasons = ["low_confidence", "weak_match"]
            }
            return book
        }
        committed(
            try store.queue.finish(
                [
                    JobOutcome(
                        job: job,
                        result: .finished(
                            books: books, resultPath: "/home/me/Shelves/results/\(sha).json",
                            review: true))
                ],
                shelfOf: { String($0.relativePath.prefix { $0 != "/" }) }, now: now))
        return sha
    }
}
