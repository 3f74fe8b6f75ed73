import Foundation
import HTTPTypes
import Hummingbird
import ShelfApp
import ShelfCore

/// `/shelves`: every shelf and the books lent from any of them; `/shelves/{name}` (the name percent-encoded into one
/// segment, `den%2Ftop`): the shelf's latest photos with the books that arrived boxed, the missing books each with
/// where it last stood and an answer (a key each: lent, gone, still there), the books moved out, and the shelf's books
/// left to right. Answers and closing a round go through `ShelfDesk`, as `shelfd shelf` does.
enum ShelfPages {
    static func register(on router: RouterGroup<WebContext>, fetched: RouterGroup<WebContext>, site: WebSite) {
        router.get("shelves") { request, context in
            let notice = LibraryPages.Fields(request.uri.query ?? "")["done"]
            let view = ListView(
                shelves: try site.desks.shelves.list(), lent: try site.desks.shelves.lent(), notice: notice)
            return site.templates.page("shelves", title: "Shelves", view, context: context)
        }
        router.get("shelves/:name") { request, context in
            guard let name = shelfName(context) else { return notFound(site, context) }
            let notice = LibraryPages.Fields(request.uri.query ?? "")["done"]
            return try shelfPage(site, name, context: context, notice: notice)
        }
        router.post("shelves/:name/answer") { request, context in
            guard let name = shelfName(context) else { return notFound(site, context) }
            let form = try await LibraryPages.Fields(request, context: context)
            guard let work = form["work"], !work.isEmpty else { return notFound(site, context) }
            let answer: ShelfAnswer
            switch form["answer"] {
            case "lent":
                let to = form["lent_to"]?.trimmingCharacters(in: .whitespaces) ?? ""
                guard !to.isEmpty else {
                    return try shelfPage(
                        site, name, context: context, error: "Say who has it: type a name, then lend.",
                        status: .unprocessableContent)
                }
                answer = .lent(to: to)
            case "gone": answer = .gone
            case "here": answer = .here
            default:
                return try shelfPage(
                    site, name, context: context, error: "Answer lent, gone or still there.",
                    status: .unprocessableContent)
            }
            do {
                _ = try site.desks.shelves.answer(work: work, answer)
            } catch let error as LibraryError {
                return try shelfPage(site, name, context: context, error: error.message, status: .unprocessableContent)
            }
            let title = try site.desks.shelves.whereabouts(work)?.title ?? work
            let said =
                switch answer {
                case .lent(let to): "\(title): lent to \(to)."
                case .gone: "\(title): gone from the shelf."
                case .here: "\(title): still there."
                }
            return LibraryPages.redirect(to: href(name) + "?done=" + LibraryPages.encoded(said))
        }
        router.post("shelves/:name/close") { _, context in
            guard let name = shelfName(context) else { return notFound(site, context) }
            let said =
                switch try site.desks.shelves.close(name) {
                case .closed(let changes):
                    "Round closed: \(changes.arrived.count) arrived, \(changes.missing.count) missing, \(changes.movedOut.count) moved out."
                case .waiting(let photos):
                    "The round ends now; it is compared once its \(photos) photo\(photos == 1 ? "" : "s") still queued are read."
                case .nothingOpen: "No round was open."
                }
            return LibraryPages.redirect(to: href(name) + "?done=" + LibraryPages.encoded(said))
        }
        // Where a book last stood: the shelf page's missing books, the library's search.
        fetched.get("library/:work/crop") { request, context in
            guard let work = context.parameters.get("work")?.removingPercentEncoding,
                let found = try site.desks.shelves.whereabouts(work), let box = found.box
            else {
                throw HTTPError(.notFound, message: "No photo shows where this book stood.")
            }
            var headers = HTTPFields()
            headers[.eTag] = "\"\(found.photoSHA256)-\(box.x1)-\(box.y1)-\(box.x2)-\(box.y2)\""
            headers[.cacheControl] = "private, no-cache"
            if request.headers[.ifNoneMatch] == headers[.eTag] {
                return Response(status: .notModified, headers: headers)
            }
            guard
                let jpeg = await site.desks.images.crop(sha256: found.photoSHA256, relativePath: found.photo, box: box)
            else {
                throw HTTPError(.notFound, message: "The photo's file is gone and no copy is kept.")
            }
            headers[.contentType] = "image/jpeg"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
        }
    }

    static func href(_ shelf: String) -> String { "/shelves/" + LibraryPages.encoded(shelf) }

