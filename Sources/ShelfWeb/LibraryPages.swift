import Foundation
import HTTPTypes
import Hummingbird
import ShelfApp
import ShelfConfig
import ShelfCore

/// `/library`: every work, searched, sorted and paged in the database (a page is one LIMIT/OFFSET query, so it
/// stays fast at 10,000 works); `/library/{work}`: one work, with the edit, remove and merge forms, which go
/// through `LibraryDesk` like `shelfd library`; `/exports/{format}`: what `shelfd export` writes, as a download.
enum LibraryPages {
    static let pageSize = 100

    static func register(on router: RouterGroup<WebContext>, fetched: RouterGroup<WebContext>, site: WebSite) {
        router.get("library") { request, context in
            let query = LibraryPages.Fields(request.uri.query ?? "")
            let sort = LibrarySort(rawValue: query["sort"] ?? "") ?? .added
            let search = query["q"] ?? ""
            let page = PageNumber.parse(query["page"])
            let found = try site.desks.library.page(
                search: search, sort: sort, offset: (page - 1) * pageSize, limit: pageSize)
            // A search answers "where is it" too: the shelf, the place on it, and where it stood in its latest photo.
            let whereabouts = search.isEmpty ? [] : try site.desks.shelves.whereabouts(of: found.rows.map(\.work))
            return site.templates.page(
                "library", title: "Library",
                LibraryView(
                    found, search: search, sort: sort, page: page, notice: query["done"],
                    whereabouts: whereabouts), context: context)
        }
        router.get("library/:work") { request, context in
            guard let work = workKey(context) else { return notFound(site, context) }
            let query = LibraryPages.Fields(request.uri.query ?? "")
            return try workPage(site, work, context: context, mergeSearch: query["merge"], notice: query["done"])
        }
        router.post("library/:work/edit") { request, context in
            guard let work = workKey(context) else { return notFound(site, context) }
            let form = try await LibraryPages.Fields(request, context: context)
            let title = form["title"]?.trimmingCharacters(in: .whitespaces)
            let author = form["author"]?.trimmingCharacters(in: .whitespaces)
            let isbnText = form["isbn"]?.trimmingCharacters(in: .whitespaces) ?? ""
            var isbn: ISBN?
            if !isbnText.isEmpty {
                guard let checked = ISBN(isbnText) else {
                    return try workPage(
                        site, work, context: context,
                        error: "“\(isbnText)” is not a valid ISBN: its checksum fails. "
                            + "Check the digits on the book's back.", typed: (title, author, isbnText),
                        status: .unprocessableContent)
                }
                isbn = checked
            }
            if title?.isEmpty ?? false {
                return try workPage(
                    site, work, context: context, error: "The title cannot be empty.", typed: (title, author, isbnText),
                    status: .unprocessableContent)
            }
            // What the form shows and comes back unchanged is left alone, as options not given to `shelfd library edit`.
            let entry = try site.desks.library.entry(work)
            if isbn?.isbn13 == entry?.isbn13 { isbn = nil } // the edition shown, sent back: not a new ISBN
            return try change(site, context, work: work) {
                try site.desks.library.edit(
                    work, title: title == entry?.title ? nil : title,
                    author: author == (entry?.author ?? "") ? nil : author, isbn: isbn)
            }
        }
        router.post("library/:work/remove") { _, context in
            guard let work = workKey(context) else { return notFound(site, context) }
            return try change(site, context, work: work) { try site.desks.library.remove(work) }
        }
        router.post("library/merge") { request, context in
            let form = try await LibraryPages.Fields(request, context: context)
            guard let from = form["from"], let into = form["into"] else { return notFound(site, context) }
            return try change(site, context, work: from) { try site.desks.library.merge(from, into: into) }
        }
        fetched.get("exports/:format") { _, context in
            guard let format = context.parameters.get("format").flatMap(ExportFormat.init(rawValue:)) else {
                return notFound(site, context)
            }
            return try download(site, format)
        }
    }

