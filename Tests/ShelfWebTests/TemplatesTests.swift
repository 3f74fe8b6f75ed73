import Foundation
import Testing
import ShelfCore
@testable import ShelfWeb

@Suite("Templates")
struct TemplatesTests {
    @Test("A title read off a spine is shown as its characters, never as markup")
    func escapesReadings() throws {
        let templates = try Templates()
        struct Photo {
            let path = "<img src=x onerror=alert(1)>", sha256 = "ab", stage = "done", words = "done", when = ""
        }
        struct Overview { let photos = [Photo()], hasPhotos = true }
        let html = templates.render("overview", ["title": "<b>", "page": Overview()])
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(!html.contains("<img src=x"))
        #expect(html.contains("<title>&lt;b&gt; · shelfd</title>"))
    }
}

@Suite("The photo page's unread spines")
struct UnreadSpinesPageTests {
    /// The page's fields the unread spines use; the rest of the page is left out.
    struct Page {
        let hasResult = true, sha = "ab12", name = "den/IMG_1.jpg", width = 4000, height = 3000
        let unread: [PhotoPages.PhotoView.Unread]
        let unreadSummary: String?
    }

    @Test("Each text that named no book is shown as its crop of the photo and its words, with a box, and none is asked")
    func unreadSpinesShownWithTheirCrops() throws {
        let tall = PhotoPages.PhotoView.unread(
            .init(text: "<b>HH</b>", box: Box(x1: 0.1, y1: 0.2, x2: 0.15, y2: 0.6), confidence: 0.9), width: 4000,
            height: 3000)
        #expect(tall.cropBox == "400 600 200 1200")
        #expect(tall.cropHeight == 160 && tall.cropWidth == 27, "the longer side 160 px, the shape kept")
        let unplaced = PhotoPages.PhotoView.unread(
            .init(text: "99", box: nil, confidence: 0.5), width: 4000, height: 3000)
        let html = try Templates().render(
            "photo",
            ["title": "photo", "page": Page(unread: [tall, unplaced], unreadSummary: "2 spines could not be read")])
        #expect(html.contains("2 spines could not be read"))
        #expect(html.contains(#"<svg class="photo-unread-crop" viewBox="400 600 200 1200" width="27" height="160""#))
        #expect(html.contains(#"<image href="/photos/ab12/image" width="4000" height="3000"/>"#))
        #expect(
            html.components(separatedBy: "class=\"photo-unread-crop\"").count == 2, "a text with no box has no crop")
        #expect(html.contains("«&lt;b&gt;HH&lt;/b&gt;»") && html.contains("«99»"))
        #expect(
            html.contains(
                #"<g class="photo-box photo-box-unread"><title>Not read: «&lt;b&gt;HH&lt;/b&gt;»</title><rect x="10.00" y="20.00" width="5.00" height="40.00""#
            ))
        #expect(!html.contains("review-accept"), "nothing is asked about them")
    }
}
