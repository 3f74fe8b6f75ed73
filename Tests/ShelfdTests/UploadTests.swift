import Foundation
import ShelfCore
import ShelfDigest
import ShelfHTTP
import ShelfTesting
import Testing

extension ShelfRoot {
    /// Sends one file as the upload script does: the raw body, the shelf and name in the query.
    func upload(_ url: String, _ bytes: [UInt8], shelf: String, name: String) async throws -> (status: Int, text: String) {
        let token = try await page(url, "/upload").text.csrfToken
        let response = try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(
            method: "POST", url: url + "/upload?shelf=\(formEncoded(shelf))&name=\(formEncoded(name))",
            headers: [("Content-Type", "application/octet-stream"), ("X-CSRF-Token", token)], body: bytes,
            timeout: .seconds(120)))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// Every file and folder under incoming/, hidden ones too.
    func incomingContents() -> [String] {
        FileManager.default.enumerator(atPath: incoming.path).map { $0.compactMap { $0 as? String }.sorted() } ?? []
    }
}

@Suite("Uploading photos from the page", .serialized)
struct UploadTests {
    @Test("A 100 MB photo is refused with the limit named, and nothing is written in incoming/", .timeLimit(.minutes(2)))
    func tooLargeIsRefused() async throws {
        let shelf = try ShelfRoot()
        let web = try shelf.startWeb()
        let url = try await shelf.webURL()
        var big = JPEGFactory.shelf(seed: 80)
        big += [UInt8](repeating: 0, count: 100 * 1_048_576 - big.count)
        let refused = try await shelf.upload(url, big, shelf: "den", name: "huge.jpg")
        #expect(refused.status == 413)
        #expect(refused.text.contains("This photo is 100 MB; the limit is 40 MB ([web] max_upload_mb)"), "\(refused.text)")
        #expect(shelf.incomingContents() == [])
        // The server is still there for the next one.
        #expect(try await shelf.upload(url, JPEGFactory.shelf(seed: 81), shelf: "den", name: "IMG_81.jpg").status == 201)
        #expect(try await web.stop() == 0)
    }

    @Test("Anything but a JPEG or HEIC is refused whatever its name; a bad shelf is refused; names are made safe and never reused",
          .timeLimit(.minutes(2)))
    func contentAndNamesAreChecked() async throws {
        let shelf = try ShelfRoot()
        let web = try shelf.startWeb()
        let url = try await shelf.webURL()
        let text = try await shelf.upload(url, Array("just some words, not a photo\n".utf8), shelf: "den", name: "notes.jpg")
        #expect(text.status == 415)
        #expect(text.text.contains("not a photo") && text.text.contains("JPEG or HEIC"), "\(text.text)")
        #expect(shelf.incomingContents() == [])

        for bad in ["../etc", "a/b", ".hidden", "..", "den\u{0}x"] {
            let refused = try await shelf.upload(url, JPEGFactory.shelf(seed: 82), shelf: bad, name: "IMG.jpg")
            #expect(refused.status == 400, "\(bad)")
        }
        #expect(shelf.incomingContents() == [])

        let photo = JPEGFactory.shelf(seed: 83)
        let first = try await shelf.upload(url, photo, shelf: "Living room", name: "../../etc/passwd.JPG")
        #expect(first.status == 201, "\(first.text)")
        let second = try await shelf.upload(url, photo, shelf: "Living room", name: "passwd.jpg")
        #expect(second.status == 201, "\(second.text)")
        let odd = try await shelf.upload(url, photo, shelf: "", name: "<script>.exe")
        #expect(odd.status == 201, "\(odd.text)")
        #expect(shelf.incomingContents() == ["Living room", "Living room/passwd-2.jpg", "Living room/passwd.jpg", "script.jpg"])
        let landed = try Data(contentsOf: shelf.incoming.appendingPathComponent("Living room/passwd.jpg"))
        #expect(SHA256.hex(of: Array(landed)) == SHA256.hex(of: photo))
        #expect(try await web.stop() == 0)
    }
}

@Suite("Upload and library in a browser", .serialized)
struct UploadBrowserTests {
    @Test("A photo picked in the file input reaches incoming/, is read by the daemon and appears in the library page",
          .timeLimit(.minutes(3)))
    func uploadThroughTheFileInput() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit, blurry]))) { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
            let daemon = try shelf.startDaemon()
            let url = try await shelf.webURL()
            try await withTemporaryDirectory { folder in
                let photo = folder.appendingPathComponent("IMG_2041.jpg")
                try Data(JPEGFactory.shelf(seed: 90)).write(to: photo)
                try await withBrowser(viewport: .phone) { browser in
                    try await browser.navigate(to: url + "/upload")
                    try await browser.find("[data-upload-shelf]").sendKeys("Hall")
                    try await browser.find("[data-upload-files]").upload(photo)
                    try await browser.waitUntil("the page to say the photo was added") {
                        try await browser.findAll(".upload-list li[data-state=done]").count == 1
                    }
                    #expect(try await browser.find(".upload-result").text().contains("Hall/IMG_2041.jpg"))
                    #expect(try await !browser.pageWidth().overflows)
                    try await browser.screenshot("upload")
                    #expect(FileManager.default.fileExists(atPath: shelf.incoming.appendingPathComponent("Hall/IMG_2041.jpg").path))

                    try await waitUntil("the daemon to catalogue the photo", timeout: .seconds(60)) {
                        (try? shelf.library().books.contains { $0.title == "Dune" }) == true
                    }
                    try await browser.setViewport(.desktop)
                    try await browser.navigate(to: url + "/library?sort=title")
                    let titles = try await browser.findAll("table.library td.title a")
                    var shown: [String] = []
                    for title in titles { shown.append(try await title.text()) }
                    #expect(shown == ["Dune", "Smudged Spine", "The Hobbit"])
                    #expect(try await browser.find("tr[data-work] td.shelves").text() == "Hall")
                    try await browser.screenshot("library")

                    try await titles[0].click()
                    _ = try await browser.waitForElement("form.work-edit")
                    #expect(try await browser.find("h1").text() == "Dune")
                    try await browser.screenshot("library-work")

                    // On a phone the rows become cards: nothing wider than the screen.
                    try await browser.setViewport(.phone)
                    for path in ["/library", "/library?q=dune"] {
                        try await browser.navigate(to: url + path)
                        #expect(try await !browser.pageWidth().overflows, "\(path)")
                    }
                    try await browser.screenshot("library-phone")
                    try await browser.find("table.library td.title a").click()
                    _ = try await browser.waitForElement("form.work-edit")
                    #expect(try await !browser.pageWidth().overflows)
                }
            }
            #expect(try await daemon.stop() == 0)
        }
    }
}
