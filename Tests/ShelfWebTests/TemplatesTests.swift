import Testing
@testable import ShelfWeb

@Suite("Templates")
struct TemplatesTests {
    @Test("A title read off a spine is shown as its characters, never as markup")
    func escapesReadings() throws {
        let templates = try Templates()
        struct Counts { let pending = "<img src=x onerror=alert(1)>", inProgress = 0, done = 0, review = 0, failed = 0 }
        let html = templates.render("overview", ["title": "<b>", "page": Counts()])
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(!html.contains("<img src=x"))
        #expect(html.contains("<title>&lt;b&gt; · shelfd</title>"))
    }
}
