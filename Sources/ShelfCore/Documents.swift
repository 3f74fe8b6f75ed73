import Foundation

/// `results/<name>.json`: what one photo gave (docs/photos.md).
package struct ResultDocument: Codable, Sendable, Equatable {
    package struct Photo: Codable, Sendable, Equatable {
        /// Relative to incoming/.
        package var path: String
        package var sha256: String
        package var bytes: Int
        package var format: String
        /// As displayed (after EXIF orientation).
        package var width: Int
        package var height: Int
        package var orientation: Int
        package init(
            path: String, sha256: String, bytes: Int, format: String, width: Int, height: Int, orientation: Int
        ) {
            self.path = path; self.sha256 = sha256; self.bytes = bytes; self.format = format
            self.width = width; self.height = height; self.orientation = orientation
        }
    }
    package struct Timings: Codable, Sendable, Equatable {
        package var queuedAt: Date?
        package var finishedAt: Date
        /// Provider latency; nil when a saved answer was replayed.
        package var providerMs: Int?
        package var totalMs: Int
        package init(queuedAt: Date?, finishedAt: Date, providerMs: Int?, totalMs: Int) {
            self.queuedAt = queuedAt; self.finishedAt = finishedAt; self.providerMs = providerMs; self.totalMs = totalMs
        }
        enum CodingKeys: String, CodingKey {
            case queuedAt = "queued_at", finishedAt = "finished_at", providerMs = "provider_ms", totalMs = "total_ms"
        }
    }
    package struct Response: Codable, Sendable, Equatable {
        /// The raw answer saved under the state folder, before it was read.
        package var file: String
        package var replayed: Bool
        package init(file: String, replayed: Bool) { self.file = file; self.replayed = replayed }
    }

    /// What was sent to a provider after preprocessing.
    package struct Sent: Codable, Sendable, Equatable {
        package var width: Int
        package var height: Int
        /// JPEG quality of the re-encoded image; nil when the original was sent as it was.
        package var quality: Int?
        package var bytes: Int
        package init(width: Int, height: Int, quality: Int?, bytes: Int) {
            self.width = width; self.height = height; self.quality = quality; self.bytes = bytes
        }
    }
    /// One provider's go at the photo (hybrid has two).
    package struct Run: Codable, Sendable, Equatable {
        package var provider: String
        package var model: String
        /// Books this provider read (before merging).
        package var books: Int?
        package var latencyMs: Int?
        package var response: Response?
        package var sent: Sent?
        /// Why this provider gave no answer.
        package var error: String?
        enum CodingKeys: String, CodingKey {
            case provider, model, books, response, sent, error, latencyMs = "latency_ms"
        }
        package init(
            provider: String, model: String, books: Int?, latencyMs: Int?, response: Response?, sent: Sent?,
            error: String?
        ) {
            self.provider = provider; self.model = model; self.books = books; self.latencyMs = latencyMs
            self.response = response; self.sent = sent; self.error = error
        }
    }

    /// A piece of text read on the photo that names no book a person could decide on: too short to identify
    /// anything ("HH", "99"), one word that is no title ("VINTAGE", "RICHARD"), or a few words nothing matched. It
    /// is kept with its place, shown on the photo's page, and never asked about (docs/reading.md, "What is left
    /// unread").
    package struct UnreadSpine: Codable, Sendable, Equatable {
        package var text: String
        package var box: Box?
        package var confidence: Double
        package init(text: String, box: Box?, confidence: Double) {
            self.text = text; self.box = box; self.confidence = confidence
        }
    }

    package var schema = "shelfd.result/1"
    package var photo: Photo
    package var provider: String
    package var model: String
    package var timings: Timings
    package var books: [Book]
    /// What was read besides the books and could not be read as one; nil when there is none.
    package var unreadSpines: [UnreadSpine]?
    package var suggestions: [Suggestion]
    package var notes: [String]
    /// The deciding provider's saved answer.
    package var response: Response
    /// Every provider asked, in order; `decided_by` names the one whose answer won.
    package var runs: [Run]
    package var decidedBy: String
    /// Blur, exposure, glare and resolution as measured here; nil when the answer was replayed from disk.
    package var signals: QualitySignals?

    enum CodingKeys: String, CodingKey {
        case schema, photo, provider, model, timings, books, suggestions, notes, response, runs, signals,
            decidedBy = "decided_by", unreadSpines = "unread_spines"
    }

    package init(
        photo: Photo, provider: String, model: String, timings: Timings, books: [Book],
        suggestions: [Suggestion], notes: [String], response: Response, runs: [Run], decidedBy: String,
        signals: QualitySignals?, unreadSpines: [UnreadSpine]? = nil
    ) {
        self.photo = photo; self.provider = provider; self.model = model; self.timings = timings
        self.books = books; self.unreadSpines = unreadSpines; self.suggestions = suggestions; self.notes = notes;
        self.response = response
        self.runs = runs; self.decidedBy = decidedBy; self.signals = signals
    }
}

