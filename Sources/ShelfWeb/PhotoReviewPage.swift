import Foundation
import Hummingbird
import ShelfApp
import ShelfCore

/// `/photos/{sha}/review`: a photo's open spines on one page. The upright photo with each open spine boxed and
/// numbered, beside the items in the order the spines stand, each with its crop turned to read across, the reading
/// and its first candidates. With the script, keys and taps decide them through `/api/v1` (one `ReviewDesk`, as
/// everywhere) without a reload, and decisions for many at once are shown before they are applied and can be taken
/// back for a minute. Without it, each item's buttons are forms that come back here.
enum PhotoReviewPage {
    static func register(on router: RouterGroup<WebContext>, site: WebSite) {
        router.get("/photos/{sha}/review") { request, context in
            let sha = try PhotoPages.known(context, site: site).sha256
            guard let review = try site.desks.review.photoReview(sha256: sha) else {
                throw HTTPError(.notFound, message: "shelfd has not catalogued any photo yet.")
            }
            let carried = request.uri.queryParameters.get("of", as: Int.self) ?? 0
            let view = PhotoReviewView(review, carried: carried, hasCrop: site.desks.review.hasCrop)
            return site.templates.page("photo-review", title: "Review a photo", view, context: context)
        }
        // The first photo with open items: where the overview's "to review" leads.
        router.get("/review/photo") { _, _ in
            // Decided in the meantime: the review page says what is left.
            guard let first = try site.desks.review.firstID(), let item = try? site.desks.review.item(first) else {
                return Response.redirect(to: "/review", type: .found)
            }
            return Response.redirect(to: "/photos/\(item.photo.sha256)/review", type: .found)
        }
    }

    struct PhotoReviewView {
        struct Item {
            let number: Int
            let id: String
            let cropURL: String?
            let title: String
            let author: String?
            let confidence, reasons: String
            let candidates: [ReviewPages.CandidateView]
            let candidateCount: Int
            let hasBox: Bool
            /// The box and its number's place, in percent of the photo (an SVG without a view box: its percentages
            /// are of the picture as shown, so the numbers keep their shape on any screen).
            let x: String, y: String, w: String, h: String, labelX: String, labelY: String
        }
        struct Other {
            let sha, path: String
            let open: Int
            let ofQuery: String
        }

        let sha, path, shelfName: String
        let left, of, count: Int
        let items: [Item]
        let hasItems: Bool
        let others: [Other]
        let hasOthers: Bool
        let nextURL, nextPath: String?
        let threshold: String

        init(_ review: PhotoReview, carried: Int, hasCrop: (ReviewItem) -> Bool) {
            sha = review.sha256
            path = review.photo?.path ?? ""
            let shelf = review.photo?.shelf
            shelfName = shelf.map { "shelf \($0)" } ?? "the top of incoming/"
            left = review.leftOnShelf
            of = max(left, carried)
            count = review.items.count
            threshold = String(format: "%.2f", ReviewDesk.Bulk.scrapThreshold)
            items = review.items.enumerated().map { index, item in
                let box = item.book.box, view = ReviewPages.BoxView(box)
                let candidates = item.candidates.prefix(9).enumerated().map {
                    ReviewPages.CandidateView(number: $0.offset + 1, $0.element)
                }
                return Item(
                    number: index + 1, id: item.id, cropURL: hasCrop(item) ? "/review/\(item.id)/crop" : nil,
                    title: item.book.title, author: item.book.author,
                    confidence: String(format: "%.2f", item.book.confidence),
                    reasons: item.reasons.map { $0.replacingOccurrences(of: "_", with: " ") }.joined(separator: ", "),
                    candidates: Array(candidates), candidateCount: item.candidates.count,
                    hasBox: box != nil, x: view.x, y: view.y, w: view.width, h: view.height,
                    labelX: ReviewPages.BoxView.percent(((box?.x1 ?? 0) + (box?.x2 ?? 0)) / 2),
                    labelY: ReviewPages.BoxView.percent(min(0.97, (box?.y1 ?? 0) + 0.04)))
            }
            hasItems = !items.isEmpty
            let of = self.of
            func query(_ photo: ReviewDocument.Photo) -> String { photo.shelf == shelf ? "?of=\(of)" : "" }
            others = review.shelfPhotos.filter { $0.photo.sha256 != review.sha256 }
                .map { Other(sha: $0.photo.sha256, path: $0.photo.path, open: $0.open, ofQuery: query($0.photo)) }
            hasOthers = !others.isEmpty
            nextURL = review.next.map { "/photos/\($0.sha256)/review" + query($0) }
            nextPath = review.next?.path
        }
    }
}
