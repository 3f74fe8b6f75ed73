import Testing
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