/// `library.json`: one entry per work, with its editions, every sighting and the decisions taken on it.
package struct LibraryDocument: Codable, Sendable, Equatable {
    package struct Entry: Codable, Sendable, Equatable {
        /// The work key: `<source>:<key>` of the matched record, else `title:<normalised title>|<surname>`. A work
        /// keeps the first record it was matched to when another joins it (a shared ISBN), so the key is stable.
        package var work: String
        package var title: String
        package var author: String?
        /// The edition shown and exported: the ISBN seen in most photos (of those, the one seen last); every
        /// one is in `editions`.
        package var isbn13: String?
        package var isbn10: String?
        package var confidence: Double
        package var status: Book.Status
        /// The provider that first read it.
        package var source: String
        package var match: BookMatch?
        package var firstSeen: Date
        /// When the newest sighting was made (`first_seen` when it has none left).
        package var lastSeen: Date
        package var editions: [Edition]
        /// Every shelf (sub-folder of incoming/) it was seen on, sorted.
        package var shelves: [String]
        /// The shelf it stands on now: that of its latest verified sighting, by the photo's arrival (nil when it was
        /// seen at the top of incoming/ only, or said to be gone). The exports write it where each app keeps a place.
        package var shelf: String?
        /// Every sighting, oldest first; in library.json only the latest on each shelf (`bounded()`).
        package var sightings: [Sighting]
        /// How many sightings the work has in all.
        package var sightingsCount: Int
        /// Every step, oldest first; in library.json only the latest `boundedHistory`.
        package var history: [Decision]
        /// How many steps the history has in all.
        package var historyCount: Int
        /// `review/<id>.json` while a person has not yet decided.
        package var reviewID: String?
        /// Set while the work is missing from its shelf: the arrival of the first photo of the round that did not
        /// see it where it stood (docs/library.md, "Shelves").
        package var missingSince: Date?
        /// Set while the work is lent, until a photo sees it again.
        package var lentTo: String?
        enum CodingKeys: String, CodingKey {
            case work, title, author, isbn13, isbn10, confidence, status, source, match, editions, shelves, sightings,
                history, firstSeen = "first_seen", lastSeen = "last_seen", sightingsCount = "sightings_count",
                historyCount = "history_count", reviewID = "review_id", missingSince = "missing_since", lentTo =
                "lent_to", shelf
        }
        package init(
            work: String, title: String, author: String?, isbn13: String?, isbn10: String?, confidence: Double,
            status: Book.Status, source: String, match: BookMatch? = nil, firstSeen: Date, lastSeen: Date? = nil,
            editions: [Edition] = [], shelves: [String] = [], shelf: String? = nil, sightings: [Sighting],
            sightingsCount: Int? = nil,
            history: [Decision] = [], historyCount: Int? = nil, reviewID: String? = nil,
            missingSince: Date? = nil, lentTo: String? = nil
        ) {
            self.shelf = shelf; self.missingSince = missingSince; self.lentTo = lentTo
            self.work = work; self.title = title; self.author = author; self.isbn13 = isbn13; self.isbn10 = isbn10
            self.confidence = confidence; self.status = status; self.source = source; self.match = match
            self.firstSeen = firstSeen; self.editions = editions; self.shelves = shelves; self.sightings = sightings
            self.lastSeen = lastSeen ?? sightings.map(\.seenAt).max() ?? firstSeen
            self.sightingsCount = sightingsCount ?? sightings.count
            self.history = history; self.historyCount = historyCount ?? history.count; self.reviewID = reviewID
        }

        /// The steps library.json keeps of a work's history: the latest, enough for the decisions that matter now.
        package static let boundedHistory = 20

        /// The entry as library.json holds it: its size bounded however often the work is seen. The latest sighting
        /// on each shelf says where the book is now; the counts, first and last seen say how often and since when.
        /// The whole of both stays in the database (`shelfd library show`).
        package func bounded() -> Entry {
            var entry = self
            var latest: [String?: Sighting] = [:]
            for sighting in sightings where latest[sighting.shelf].map({ $0.seenAt <= sighting.seenAt }) ?? true {
                latest[sighting.shelf] = sighting
            }
            entry.sightings = latest.values.sorted { ($0.seenAt, $0.photoSHA256) < ($1.seenAt, $1.photoSHA256) }
            entry.history = Array(history.suffix(Self.boundedHistory))
            return entry
        }
    }
    /// An ISBN the work was seen or matched with.
    package struct Edition: Codable, Sendable, Equatable {
        package var isbn13: String
        package var isbn10: String?
        /// Who gave it: a provider's name (read from the spine) or a source's (`catalogue`, `openlibrary`).
        package var source: String
        package init(isbn13: String, isbn10: String?, source: String) {
            self.isbn13 = isbn13; self.isbn10 = isbn10; self.source = source
        }
    }
    package struct Sighting: Codable, Sendable, Equatable {
        package var photo: String
        package var photoSHA256: String
        package var box: Box?
        package var confidence: Double
        /// The sub-folder of incoming/ the photo came from.
        package var shelf: String?
        package var seenAt: Date
        enum CodingKeys: String, CodingKey {
            case photo, box, confidence, shelf, photoSHA256 = "photo_sha256", seenAt = "seen_at"
        }
        package init(photo: String, photoSHA256: String, box: Box?, confidence: Double, shelf: String?, seenAt: Date) {
            self.photo = photo; self.photoSHA256 = photoSHA256; self.box = box; self.confidence = confidence
            self.shelf = shelf; self.seenAt = seenAt
        }
    }
    /// One step in how the entry came to be what it is.
    package struct Decision: Codable, Sendable, Equatable {
        /// `detected`, `matched`, `needs_review`, `reviewed_by_user`, `merged` (two entries found to be one work).
        package var action: String
        /// A provider's name, a source's, or `user`.
        package var by: String
        package var at: Date
        /// What was decided, in words: `accepted candidate 2`, `edited title`, `rejected`.
        package var detail: String?
        package init(action: String, by: String, at: Date, detail: String? = nil) {
            self.action = action; self.by = by; self.at = at; self.detail = detail
        }
    }

    /// `/2`: a work's sightings and history are bounded (`Entry.bounded()`), with their counts and `last_seen`.
    package var schema = "shelfd.library/2"
    package var generatedAt: Date
    package var books: [Entry]
    enum CodingKeys: String, CodingKey { case schema, books, generatedAt = "generated_at" }
    package init(generatedAt: Date, books: [Entry]) { self.generatedAt = generatedAt; self.books = books }
}