    /// The work named in the path: its key, percent-encoded (keys hold `/` and `:`).
    private static func workKey(_ context: WebContext) -> String? {
        context.parameters.get("work")?.removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `/library/<key>`, the key percent-encoded so that it is one path segment.
    static func href(_ work: String) -> String {
        "/library/" + encoded(work)
    }

    /// `text` as one segment of a path or a query's value: everything but unreserved characters percent-encoded.
    static func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: pathSafe) ?? "" }

    private static let pathSafe = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    /// Carries out an edit, then sends the browser to the work as it is now (or to the library once it is gone).
    private static func change(
        _ site: WebSite, _ context: WebContext, work: String,
        _ body: () throws -> LibraryChange
    ) throws -> Response {
        do {
            let change = try body()
            let notice = "done=" + encoded(change.detail)
            return redirect(to: (change.work.map(href) ?? "/library") + "?" + notice)
        } catch let error as LibraryError where error.code == .notFound {
            return notFound(site, context)
        } catch let error as LibraryError {
            return try workPage(site, work, context: context, error: error.message, status: .unprocessableContent)
        }
    }

    /// 303: the browser follows with a GET, so reloading the page does not post the form again.
    static func redirect(to location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }

    private static func workPage(
        _ site: WebSite, _ work: String, context: WebContext, mergeSearch: String? = nil,
        notice: String? = nil, error: String? = nil, typed: (String?, String?, String)? = nil,
        status: HTTPResponse.Status = .ok
    ) throws -> Response {
        guard let entry = try site.desks.library.entry(work) else { return notFound(site, context) }
        var merge: MergeView?
        if let mergeSearch, !mergeSearch.trimmingCharacters(in: .whitespaces).isEmpty {
            let found = try site.desks.library.page(
                search: mergeSearch, sort: .title, offset: 0, limit: 20, photoLimit: 0)
            merge = MergeView(
                query: mergeSearch, from: work,
                works: found.rows.filter { $0.work != work }.map { RowView($0) })
        }
        var view = WorkView(entry, merge: merge, notice: notice, error: error)
        if let (title, author, isbn) = typed { // refused: the form keeps what was typed, to correct it
            view.form = WorkView.EditForm(
                title: title ?? view.form.title, author: author ?? view.form.author, isbn: isbn)
        }
        return site.templates.page(
            "work", title: entry.title, view,
            context: context, status: status)
    }

    private static func notFound(_ site: WebSite, _ context: WebContext) -> Response {
        site.templates.page("work", title: "No such work", WorkView.missing, context: context, status: .notFound)
    }

    /// The export as `shelfd export --format` writes it by default, as a file to save.
    private static func download(_ site: WebSite, _ format: ExportFormat) throws -> Response {
        // Made from the database a page of works at a time into a temporary file, then sent from it a chunk at a
        // time: neither the library nor the file is ever whole in memory, however large the library.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-export-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        defer { try? FileManager.default.removeItem(at: file) } // the open handle keeps it readable until sent
        let output = try FileHandle(forWritingTo: file)
        defer { try? output.close() }
        _ = try site.desks.exports.stream(format) { try output.write(contentsOf: $0) }
        let contentLength = Int(try output.offset())
        let input = try FileHandle(forReadingFrom: file)
        var headers = HTTPFields()
        headers[.contentType] =
            switch format.fileExtension {
            case "csv": "text/csv; charset=utf-8"
            case "tsv": "text/tab-separated-values; charset=utf-8"
            default: "application/json"
            }
        headers[.contentDisposition] = "attachment; filename=\"\(format.defaultFileName)\""
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody(contentLength: contentLength) { writer in
                defer { try? input.close() }
                while let chunk = try input.read(upToCount: 64 * 1024), !chunk.isEmpty {
                    try await writer.write(ByteBuffer(bytes: chunk))
                }
                try await writer.finish(nil)
            })
    }

    // MARK: What the templates show

    struct LibraryView {
        let search, sort: String
        let total: Int
        let showing: String
        let rows: [RowView]
        let sorts: [Link]
        let previous, next: String?
        let exports: [Link]
        let notice: String?

        let searching: Bool

        init(
            _ found: LibraryPage, search: String, sort: LibrarySort, page: Int, notice: String?,
            whereabouts: [BookWhereabouts] = []
        ) {
            searching = !whereabouts.isEmpty
            self.search = search
            self.sort = sort.rawValue
            total = found.total
            let first = (page - 1) * LibraryPages.pageSize
            showing =
                !found.rows.isEmpty
                ? "\(first + 1)–\(first + found.rows.count) of \(found.total)"
                : found.total > 0
                    ? "Page \(page) is past the last of \(found.total) books."
                    : search.isEmpty ? "No books yet." : "No book matches “\(search)”."
            let places = Dictionary(whereabouts.map { ($0.work, $0) }, uniquingKeysWith: { first, _ in first })
            rows = found.rows.map { RowView($0, whereabouts: places[$0.work]) }
            func link(sort: LibrarySort, page: Int) -> String {
                var query = ["sort=\(sort.rawValue)"]
                if !search.isEmpty { query.append("q=" + LibraryPages.encoded(search)) }
                if page > 1 { query.append("page=\(page)") }
                return "/library?" + query.joined(separator: "&")
            }
            sorts = LibrarySort.allCases.map {
                Link(label: $0.rawValue, href: link(sort: $0, page: 1), current: $0 == sort)
            }
            previous = page > 1 ? link(sort: sort, page: page - 1) : nil
            next = first + found.rows.count < found.total ? link(sort: sort, page: page + 1) : nil
            exports = ExportFormat.allCases.map {
                Link(label: $0.rawValue, href: "/exports/\($0.rawValue)", current: false)
            }
            self.notice = notice
        }
    }

    struct Link {
        let label, href: String
        let current: Bool
    }

    struct RowView {
        let work, href, title, author, isbn, shelves, state, stateClass: String
        let photos: [Thumb]
        let more: String?
        /// ` — author`, when there is one.
        let byline: String?
        /// Where it is, when the page answers a search: "3rd from the left on den", and where it stood in that photo.
        let place: String?
        let cropURL: String?

        init(_ row: LibraryRow, whereabouts: BookWhereabouts? = nil) {
            place = whereabouts.map { found in
                found.placeInWords + (found.lentTo.map { ", lent to \($0)" } ?? "")
                    + (found.missingSince != nil ? ", missing" : "")
            }
            cropURL = whereabouts?.box == nil ? nil : LibraryPages.href(row.work) + "/crop"
            work = row.work
            href = LibraryPages.href(row.work)
            title = row.title
            author = row.author ?? ""
            isbn = row.isbn13 ?? ""
            shelves = row.shelves.joined(separator: ", ")
            state = row.status == .verified ? "verified" : "to review"
            stateClass = row.status == .verified ? "verified" : "review"
            photos = row.photos.map(Thumb.init)
            more = row.photoCount > row.photos.count ? "+\(row.photoCount - row.photos.count)" : nil
            byline = row.author.map { " — \($0)" }
        }
    }

    struct Thumb {
        let href, src: String
        init(_ sha256: String) { href = "/photos/\(sha256)"; src = "/photos/\(sha256)/thumb" }
    }

    struct WorkView {
        let found: Bool
        let work, href, title, author, isbn: String
        let isbnShown: String?
        let state, stateClass: String
        let match: String?
        let editions: [Edition]
        let sightings: [Sighting]
        let history: [Step]
        let review: String?
        let merge: MergeView?
        let notice, error: String?
        /// The edit form's fields: the work as it is, or what was typed when it was refused.
        var form: EditForm

        struct EditForm { let title, author, isbn: String }
        struct Edition { let isbn13: String; let isbn10: String?; let source: String }
        struct Sighting {
            let href, src, path: String
            let shelf: String?
            let seen, confidence: String
        }
        struct Step {
            let action, by, at: String
            let detail: String?
        }

        init(_ entry: LibraryDocument.Entry, merge: MergeView?, notice: String?, error: String?) {
            found = true
            work = entry.work
            href = LibraryPages.href(entry.work)
            title = entry.title
            author = entry.author ?? ""
            isbn = entry.isbn13 ?? ""
            isbnShown = entry.isbn13
            state = entry.status == .verified ? "verified" : "to review"
            stateClass = entry.status == .verified ? "verified" : "review"
            match = entry.match.map { "\($0.source) \($0.key)" + ($0.year.map { " (\($0))" } ?? "") }
            editions = entry.editions.map { Edition(isbn13: $0.isbn13, isbn10: $0.isbn10, source: $0.source) }
            sightings = entry.sightings.reversed().map {
                Sighting(
                    href: "/photos/\($0.photoSHA256)", src: "/photos/\($0.photoSHA256)/thumb", path: $0.photo,
                    shelf: $0.shelf, seen: WorkView.day($0.seenAt), confidence: String(format: "%.2f", $0.confidence))
            }
            history = entry.history.map {
                Step(
                    action: $0.action.replacingOccurrences(of: "_", with: " "), by: $0.by,
                    at: WorkView.day($0.at), detail: $0.detail)
            }
            review = entry.reviewID.map { "/review/\($0)" }
            self.merge = merge
            self.notice = notice
            self.error = error
            form = EditForm(title: title, author: author, isbn: isbn)
        }

        private init() {
            found = false; work = ""; href = ""; title = ""; author = ""; isbn = ""; isbnShown = nil; state = "";
            stateClass = ""; match = nil
            editions = []; sightings = []; history = []; review = nil; merge = nil; notice = nil; error = nil
            form = EditForm(title: "", author: "", isbn: "")
        }

        static let missing = WorkView()

        /// `2026-11-25 14:03` (UTC).
        static func day(_ date: Date) -> String {
            String(date.ISO8601Format().prefix(16)).replacingOccurrences(of: "T", with: " ")
        }
    }

    struct MergeView {
        let query, from: String
        let works: [RowView]
        let none: Bool

        init(query: String, from: String, works: [RowView]) {
            self.query = query; self.from = from; self.works = works; none = works.isEmpty
        }
    }
}

extension LibraryPages {
    /// The fields of a form or a query string (`a=1&b=x+y`); a repeated field keeps its first value.
    struct Fields {
        private var fields: [String: String] = [:]

        /// Read by hand, not by Hummingbird's decoder, which refuses a repeated field or a stray `%` outright:
        /// a search keeps its first value and its text as typed.
        init(_ encoded: String) {
            for pair in encoded.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                func decode(_ text: Substring) -> String {
                    String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
                }
                guard let name = parts.first else { continue }
                let key = decode(name)
                if fields[key] == nil { fields[key] = parts.count > 1 ? decode(parts[1]) : "" }
            }
        }

        /// A posted `application/x-www-form-urlencoded` body, up to the context's limit for small bodies.
        init(_ request: Request, context: WebContext) async throws {
            let text = String(buffer: try await request.body.collect(upTo: context.maxUploadSize))
            try NULCharacter.refuse(text)
            self.init(text)
        }

        subscript(_ name: String) -> String? { fields[name] }
    }
}