    private static func shelfName(_ context: WebContext) -> String? {
        context.parameters.get("name")?.removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func shelfPage(
        _ site: WebSite, _ name: String, context: WebContext, notice: String? = nil, error: String? = nil,
        status: HTTPResponse.Status = .ok
    ) throws -> Response {
        let shelf: ShelfDocument
        do { shelf = try site.desks.shelves.show(name) } catch let error as LibraryError where error.code == .notFound {
            return notFound(site, context)
        }
        return site.templates.page(
            "shelf", title: "Shelf \(shelf.shelf)", ShelfView(shelf, notice: notice, error: error),
            context: context, status: status)
    }

    private static func notFound(_ site: WebSite, _ context: WebContext) -> Response {
        site.templates.page("shelves", title: "No such shelf", ListView.missing, context: context, status: .notFound)
    }

    // MARK: What the templates show

    /// `2026-11-25 14:03` (UTC).
    static func day(_ date: Date) -> String { LibraryPages.WorkView.day(date) }

    struct ListView {
        struct Line {
            let name, href, books: String
            let last, open: String?
            let missing, lent: Int
        }
        struct Loan {
            let title: String
            let author: String?
            let work, workHref, shelf, shelfHref, to, since: String
        }
        let found: Bool
        let shelves: [Line]
        let none: Bool
        let lent: [Loan]
        let hasLent: Bool
        let notice: String?

        init(shelves: [ShelfSummary], lent: [ShelfLoan], notice: String?) {
            found = true
            self.shelves = shelves.map { shelf in
                Line(
                    name: shelf.shelf, href: ShelfPages.href(shelf.shelf),
                    books: shelf.books.map { "\($0) book\($0 == 1 ? "" : "s")" } ?? "no round closed yet",
                    last: shelf.lastRound.map { "last round \(ShelfPages.day($0.closedAt ?? $0.lastPhotoAt))" },
                    open: shelf.openRound.map { "round open since \(ShelfPages.day($0.openedAt))" },
                    missing: shelf.missing, lent: shelf.lent)
            }
            none = shelves.isEmpty
            self.lent = lent.map { loan in
                Loan(
                    title: loan.title, author: loan.author, work: loan.work, workHref: LibraryPages.href(loan.work),
                    shelf: loan.shelf, shelfHref: ShelfPages.href(loan.shelf), to: loan.to,
                    since: ShelfPages.day(loan.since))
            }
            hasLent = !self.lent.isEmpty
            self.notice = notice
        }

        private init() { found = false; shelves = []; none = true; lent = []; hasLent = false; notice = nil }
        static let missing = ListView()
    }

    struct ShelfView {
        struct Book {
            let position: Int
            let title: String
            let author: String?
            let work, href, seen: String
            let missing, lent: String?
        }
        struct Change {
            let title: String
            let author: String?
            let work, href, cropURL: String
            let other: String?
        }
        struct Photo {
            struct Box { let title, x, y, w, h: String }
            let sha, path: String
            let boxes: [Box]
        }
        let name, closeURL, answerURL, count: String
        let round, open: String?
        let photos: [Photo]
        let hasPhotos: Bool
        let arrived, missing, movedOut: [Change]
        let hasArrived: Bool, hasMissing: Bool, hasMovedOut: Bool, unchanged: Bool
        let books: [Book]
        let notice, error: String?

        init(_ shelf: ShelfDocument, notice: String?, error: String?) {
            name = shelf.shelf
            closeURL = ShelfPages.href(shelf.shelf) + "/close"
            answerURL = ShelfPages.href(shelf.shelf) + "/answer"
            count = "\(shelf.books.count) book\(shelf.books.count == 1 ? "" : "s"), left to right"
            round = shelf.lastRound.map { round in
                "Last round \(ShelfPages.day(round.openedAt)), \(round.photos) photo\(round.photos == 1 ? "" : "s")"
                    + (round.unread > 0 ? "; \(round.unread) could not be read, so nothing is called missing" : "")
            }
            open = shelf.openRound.map {
                "A round is open since \(ShelfPages.day($0.openedAt)) (\($0.photos) photo\($0.photos == 1 ? "" : "s"))."
            }
            func change(_ change: ShelfDocument.Change, other: String?) -> Change {
                Change(
                    title: change.title, author: change.author, work: change.work, href: LibraryPages.href(change.work),
                    cropURL: LibraryPages.href(change.work) + "/crop", other: other)
            }
            arrived = shelf.changes.arrived.map { change($0, other: $0.from.map { "from \($0)" } ?? "new") }
            missing = shelf.changes.missing.map { change($0, other: nil) }
            movedOut = shelf.changes.movedOut.map { change($0, other: $0.to.map { "to \($0)" }) }
            hasArrived = !arrived.isEmpty; hasMissing = !missing.isEmpty; hasMovedOut = !movedOut.isEmpty
            unchanged = shelf.lastRound != nil && shelf.changes.isEmpty
            books = shelf.books.map { book in
                Book(
                    position: book.position, title: book.title, author: book.author, work: book.work,
                    href: LibraryPages.href(book.work),
                    seen: ShelfPages.day(book.lastSeen),
                    missing: book.missingSince.map { "missing since \(ShelfPages.day($0))" },
                    lent: book.lentTo.map { "lent to \($0)" })
            }
            // The photos of the last round that saw books here, the books that arrived boxed on them.
            let since = shelf.lastRound?.openedAt ?? .distantFuture
            let arrivedWorks = Set(shelf.changes.arrived.map(\.work))
            var photos: [Photo] = []
            for book in shelf.books
            where book.lastSeen >= since && !photos.contains(where: { $0.sha == book.photoSHA256 }) {
                let boxes = shelf.books.filter { $0.photoSHA256 == book.photoSHA256 && arrivedWorks.contains($0.work) }
                    .compactMap { book in
                        book.box.map { box in
                            Photo.Box(
                                title: book.title, x: Self.percent(box.x1), y: Self.percent(box.y1),
                                w: Self.percent(box.x2 - box.x1), h: Self.percent(box.y2 - box.y1))
                        }
                    }
                photos.append(Photo(sha: book.photoSHA256, path: book.photo, boxes: boxes))
            }
            self.photos = photos.sorted { $0.path < $1.path }
            hasPhotos = !photos.isEmpty
            self.notice = notice
            self.error = error
        }

        static func percent(_ value: Double) -> String { String(format: "%.2f", value * 100) }
    }
}