extension LibraryDocument {
    /// The whole document, a page of works at a time, each entry bounded (`Entry.bounded()`): the bytes
    /// `JSONStyle.encoder()` makes of the document, without ever holding more than one page. `pages` calls its
    /// argument once per page, first seen first.
    package static func stream(
        generatedAt: Date, pages: (_ page: ([Entry]) throws -> Void) throws -> Void,
        to append: (Data) throws -> Void
    ) throws {
        let encoder = JSONStyle.encoder()
        try append(Data("{\n  \"books\" : [".utf8))
        var none = true
        // Each page is appended as it is made; `append` is only called while `pages` runs.
        try withoutActuallyEscaping(append) { append in
            try pages { page in
                var chunk: [UInt8] = []
                for entry in page {
                    // The entry as the whole document's encoder nests it: two levels deeper, blank lines left blank.
                    // Byte by byte: a library of works seen on many shelves is hundreds of megabytes of JSON.
                    chunk.append(contentsOf: (none ? "\n" : ",\n").utf8)
                    var lineStart = true
                    for byte in try encoder.encode(entry.bounded()) {
                        if lineStart && byte != UInt8(ascii: "\n") { chunk.append(contentsOf: "    ".utf8) }
                        chunk.append(byte)
                        lineStart = byte == UInt8(ascii: "\n")
                    }
                    none = false
                }
                try append(Data(chunk))
            }
        }
        let date = String(decoding: try encoder.encode(generatedAt), as: UTF8.self)
        let schema = LibraryDocument(generatedAt: generatedAt, books: []).schema
        try append(
            Data("\(none ? "\n" : "")\n  ],\n  \"generated_at\" : \(date),\n  \"schema\" : \"\(schema)\"\n}".utf8))
    }
}

