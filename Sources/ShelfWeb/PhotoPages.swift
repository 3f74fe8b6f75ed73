import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ShelfApp
import ShelfConfig
import ShelfCore

/// `/photos`: thumbnails by shelf; `/photos/{sha}`: one photo with a box over each spine read; its pictures
/// (`/image`, `/thumb`); and POST `/photos/{sha}/rescan`, "read again with …" (what `shelfd rescan` does).
/// A photo is named by its SHA-256 only (64 lowercase hex digits); anything else is a 404.
enum PhotoPages {
    static let perPage = 60

    static func register(on router: RouterGroup<WebContext>, fetched: RouterGroup<WebContext>, site: WebSite) {
        let images = site.desks.images
        router.get("/photos") { request, context in
            let page = PageNumber.parse(request.uri.queryParameters.get("page"))
            return site.templates.page(
                "photos", title: "Photos", try PhotoList(site: site, page: page), context: context)
        }
        router.get("/photos/{sha}") { request, context in
            let photo = try known(context, site: site)
            let note = request.uri.queryParameters.get("rescan").flatMap { RescanNote(code: $0, site: site) }
            let view = try PhotoView(photo, site: site, note: note)
            return site.templates.page("photo", title: view.name, view, context: context)
        }
        fetched.get("/photos/{sha}/image") { request, context in
            try await picture(request, context, site: site, images: images, size: .image)
        }
        fetched.get("/photos/{sha}/thumb") { request, context in
            try await picture(request, context, site: site, images: images, size: .thumb)
        }
        router.post("/photos/{sha}/rescan") { request, context in
            let photo = try known(context, site: site)
            var request = request
            let choice = try await request.form(RescanForm.self, context: context)?.provider ?? ""
            guard choice.isEmpty || providers.contains(where: { $0.rawValue == choice }) else {
                throw HTTPError(.badRequest, message: "Unknown provider; choose one of the list.")
            }
            let outcome = try site.desks.queue.rescan(
                sha256: photo.sha256, providerChoice: choice.isEmpty ? nil : choice)
            site.logger.notice(
                "Photo queued to be read again",
                metadata: [
                    "event": "web_rescan", "photo.sha256": "\(photo.sha256.prefix(12))",
                    "provider": "\(choice.isEmpty ? "configured" : choice)",
                ])
            let code =
                switch outcome {
                case .queued: choice.isEmpty ? "queued" : "queued-\(choice)"
                case .alreadyQueued: "waiting"
                }
            return Response.redirect(to: "/photos/\(photo.sha256)?rescan=\(code)", type: .normal)
        }
    }

    /// The providers a photo can be read again with (`auto` is not one: it names the configured provider).
    static let providers = Configuration.Provider.allCases.filter { $0 != .auto }

    struct RescanForm: Decodable {
        var provider: String?
    }

    /// The photo the path names, or a 404: a well-formed hash shelfd knows.
    static func known(_ context: WebContext, site: WebSite) throws -> PhotoSummary {
        guard let sha = context.parameters.get("sha"), isPhotoID(sha),
            let photo = try site.desks.photos.summary(sha256: sha)
        else { throw HTTPError(.notFound) }
        return photo
    }

    /// A photo's id as the pages use it: its SHA-256, 64 lowercase hex digits.
    static func isPhotoID(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The upright photo or its thumbnail, as JPEG. Its content follows from the hash, so it is cached for long.
    static func picture(
        _ request: Request, _ context: WebContext, site: WebSite, images: PhotoImages,
        size: PhotoImages.Size
    ) async throws -> Response {
        let photo = try known(context, site: site)
        var headers = HTTPFields()
        headers[.eTag] = "\"\(photo.sha256)-\(size.rawValue)\""
        headers[.cacheControl] = "private, max-age=31536000, immutable"
        if request.headers[.ifNoneMatch] == headers[.eTag] {
            return Response(status: .notModified, headers: headers)
        }
        guard let jpeg = await images.jpeg(sha256: photo.sha256, relativePath: photo.relativePath, size: size) else {
            throw HTTPError(.notFound, message: "The photo's file is gone and no copy is kept.")
        }
        headers[.contentType] = "image/jpeg"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
    }

    /// The sentence shown after "read again with …"; only known codes (nothing from the request is shown).
    struct RescanNote {
        let text: String
        init?(code: String, site: WebSite) {
            let running = site.desks.queue.daemonRuns()
            let when = running ? "The daemon reads it" : "The next 'shelfd run' (or the daemon, once started) reads it"
            if code == "queued" {
                text = "Queued again. \(when) with the configured provider."
            } else if code.hasPrefix("queued-"),
                let provider = providers.first(where: { "queued-\($0.rawValue)" == code })
            {
                text =
                    "Queued again with \(provider.rawValue). \(when)\(running ? " within a minute" : ""); the earlier result is kept under results/.history/."
            } else if code == "waiting" {
                text = "This photo is already waiting to be read; it was not queued twice."
            } else {
                return nil
            }
        }
    }
}

// MARK: - The photo list

extension PhotoPages {
    /// One page of thumbnails, grouped by shelf: the shelf with the newest photo first, each shelf newest first.
    struct PhotoList {
        struct Thumb {
            let sha, name, state, stateClass: String
        }
        struct Shelf {
            let shelf: String
            let photos: [Thumb]
        }
        let shelves: [Shelf]
        let total: Int
        let isEmpty: Bool
        let pageNumber, pages: Int
        let hasPages: Bool
        let previous, next: String?

