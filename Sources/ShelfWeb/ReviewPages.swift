import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ShelfApp
import ShelfCore

/// `/review`: the open books one at a time, as `shelfd review` walks them on a terminal: the spine's crop beside
/// the whole photo with its box, the reading and its candidates, and a button (and a key) for each decision.
/// Every decision goes through `ReviewDesk.decide`, the code the command line uses.
enum ReviewPages {
    static func register(on router: RouterGroup<WebContext>, fetched: RouterGroup<WebContext>, site: WebSite) {
        router.get("review") { _, context in
            guard let first = try site.desks.review.firstID() else {
                return site.templates.page("review", title: "Review", ReviewView(), context: context)
            }
            return Response.redirect(to: "/review/\(first)", type: .found)
        }
        router.get("review/:id") { _, context in
            guard let id = validID(context) else { return notFound(site, context) }
            guard let item = try open(id, site) else { return notFound(site, context) }
            return try page(item, site: site, context: context)
        }
        fetched.get("review/:id/crop") { _, context in
            guard let id = validID(context), let item = try open(id, site), let bytes = site.desks.review.cropJPEG(item)
            else {
                return Response(status: .notFound)
            }
            var headers = HTTPFields()
            headers[.contentType] = "image/jpeg"
            headers[.cacheControl] = "private, max-age=3600" // an id names one reading of one photo: its crop stays
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        router.post("review/:id") { request, context in
            guard let id = validID(context) else { return notFound(site, context) }
            var request = request
            let form = try await request.form(DecisionForm.self, context: context) ?? DecisionForm()
            return try decide(id, form, site: site, context: context)
        }
    }

    // MARK: Decisions

    /// What a decision's form sends: `action` is accept | candidate (with `number`) | edit (with `title`,
    /// `author`, `isbn`) | reject | skip. `csrf` is checked by `CSRFMiddleware`, not here.
    struct DecisionForm: Decodable {
        var action: String?
        var number: String?
        var title: String?
        var author: String?
        var isbn: String?
        /// `photo`: the form was on the photo's review page (`PhotoReviewPage`), which the browser goes back to.
        var back: String?
    }

    /// Carries out the decision, then sends the browser on to the next open book (303), or shows the page
    /// again with what is wrong (422), keeping what was typed.
    static func decide(_ id: String, _ form: DecisionForm, site: WebSite, context: WebContext) throws -> Response {
        guard let item = try open(id, site) else { return notFound(site, context) }
        let verdict: ReviewVerdict
        switch form.action {
        case "accept":
            verdict = .accept
        case "reject":
            verdict = .reject
        case "skip":
            return Response.redirect(
                to: form.back == "photo" ? photoReview(item) : try next(after: item, site: site, orSelf: true),
                type: .normal)
        case "candidate":
            guard let number = form.number.flatMap({ Int($0) }), number >= 1,
                item.candidates.indices.contains(number - 1)
            else {
                let problem =
                    item.candidates.isEmpty
                    ? "This book has no candidates: accept it as read, or edit it."
                    : "There is no candidate \(form.number ?? ""): choose one of 1…\(item.candidates.count)."
                return try page(item, site: site, context: context, problem: problem, status: .unprocessableContent)
            }
            verdict = .pick(number)
        case "edit":
            switch edit(form, of: item.book) {
            case .success(let edit):
                verdict = edit
            case .failure(let problem):
                return try page(
                    item, site: site, context: context, problem: problem.message, typed: form,
                    status: .unprocessableContent)
            }
        default:
            return try page(
                item, site: site, context: context,
                problem: "Unknown decision: choose accept, a candidate, edit, reject or skip.", status: .badRequest)
        }
        do {
            let resolution = try site.desks.review.decide(item.id, verdict)
            site.logger.info(
                "Review decision from the web page",
                metadata: ["event": "review_decided", "id": "\(item.id)", "detail": "\(resolution.detail)"])
        } catch let error as ReviewError where error.code == .notFound {
            return notFound(site, context) // decided elsewhere in the meantime
        } catch let error as ReviewError {
            return try page(item, site: site, context: context, problem: error.message, status: .unprocessableContent)
        }
        return Response.redirect(
            to: form.back == "photo" ? photoReview(item) : try next(after: item, site: site, orSelf: false),
            type: .normal)
    }

    /// The review page of the item's photo.
    static func photoReview(_ item: ReviewItem) -> String { "/photos/\(item.photo.sha256)/review" }

    struct EditProblem: Error { var message: String }

    /// The edit form as a verdict. The fields start as the reading: a field left as read changes nothing, an
    /// emptied author removes it, an emptied title or ISBN keeps the one read. An ISBN must pass its checksum.
    static func edit(_ form: DecisionForm, of book: Book) -> Result<ReviewVerdict, EditProblem> {
        let title = (form.title ?? "").trimmingCharacters(in: .whitespaces)
        let author = (form.author ?? "").trimmingCharacters(in: .whitespaces)
        let rawISBN = (form.isbn ?? "").trimmingCharacters(in: .whitespaces)
        var isbn: ISBN?
        if !rawISBN.isEmpty {
            guard let checked = ISBN(rawISBN) else {
                return .failure(
                    EditProblem(
                        message: "“\(rawISBN)” is not a valid ISBN (its checksum fails): check the digits, "
                            + "or empty the field to keep the one read."))
            }
            isbn = checked
        }
        let newTitle = title.isEmpty || title == book.title ? nil : title
        let newAuthor = author == (book.author ?? "") ? nil : author
        let newISBN = isbn?.isbn13 == book.isbn13 ? nil : isbn
        guard newTitle != nil || newAuthor != nil || newISBN != nil else {
            return .failure(
                EditProblem(
                    message: "Nothing changed: change the title, author or ISBN, or accept the reading as it is."))
        }
        return .success(.edit(title: newTitle, author: newAuthor, isbn: newISBN))
    }

    /// Where to go after `item`: the next open book in the queue's order (wrapping around), else the review page
    /// (nothing left). `orSelf`: a skipped book that is the only one open is shown again.
    static func next(after item: ReviewItem, site: WebSite, orSelf: Bool) throws -> String {
        if let next = try site.desks.review.nextID(after: item) { return "/review/\(next)" }
        return orSelf ? "/review/\(item.id)" : "/review"
    }

    // MARK: Pages

    /// A review id as `review list` shows it: lowercase hex. Anything else names no item.
    static func validID(_ context: WebContext) -> String? {
        guard let id = context.parameters.get("id"), (4...64).contains(id.count),
            id.allSatisfy({ $0.isHexDigit && !$0.isUppercase })
        else { return nil }
        return id
    }

    /// The open item `id` names, or nil when there is none (decided, never there, or an ambiguous prefix).
    static func open(_ id: String, _ site: WebSite) throws -> ReviewItem? {
        do {
            return try site.desks.review.item(id)
        } catch is ReviewError {
            return nil
        }
    }

    static func notFound(_ site: WebSite, _ context: WebContext) -> Response {
        site.templates.page("review", title: "Review", ReviewView(gone: true), context: context, status: .notFound)
    }

    static func page(
        _ item: ReviewItem, site: WebSite, context: WebContext, problem: String? = nil, typed: DecisionForm? = nil,
        status: HTTPResponse.Status = .ok
    ) throws -> Response {
        let place = try site.desks.review.place(of: item)
        let view = ItemView(
            item, hasCrop: site.desks.review.hasCrop(item), position: place.position, total: max(place.total, 1),
            previous: place.previous, next: place.next, problem: problem, typed: typed)
        return site.templates.page("review", title: "Review", ReviewView(item: view), context: context, status: status)
    }

    /// What review.mustache shows: one item, or nothing to review, or an item no longer open.
    struct ReviewView {
        var item: ItemView?
        var gone = false
    }

    struct ItemView {
        let id: String
        let position: Int, total: Int
        let previous: String?, next: String?
        let cropURL: String?
        let sha, photoPath: String
        let box: BoxView?
        let title: String
        let author, isbn: String?
        let confidence, source, reasons: String
        /// The spine's own words, when a record's title stands in the title's place.
        let spineText: String?
        let candidates: [CandidateView]
        let hasCandidates: Bool
        let problem: String?
        /// The edit form's fields: the reading, or what was typed when it was refused.
        let editTitle: String, editAuthor: String, editISBN: String
        let editProblem: Bool

        init(
            _ item: ReviewItem, hasCrop: Bool, position: Int, total: Int, previous: String?, next: String?,
            problem: String?, typed: DecisionForm?
        ) {
            let book = item.book
            id = item.id
            self.position = position; self.total = total; self.previous = previous; self.next = next
            cropURL = hasCrop ? "/review/\(item.id)/crop" : nil
            sha = item.photo.sha256
            photoPath = item.photo.path
            box = book.box.map(BoxView.init)
            title = book.title
            author = book.author
            isbn = book.isbn13
            confidence = String(format: "%.2f", book.confidence)
            source = book.source
            reasons = item.reasons.map { $0.replacingOccurrences(of: "_", with: " ") }.joined(separator: ", ")
            spineText = book.spineText
            candidates = item.candidates.enumerated().map { CandidateView(number: $0.offset + 1, $0.element) }
            hasCandidates = !candidates.isEmpty
            self.problem = problem
            editTitle = typed?.title ?? book.title
            editAuthor = typed?.author ?? book.author ?? ""
            editISBN = typed?.isbn ?? book.isbn13 ?? ""
            editProblem = typed != nil
        }
    }

    struct CandidateView {
        let number: Int
        /// 1–9 have a key, as on the terminal.
        let key: String?
        let title, author: String
        let year: Int?
        let isbn: String?
        let score: String
        /// The record's source, or where the library has the work ("in your library, on shelf …").
        let source: String

        init(number: Int, _ candidate: MatchCandidate) {
            let record = candidate.record
            self.number = number
            key = number <= 9 ? String(number) : nil
            title = record.title
            author = record.author ?? "unknown author"
            year = record.year
            isbn = record.isbn13
            score = String(format: "%.2f", candidate.score)
            source = candidate.libraryLabel ?? record.source
        }
    }

    /// The spine's box over the whole photo, in percent of its width and height (an SVG drawn over the image
    /// in a 100×100 view box: no inline style, which the Content-Security-Policy may forbid). Every page that draws a
    /// box over a photo takes its numbers from here.
    struct BoxView {
        let x: String, y: String, width: String, height: String
        /// The photo dimmed outside the box: the whole frame, then the box cut out of it (even-odd).
        let dim: String

        /// `box`, or an empty box at the corner when there is none.
        init(_ box: Box?) {
            let box = box ?? Box(x1: 0, y1: 0, x2: 0, y2: 0)
            x = Self.percent(box.x1); y = Self.percent(box.y1)
            width = Self.percent(box.x2 - box.x1); height = Self.percent(box.y2 - box.y1)
            dim = "M0 0H100V100H0Z M\(x) \(y)V\(Self.percent(box.y2))H\(Self.percent(box.x2))V\(y)Z"
        }

        /// A fraction of the photo in percent, two decimals.
        static func percent(_ value: Double) -> String { String(format: "%.2f", value * 100) }
    }
}