/// `review/<id>.json`: one book a person is asked about (docs/photos.md).
package struct ReviewDocument: Codable, Sendable, Equatable {
    package struct Photo: Codable, Sendable, Hashable {
        /// Relative to incoming/.
        package var path: String
        package var sha256: String
        package init(path: String, sha256: String) { self.path = path; self.sha256 = sha256 }

        /// The shelf the photo belongs to: the sub-folder of incoming/ it came from; nil at the top.
        package var shelf: String? { Self.shelf(of: path) }

        package static func shelf(of relativePath: String) -> String? {
            let folder = (relativePath as NSString).deletingLastPathComponent
            return folder.isEmpty ? nil : folder
        }
    }

    package var schema = "shelfd.review/1"
    package var id: String
    package var photo: Photo
    /// The book as read and checked, with its box; `candidates` and `review_reasons` say why it is here.
    package var book: Book
    package var candidates: [MatchCandidate]
    package var reasons: [String]
    /// `<id>.jpg` beside this file: the spine cut from the upright photo; nil when it could not be cut.
    package var crop: String?
    package var createdAt: Date
    enum CodingKeys: String, CodingKey {
        case schema, id, photo, book, candidates, reasons, crop, createdAt = "created_at"
    }
    package init(
        id: String, photo: Photo, book: Book, candidates: [MatchCandidate], reasons: [String], crop: String?,
        createdAt: Date
    ) {
        self.id = id; self.photo = photo; self.book = book; self.candidates = candidates; self.reasons = reasons
        self.crop = crop; self.createdAt = createdAt
    }
}