        init(site: WebSite, page: Int) throws {
            let all = try site.desks.photos.summaries() // newest first
            var order: [String: Int] = [:]
            for photo in all where order[photo.shelf] == nil { order[photo.shelf] = order.count }
            let sorted = all.enumerated().sorted { a, b in
                let x = order[a.element.shelf]!, y = order[b.element.shelf]!
                return x != y ? x < y : a.offset < b.offset
            }.map(\.element)
            total = all.count
            isEmpty = all.isEmpty
            pages = max(1, (all.count + perPage - 1) / perPage)
            pageNumber = min(page, pages)
            hasPages = pages > 1
            previous = pageNumber > 1 ? "/photos?page=\(pageNumber - 1)" : nil
            next = pageNumber < pages ? "/photos?page=\(pageNumber + 1)" : nil
            var shelves: [Shelf] = []
            for photo in sorted.dropFirst((pageNumber - 1) * perPage).prefix(perPage) {
                let state = StateWords(photo.state)
                let thumb = Thumb(
                    sha: photo.sha256, name: (photo.relativePath as NSString).lastPathComponent,
                    state: state.words, stateClass: state.cssClass)
                let name = photo.shelf.isEmpty ? "Top level of incoming/" : photo.shelf
                if shelves.last?.shelf == name {
                    shelves[shelves.count - 1] = Shelf(shelf: name, photos: shelves[shelves.count - 1].photos + [thumb])
                } else {
                    shelves.append(Shelf(shelf: name, photos: [thumb]))
                }
            }
            self.shelves = shelves
        }
    }

    /// A job's state in words and as a CSS class.
    struct StateWords {
        let words, cssClass: String
        init(_ state: JobState?) {
            (words, cssClass) =
                switch state {
                case .pending?: ("waiting", "queued")
                case .leased?: ("being read", "queued")
                case .done?: ("done", "done")
                case .review?: ("to review", "review")
                case .failedRetryable?: ("failed, retried later", "failed")
                case .dead?: ("failed", "failed")
                case nil: ("not queued", "queued")
                }
        }
    }
}

// MARK: - One photo

extension PhotoPages {
    /// A book's state on the photo, as the boxes and the legend show it.
    enum SpineState: String, CaseIterable {
        case verified, review, rejected, edited

        var words: String {
            switch self {
            case .verified: "verified"
            case .review: "to review"
            case .rejected: "rejected"
            case .edited: "edited"
            }
        }
    }

    struct PhotoView {
        struct Spine {
            let number: Int
            let title: String
            let author, isbn: String?
            /// What a person made of the reading, when they edited it.
            let editedTo: String?
            let confidence, stateName, stateWords: String
            let link: String?
            let hasBox: Bool
            // The box in percent of the upright photo (the SVG's 100 × 100 view box).
            let x: String, y: String, w: String, h: String
        }
        /// A text read that names no book (`ResultDocument.UnreadSpine`): its box on the photo, and its crop drawn from
        /// the photo itself (an SVG whose view box is the box, in the photo's pixels).
        struct Unread {
            let text: String
            let hasBox: Bool
            let x: String, y: String, w: String, h: String
            let cropBox: String
            let cropWidth: Int, cropHeight: Int
        }
        struct Tip {
            let severity, message: String
        }
        struct Run {
            let providerName, model, latency, booksRead: String
            let failure: String?
            let decided: Bool
        }
        struct Legend {
            let legendClass, legendWords: String
        }
        struct Choice {
            let value, label: String
        }

        let sha, name, shelfName, state, stateClass: String
        let width, height: Int
        let hasResult: Bool
        let finished, readBy: String?
        let spines: [Spine]
        let hasSpines: Bool
        let unread: [Unread]
        /// "3 spines could not be read", when some could not.
        let unreadSummary: String?
        /// The photo's review page, while some of its spines wait for a person.
        let reviewURL: String?
        let tips: [Tip]
        let hasTips: Bool
        let runs: [Run]
        let legend: [Legend]
        let choices: [Choice]
        let note: String?