/// `shelfd status --json` (docs/commands.md).
package struct StatusDocument: Codable, Sendable, Equatable {
    package struct Daemon: Codable, Sendable, Equatable {
        package var running: Bool
        package var pid: Int32?
        package var since: Date?
        package var watchMode: String?
        enum CodingKeys: String, CodingKey { case running, pid, since, watchMode = "watch_mode" }
        package init(running: Bool, pid: Int32?, since: Date?, watchMode: String?) {
            self.running = running; self.pid = pid; self.since = since; self.watchMode = watchMode
        }
    }
    package struct Queue: Codable, Sendable, Equatable {
        package var pending: Int, leased: Int, done: Int, review: Int, failed: Int, dead: Int
        package var oldestPendingS: Int?
        /// Of `leased`, those held by a process that has stopped (killed, or out of disk): the next start of shelfd
        /// on this store takes them again. Absent when none.
        package var leasedByStopped: Int?
        enum CodingKeys: String, CodingKey {
            case pending, leased, done, review, failed, dead, oldestPendingS = "oldest_pending_s"
            case leasedByStopped = "leased_by_stopped"
        }
        /// `leasedByStopped` in words, for `status` and the overview page.
        package var leasedByStoppedSentence: String? {
            leasedByStopped.map { held in
                "\(held == 1 ? "1 photo in progress is" : "\(held) photos in progress are") held by a process that "
                    + "stopped: the next start of shelfd takes \(held == 1 ? "it" : "them") again."
            }
        }
        package init(pending: Int, leased: Int, done: Int, review: Int, failed: Int, dead: Int, oldestPendingS: Int?) {
            self.pending = pending; self.leased = leased; self.done = done; self.review = review
            self.failed = failed; self.dead = dead; self.oldestPendingS = oldestPendingS
        }
    }
    package struct Latency: Codable, Sendable, Equatable {
        package var p50: Int, p95: Int
        package init(p50: Int, p95: Int) { self.p50 = p50; self.p95 = p95 }
    }
    package struct Provider: Codable, Sendable, Equatable {
        package var name: String
        package var model: String
        /// ok | backoff | paused | unreachable (no connection, DNS, timeout) | unavailable (5xx)
        package var state: String
        package var backoffUntil: Date?
        package var reason: String?
        package var latencyMs: Latency?
        /// Why this provider: "pipeline.provider = auto: …" (absent in documents written before `auto`).
        package var chosenBecause: String?
        /// Unreachable or unavailable: since when, when the next probe goes out, and how many photos wait.
        package var since: Date?
        package var nextTry: Date?
        package var photosWaiting: Int?
        enum CodingKeys: String, CodingKey {
            case name, model, state, reason, backoffUntil = "backoff_until", latencyMs = "latency_ms"
            case chosenBecause = "chosen_because", since, nextTry = "next_try", photosWaiting = "photos_waiting"
        }

        /// Down for an outage: unreachable or unavailable.
        package var isDown: Bool { state == "unreachable" || state == "unavailable" }
        package init(
            name: String, model: String, state: String, backoffUntil: Date?, reason: String?, latencyMs: Latency?,
            chosenBecause: String? = nil
        ) {
            self.name = name; self.model = model; self.state = state; self.backoffUntil = backoffUntil
            self.reason = reason; self.latencyMs = latencyMs; self.chosenBecause = chosenBecause
        }
    }
    package struct Problem: Codable, Sendable, Equatable {
        package var code: String
        /// error | warning
        package var severity: String
        package var message: String
        package var path: String?
        package var job: Int64?
        package init(code: String, severity: String, message: String, path: String? = nil, job: Int64? = nil) {
            self.code = code; self.severity = severity; self.message = message; self.path = path; self.job = job
        }
    }

    /// A recently finished photo and the advice for the next one like it.
    package struct RecentPhoto: Codable, Sendable, Equatable {
        package var photo: String
        package var finishedAt: Date
        package var books: Int
        package var suggestions: [Suggestion]
        enum CodingKeys: String, CodingKey { case photo, books, suggestions, finishedAt = "finished_at" }
        package init(photo: String, finishedAt: Date, books: Int, suggestions: [Suggestion]) {
            self.photo = photo; self.finishedAt = finishedAt; self.books = books; self.suggestions = suggestions
        }
    }

    /// Where the web page is served (by `watch` or `shelfd web`); absent when no server listens.
    package struct Web: Codable, Sendable, Equatable {
        package var url: String
        package init(url: String) { self.url = url }
    }

    package var schema = "shelfd.status/1"
    package var daemon: Daemon
    package var queue: Queue
    /// The configured provider as a whole (for hybrid: whether photos can be processed at all).
    package var provider: Provider
    /// Each provider behind it, with its own backoff (one entry, or hybrid's fast and accurate).
    package var providers: [Provider]
    package var problems: [Problem]
    /// The last few finished photos, newest first, with their suggestions.
    package var recent: [RecentPhoto]
    /// A Gemini Batch API job in flight (`[gemini] mode = "batch"`).
    package struct BatchAPIJob: Codable, Sendable, Equatable {
        /// `batches/{id}`; nil while its submission has no answer.
        package var name: String?
        package var displayName: String
        /// submitting | pending | running (the provider's word).
        package var state: String
        package var photos: Int
        package var ageS: Int
        enum CodingKeys: String, CodingKey { case name, state, photos, displayName = "display_name", ageS = "age_s" }
        package init(name: String?, displayName: String, state: String, photos: Int, ageS: Int) {
            self.name = name; self.displayName = displayName; self.state = state; self.photos = photos; self.ageS = ageS
        }
    }
    /// Batch API jobs in flight, oldest first; absent when there are none. Its key is `batches`, as shelfd.status/1
    /// has always named it.
    package var batchAPIJobs: [BatchAPIJob]?

    /// A `shelfd watch` process on the database: one on a machine of its own, several sharing a PostgreSQL store.
    package struct Worker: Codable, Sendable, Equatable {
        package var host: String
        package var pid: Int32
        package var version: String
        package var since: Date
        package var heartbeat: Date
        /// Photos it holds leased now.
        package var inFlight: Int
        /// It keeps results, library.json, review/ and the exports current.
        package var writesFiles: Bool
        enum CodingKeys: String, CodingKey {
            case host, pid, version, since, heartbeat, inFlight = "in_flight", writesFiles = "writes_files"
        }
        package init(
            host: String, pid: Int32, version: String, since: Date, heartbeat: Date, inFlight: Int, writesFiles: Bool
        ) {
            self.host = host; self.pid = pid; self.version = version; self.since = since; self.heartbeat = heartbeat
            self.inFlight = inFlight; self.writesFiles = writesFiles
        }
    }
    /// Every registered worker, the most recently alive first; absent when none is registered.
    package var workers: [Worker]?

    /// A provider's request limit that every worker takes its turns from (`requests_per_minute`, `requests_per_day`).
    package struct Limit: Codable, Sendable, Equatable {
        package var provider: String
        package var requestsPerMinute: Int
        package var requestsPerDay: Int?
        /// Requests sent in the provider's current day, by every worker.
        package var usedToday: Int
        enum CodingKeys: String, CodingKey {
            case provider, requestsPerMinute = "requests_per_minute", requestsPerDay = "requests_per_day", usedToday =
                "used_today"
        }
        package init(provider: String, requestsPerMinute: Int, requestsPerDay: Int?, usedToday: Int) {
            self.provider = provider; self.requestsPerMinute = requestsPerMinute; self.requestsPerDay = requestsPerDay
            self.usedToday = usedToday
        }
    }
    /// The shared limits of the providers in use; absent when shelfd sets none.
    package var limits: [Limit]?

    /// Added after the schema's first version: older documents lack it, and it is absent while no server listens.
    package var web: Web?

    enum CodingKeys: String, CodingKey {
        case schema, daemon, queue, provider, providers, problems, recent, workers, limits, web
        case batchAPIJobs = "batches"
    }
    package init(
        daemon: Daemon, queue: Queue, provider: Provider, providers: [Provider], problems: [Problem],
        recent: [RecentPhoto] = [], web: Web? = nil
    ) {
        self.daemon = daemon; self.queue = queue; self.provider = provider; self.providers = providers
        self.problems = problems; self.recent = recent; self.web = web
    }

    /// Degraded: something failed, or the provider is not being asked.
    package var isDegraded: Bool {
        queue.dead > 0 || queue.failed > 0 || provider.state != "ok" || problems.contains { $0.severity == "error" }
    }
}

/// The one JSON style of every file and every `--json` output: stable key order, ISO 8601 dates.
package enum JSONStyle {
    package static func encoder(pretty: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    package static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