        init(_ photo: PhotoSummary, site: WebSite, note: RescanNote?) throws {
            sha = photo.sha256
            name = photo.relativePath
            shelfName = photo.shelf.isEmpty ? "top level of incoming/" : photo.shelf
            let state = StateWords(photo.state)
            self.state = state.words
            stateClass = state.cssClass
            self.note = note?.text
            legend = SpineState.allCases.map { Legend(legendClass: $0.rawValue, legendWords: $0.words) }
            let configured = ProviderChoice.resolve(config: site.config, secrets: site.secrets).provider.rawValue
            choices =
                [Choice(value: "", label: "the configured provider (\(configured))")]
                + providers.map { Choice(value: $0.rawValue, label: $0.rawValue) }

            guard let document = site.desks.results.document(sha256: photo.sha256, resultPath: photo.resultPath) else {
                hasResult = false; width = 0; height = 0; finished = nil; readBy = nil
                spines = []; hasSpines = false; reviewURL = nil; tips = []; hasTips = false; runs = []
                unread = []; unreadSummary = nil
                return
            }
            hasResult = true
            width = document.photo.width
            height = document.photo.height
            finished = Self.format(document.timings.finishedAt)
            readBy = "\(document.decidedBy) (\(document.model))"
            let readings = try site.desks.photos.readings(sha256: photo.sha256)
            spines = document.books.enumerated().map { index, book in
                let (state, link) = Self.state(of: book, readings: readings)
                let box = ReviewPages.BoxView(book.box)
                let edited = state == .edited ? readings.decided[book.titleKey] : nil
                return Spine(
                    number: index + 1, title: book.title, author: book.author, isbn: book.isbn13 ?? book.isbn10,
                    editedTo: edited.map { [$0.title, $0.author].compactMap { $0 }.joined(separator: " — ") },
                    confidence: String(format: "%.2f", book.confidence), stateName: state.rawValue,
                    stateWords: state.words, link: link, hasBox: book.box != nil, x: box.x, y: box.y, w: box.width,
                    h: box.height)
            }
            hasSpines = !spines.isEmpty
            unread = (document.unreadSpines ?? []).map {
                Self.unread($0, width: document.photo.width, height: document.photo.height)
            }
            unreadSummary =
                unread.isEmpty
                ? nil : unread.count == 1 ? "1 spine could not be read" : "\(unread.count) spines could not be read"
            reviewURL =
                spines.contains { $0.stateName == SpineState.review.rawValue } ? "/photos/\(photo.sha256)/review" : nil
            tips = document.suggestions.map { Tip(severity: $0.severity.rawValue, message: $0.message) }
            hasTips = !tips.isEmpty
            runs = document.runs.map { run in
                Run(
                    providerName: run.provider, model: run.model,
                    latency: run.latencyMs.map { "\($0) ms" }
                        ?? (run.response?.replayed == true ? "replayed from disk" : "—"),
                    booksRead: run.books.map(String.init) ?? "—", failure: run.error,
                    decided: run.provider == document.decidedBy)
            }
        }

        /// The longer side of an unread spine's crop on the page, in CSS pixels.
        static let cropSide = 160.0

        static func unread(_ spine: ResultDocument.UnreadSpine, width: Int, height: Int) -> Unread {
            let box = spine.box ?? Box(x1: 0, y1: 0, x2: 0, y2: 0), view = ReviewPages.BoxView(spine.box)
            let (w, h) = ((box.x2 - box.x1) * Double(width), (box.y2 - box.y1) * Double(height))
            let scale = cropSide / max(1, max(w, h))
            return Unread(
                text: spine.text, hasBox: spine.box != nil, x: view.x, y: view.y, w: view.width, h: view.height,
                cropBox: String(format: "%.0f %.0f %.0f %.0f", box.x1 * Double(width), box.y1 * Double(height), w, h),
                cropWidth: max(8, Int((w * scale).rounded())), cropHeight: max(8, Int((h * scale).rounded())))
        }

        /// Verified, to review, rejected or edited, and where the book's page is: its review item while one is
        /// open, else its work in the library (a rejected reading has none).
        static func state(of book: Book, readings: PhotoReadings) -> (SpineState, String?) {
            let work = readings.work(of: book).map(workLink)
            switch readings.decisions[book.titleKey] {
            case "rejected": return (.rejected, nil)
            case "edited": return (.edited, work)
            case "accepted": return (.verified, work)
            default: break
            }
            if let id = book.reviewID, readings.openItems.contains(id) { return (.review, "/review/\(id)") }
            return (book.status == .verified ? .verified : .review, work)
        }

        /// `/library/{work}`, the work's key percent-encoded whole (keys hold `/`, `:` and `|`).
        static func workLink(_ work: String) -> String {
            let unreserved = CharacterSet(
                charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
            return "/library/" + (work.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
        }

        static func format(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
            return formatter.string(from: date)
        }
    }
}
