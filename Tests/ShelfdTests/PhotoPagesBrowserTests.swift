import Foundation
import ShelfCore
import ShelfDigest
import ShelfHTTP
import ShelfTesting
import Testing

private let shadow = GeminiEmulator.Book(title: "Shadow", author: nil, confidence: 0.2, box2D: [100, 700, 900, 720])
private let typo = GeminiEmulator.Book(title: "Dnue", author: "Herbrt", confidence: 0.4, box2D: [120, 300, 880, 340])
private let markup = "<img src=x onerror=alert(1)>"

extension ShelfRoot {
    /// The open review item of the book read as `title`.
    fileprivate func openItem(_ title: String) async throws -> String {
        let list = try await shelfd("review", "list", "--json")
        let items = try JSONStyle.decoder().decode([ReviewDocument].self, from: Data(list.stdout.utf8))
        return try #require(items.first { $0.book.title == title }?.id)
    }
}

/// A GET through the test client, as text.
private func page(_ url: String, _ http: HTTPClient = HTTPClient(maxConcurrent: 2)) async throws -> (
    status: Int, html: String
) {
    let response = try await http.send(HTTPRequest(url: url))
    return (response.status, String(decoding: response.body, as: UTF8.self))
}

/// The boxes of a photo page, each as its whole element (`<a …>…</a>` or `<g …>…</g>`).
private func boxes(in html: String) -> [String] {
    html.components(separatedBy: "class=\"photo-box photo-box-").dropFirst().map { String($0.prefix { $0 != "\n" }) }
}

@Suite("Photo pages", .serialized)
struct PhotoPagesTests {
    @Test(
        "A photo read through Gemini: /photos shows its thumbnail, its page a box per book coloured by state, linked to its book",
        .timeLimit(.minutes(3)))
    func photoListAndPage() async throws {
        let tip = GeminiEmulator.Suggestion(
            type: "lighting_issues", severity: "warning",
            message: "Turn a lamp on: the lower shelf is in shadow.")
        try await withGeminiEmulator(.always(.books([dune, blurry, typo, shadow], suggestions: [tip]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(width: 800, height: 600, seed: 900)
            let sha = SHA256.hex(of: photo)
            try root.drop(photo, as: "den/IMG_1.jpg")
            #expect(try await root.shelfd("run").status == 0)
            // One reading of each state: Dune verified, the smudged spine rejected, "Dnue" edited, Shadow to review.
            #expect(try await root.shelfd("review", "reject", try await root.openItem("Smudged Spine")).status == 0)
            let edit = try await root.shelfd(
                "review", "edit", try await root.openItem("Dnue"), "--title", "Dune Messiah",
                "--author", "Frank Herbert")
            #expect(edit.status == 0, "\(edit.stderr)")
            let shadowItem = try await root.openItem("Shadow")

            let web = try root.startWeb()
            let url = try await root.webURL()
            let http = HTTPClient(maxConcurrent: 2)

            let list = try await page(url + "/photos", http)
            #expect(list.status == 200)
            #expect(list.html.contains("<h2>den</h2>"))
            #expect(list.html.contains("href=\"/photos/\(sha)\""))
            #expect(list.html.contains("src=\"/photos/\(sha)/thumb\""))

            let thumb = try await http.send(HTTPRequest(url: url + "/photos/\(sha)/thumb"))
            #expect(thumb.status == 200)
            #expect(thumb.header("content-type") == "image/jpeg")
            let small = try #require(JPEGFactory.decode(thumb.body), "the thumbnail is a JPEG")
            #expect(
                max(small.width, small.height) == 320 && small.width * 3 == small.height * 4,
                "\(small.width)×\(small.height)")
            #expect(
                FileManager.default.fileExists(
                    atPath: root.state.appendingPathComponent("web-cache/\(sha)-thumb.jpg").path),
                "kept for the next page")
            let etag = try #require(thumb.header("etag"))
            let again = try await http.send(
                HTTPRequest(url: url + "/photos/\(sha)/thumb", headers: [("If-None-Match", etag)]))
            #expect(again.status == 304)
            let image = try await http.send(HTTPRequest(url: url + "/photos/\(sha)/image"))
            #expect(image.status == 200)
            let whole = try #require(JPEGFactory.decode(image.body))
            #expect(whole.width == 800 && whole.height == 600, "smaller than 1600 px: not enlarged")

            let view = try await page(url + "/photos/\(sha)", http)
            #expect(view.status == 200)
            #expect(view.html.contains("src=\"/photos/\(sha)/image\""))
            let drawn = boxes(in: view.html)
            #expect(drawn.count == 4, "one box per book read")
            let library = try root.library()
            func workLink(_ title: String) throws -> String {
                let work = try #require(library.books.first { $0.title == title }?.work)
                return "/library/" + work.addingPercentEncoding(
                    withAllowedCharacters: CharacterSet(
                        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))!
            }
            let byTitle = Dictionary(uniqueKeysWithValues: zip(["Dune", "Smudged Spine", "Dnue", "Shadow"], drawn))
            #expect(byTitle["Dune"]?.hasPrefix("verified\" ") == true)
            #expect(byTitle["Dune"]?.contains("href=\"\(try workLink("Dune"))\"") == true)
            #expect(byTitle["Smudged Spine"]?.hasPrefix("rejected\" ") == true)
            #expect(byTitle["Smudged Spine"]?.contains("href=") == false, "a rejected reading is in no book")
            #expect(byTitle["Dnue"]?.hasPrefix("edited\" ") == true)
            #expect(byTitle["Dnue"]?.contains("href=\"\(try workLink("Dune Messiah"))\"") == true)
            #expect(byTitle["Shadow"]?.hasPrefix("review\" ") == true)
            #expect(byTitle["Shadow"]?.contains("href=\"/review/\(shadowItem)\"") == true)
            // Dune's box: [ymin 120, xmin 410, ymax 880, xmax 450] of 1000, in percent of the upright photo.
            #expect(byTitle["Dune"]?.contains("<rect x=\"41.00\" y=\"12.00\" width=\"4.00\" height=\"76.00\"") == true)

            #expect(view.html.contains("now: Dune Messiah — Frank Herbert"), "what the edit made of the reading")
            #expect(view.html.contains("Turn a lamp on: the lower shelf is in shadow."), "the tip in words")
            let runs = try #require(view.html.components(separatedBy: "class=\"photo-runs\"").last)
            #expect(runs.contains("<td>gemini (its answer counts)</td>"))
            #expect(runs.range(of: #"<td>\d+ ms</td>"#, options: .regularExpression) != nil, "the run's latency")
            #expect(view.html.contains("name=\"csrf\""))

            // Ids that are not a known photo's hash, or that try to leave the folders, find nothing.
            for path in [
                "/photos/not-hex", "/photos/..%2f..%2fetc%2fpasswd/image", "/photos/..%2F..%2Fetc%2Fpasswd",
                "/photos/\(sha.uppercased())/image", "/photos/\(String(repeating: "0", count: 64))/image",
                "/photos/\(sha.prefix(12))/thumb",
            ] {
                #expect(try await http.send(HTTPRequest(url: url + path)).status == 404, "\(path)")
            }
            #expect(try await web.stop() == 0)
        }
    }

    @Test(
        "A photo stored sideways (EXIF orientation 6) is served upright, as its boxes are measured",
        .timeLimit(.minutes(2)))
    func rotatedPhotoServedUpright() async throws {
        try await expectServedUpright(
            JPEGFactory.quadrants(width: 320, height: 200, orientation: 6), as: "IMG_side.jpg")
    }

    @Test(
        "A HEIC photo turned by its irot box is served as an upright JPEG", .timeLimit(.minutes(2)),
        .enabled(if: JPEGFactory.canEncodeHEIC, "this libheif has no HEVC encoder"))
    func heicServedUpright() async throws {
        let (pixels, width, height) = JPEGFactory.quadrantPixels(width: 320, height: 200, orientation: 6)
        let heic = try #require(
            JPEGFactory.heic(rgb: pixels, width: width, height: height, quality: 90, orientation: 6))
        try await expectServedUpright(heic, as: "IMG_side.heic")
    }

    /// `photo` shows red, green, blue and yellow quadrants once upright at 320×200: its picture must show them so.
    private func expectServedUpright(_ photo: [UInt8], as name: String) async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let sha = SHA256.hex(of: photo)
            try root.drop(photo, as: name)
            #expect(try await root.shelfd("run").status == 0)
            #expect(try root.resultDocuments().first?.photo.width == 320, "the result measures the upright photo")

            let web = try root.startWeb()
            let url = try await root.webURL()
            let response = try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(url: url + "/photos/\(sha)/image"))
            #expect(response.status == 200)
            #expect(response.header("content-type") == "image/jpeg")
            let image = try #require(JPEGFactory.decode(response.body))
            #expect(image.width == 320 && image.height == 200)
            func pixel(_ x: Int, _ y: Int) -> [Int] {
                let i = (y * image.width + x) * 3
                return (0..<3).map { Int(image.pixels[i + $0]) }
            }
            func near(_ a: [Int], _ b: [UInt8]) -> Bool { zip(a, b).allSatisfy { abs($0 - Int($1)) < 40 } }
            #expect(near(pixel(20, 20), JPEGFactory.topLeft), "\(pixel(20, 20))")
            #expect(near(pixel(300, 20), JPEGFactory.topRight), "\(pixel(300, 20))")
            #expect(near(pixel(20, 180), JPEGFactory.bottomLeft), "\(pixel(20, 180))")
            #expect(near(pixel(300, 180), JPEGFactory.bottomRight), "\(pixel(300, 180))")
            let view = try await page(url + "/photos/\(sha)")
            #expect(view.html.contains("width=\"320\" height=\"200\""), "the page lays the photo out upright")
            #expect(try await web.stop() == 0)
        }
    }

    @Test(
        "A moved original is found under processed/; once deleted, review's copy stands in, and without one the picture is a 404",
        .timeLimit(.minutes(2)))
    func originalsMovedOrGone() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["pipeline": ["after": "\"move\""]])
            let waiting = JPEGFactory.shelf(seed: 940), done = JPEGFactory.shelf(seed: 941)
            try root.drop(waiting, as: "attic/IMG_5.jpg")
            #expect(try await root.shelfd("run").status == 0)
            gemini.setScript(.always(.books([dune])))
            try root.drop(done, as: "attic/IMG_6.jpg")
            #expect(try await root.shelfd("run").status == 0)
            let processed = root.root.appendingPathComponent("processed/attic")
            #expect(FileManager.default.fileExists(atPath: processed.appendingPathComponent("IMG_5.jpg").path), "moved")

            let web = try root.startWeb()
            let url = try await root.webURL()
            let http = HTTPClient(maxConcurrent: 1)
            func picture(_ photo: [UInt8]) async throws -> Int {
                try await http.send(HTTPRequest(url: url + "/photos/\(SHA256.hex(of: photo))/image")).status
            }
            #expect(try await picture(waiting) == 200, "read from processed/")
            try FileManager.default.removeItem(at: processed)
            try FileManager.default.removeItem(at: root.state.appendingPathComponent("web-cache"))
            #expect(try await picture(waiting) == 200, "a book of it waits for review: review/photos/ keeps a copy")
            #expect(try await picture(done) == 404, "gone, and no copy kept")
            #expect(
                try await page(url + "/photos/\(SHA256.hex(of: done))", http).status == 200,
                "its page still shows its books")
            #expect(try await web.stop() == 0)
        }
    }

    @Test(
        "Read again with another provider: the form queues the photo for Cloudflare, and the next run reads it so",
        .timeLimit(.minutes(3)))
    func rescanForm() async throws {
        let emma = CloudflareEmulator.Book(
            title: "Emma", author: "Jane Austen", confidence: 0.9, box2D: [100, 100, 900, 150])
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            try await withCloudflareEmulator(.init(licenseAgreed: true, reply: .books([emma]))) { cloudflare in
                let root = try ShelfRoot(geminiURL: gemini.baseURL, cloudflareURL: cloudflare.baseURL)
                let photo = JPEGFactory.shelf(seed: 910)
                let sha = SHA256.hex(of: photo)
                try root.drop(photo, as: "hall/IMG_2.jpg")
                #expect(try await root.shelfd("run").status == 0)
                #expect(try root.resultDocuments().first?.decidedBy == "gemini")

                let web = try root.startWeb()
                let url = try await root.webURL()
                let http = HTTPClient(maxConcurrent: 2)
                // As a browser would: the page's session cookie and its form's csrf field go with the POST.
                let form = try await http.send(HTTPRequest(url: url + "/photos/\(sha)"))
                let html = String(decoding: form.body, as: UTF8.self)
                #expect(html.contains("<option value=\"cloudflare\">"))
                let csrf =
                    html.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().first?.prefix { $0 != "\"" }
                    ?? ""
                var headers: [(name: String, value: String)] = [
                    ("Content-Type", "application/x-www-form-urlencoded"), ("Origin", url),
                ]
                if let cookie = form.header("set-cookie")?.split(separator: ";").first {
                    headers.append(("Cookie", String(cookie)))
                }
                let posted = try await http.send(
                    HTTPRequest(
                        method: "POST", url: url + "/photos/\(sha)/rescan", headers: headers,
                        body: Array("csrf=\(csrf)&provider=cloudflare".utf8)))
                #expect(posted.status == 303)
                let back = try #require(posted.header("location"))
                #expect(back == "/photos/\(sha)?rescan=queued-cloudflare")
                #expect(try await page(url + back, http).html.contains("Queued again with cloudflare."))

                let status = try await root.status()
                #expect(status.queue.pending == 1, "queued again, as 'shelfd rescan --provider cloudflare' does")
                // A second press while it waits queues nothing more.
                let twice = try await http.send(
                    HTTPRequest(
                        method: "POST", url: url + "/photos/\(sha)/rescan", headers: headers,
                        body: Array("csrf=\(csrf)&provider=ocr".utf8)))
                #expect(twice.header("location") == "/photos/\(sha)?rescan=waiting")
                let unknown = try await http.send(
                    HTTPRequest(
                        method: "POST", url: url + "/photos/\(sha)/rescan", headers: headers,
                        body: Array("csrf=\(csrf)&provider=nonsense".utf8)))
                #expect(unknown.status == 400)

                // Nothing processes in 'shelfd web' alone: the next run takes the job with the provider it asked for.
                #expect(try await root.shelfd("run").status == 0)
                #expect(cloudflare.requests.filter { !$0.isAgreement }.count == 1)
                #expect(gemini.requests.count == 1)
                #expect(try root.resultDocuments().first?.decidedBy == "cloudflare")
                let after = try await root.status()
                #expect(after.queue.pending == 0 && after.queue.done == 2)
                let view = try await page(url + "/photos/\(sha)", http)
                #expect(view.html.contains("<td>cloudflare (its answer counts)</td>"))
                #expect(boxes(in: view.html).count == 1)
                #expect(try await web.stop() == 0)
            }
        }
    }

    @Test(
        "In a browser: the photo with its boxes over it, inside the picture; a screenshot for docs/photos.md",
        .timeLimit(.minutes(3)))
    func browserShowsBoxes() async throws {
        let tip = GeminiEmulator.Suggestion(
            type: "distance_too_far", severity: "info",
            message: "Step closer: the spines on the right are small.")
        try await withGeminiEmulator(.always(.books([dune, hobbit, blurry, typo, shadow], suggestions: [tip]))) {
            gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(width: 1200, height: 900, seed: 920)
            let sha = SHA256.hex(of: photo)
            try root.drop(photo, as: "living-room/IMG_3.jpg")
            #expect(try await root.shelfd("run").status == 0)
            // Every state on the page (and in docs/photos.md's screenshot): one rejected, one edited, one left to review.
            #expect(try await root.shelfd("review", "reject", try await root.openItem("Smudged Spine")).status == 0)
            #expect(
                try await root.shelfd(
                    "review", "edit", try await root.openItem("Dnue"), "--title", "Dune Messiah",
                    "--author", "Frank Herbert"
                ).status == 0)
            let web = try root.startWeb()
            let url = try await root.webURL()
            try await withBrowser { browser in
                try await browser.navigate(to: url + "/photos")
                let thumb = try await browser.find("a[href='/photos/\(sha)'] img")
                try await browser.waitUntil("the thumbnail to load") { try await thumb.property("complete") == true }
                #expect(try await thumb.property("naturalWidth").int == 320)
                try await browser.screenshot("photos")
                try await thumb.click()

                let image = try await browser.waitForElement(".photo-image")
                try await browser.waitUntil("the photo to load") { try await image.property("complete") == true }
                #expect(try await image.property("naturalWidth").int == 1200)
                let geometry = try await browser.execute(
                    """
                    const image = document.querySelector('.photo-image').getBoundingClientRect();
                    const boxes = [...document.querySelectorAll('.photo-box rect')].map((r) => r.getBoundingClientRect());
                    return { image: [image.left, image.top, image.right, image.bottom],
                             boxes: boxes.map((b) => [b.left, b.top, b.right, b.bottom]) };
                    """)
                let frame = (geometry["image"]?.array ?? []).compactMap { $0.number }
                let rects = (geometry["boxes"]?.array ?? []).map { ($0.array ?? []).compactMap { $0.number } }
                try #require(frame.count == 4, "\(geometry)")
                #expect(rects.count == 5)
                #expect(frame[2] - frame[0] > 300, "the photo is shown large: \(frame)")
                for rect in rects {
                    #expect(
                        rect.count == 4 && rect[0] >= frame[0] - 1 && rect[1] >= frame[1] - 1
                            && rect[2] <= frame[2] + 1 && rect[3] <= frame[3] + 1,
                        "box \(rect) inside the photo \(frame)")
                    #expect(rect[2] - rect[0] > 5 && rect[3] - rect[1] > 100, "a spine-shaped box: \(rect)")
                }
                // Dune's box starts 41% across the photo and 12% down.
                let dune = rects[0]
                #expect(abs((dune[0] - frame[0]) / (frame[2] - frame[0]) - 0.41) < 0.01)
                #expect(abs((dune[1] - frame[1]) / (frame[3] - frame[1]) - 0.12) < 0.01)
                let review = try await browser.find("a.photo-box-review")
                #expect(try await review.attribute("href")?.hasPrefix("/review/") == true)
                #expect(try await browser.findAll("a.photo-box-verified").count == 2)
                #expect(try await browser.findAll("a.photo-box-edited").count == 1)
                #expect(try await browser.findAll("g.photo-box-rejected").count == 1)
                try await browser.screenshot("photo")

                try await browser.setViewport(.phone)
                try await browser.navigate(to: url + "/photos/\(sha)")
                let width = try await browser.pageWidth()
                #expect(!width.overflows, "\(width)")
                try await browser.screenshot("photo-phone")
                try await browser.navigate(to: url + "/photos")
                let listWidth = try await browser.pageWidth()
                #expect(!listWidth.overflows, "the list: \(listWidth)")
            }
            #expect(try await web.stop() == 0)
        }
    }

    @Test("A title that is markup shows its characters on the photo page and runs nothing", .timeLimit(.minutes(3)))
    func markupTitleIsText() async throws {
        let trap = GeminiEmulator.Book(
            title: markup, author: "<b>Nobody</b>", confidence: 0.95, box2D: [100, 200, 900, 260])
        try await withGeminiEmulator(.always(.books([trap]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(seed: 930)
            let sha = SHA256.hex(of: photo)
            try root.drop(photo, as: "IMG_4.jpg")
            #expect(try await root.shelfd("run").status == 0)
            let web = try root.startWeb()
            let url = try await root.webURL()
            let html = try await page(url + "/photos/\(sha)").html
            #expect(!html.contains(markup) && !html.contains("<b>Nobody"))
            #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
            try await withBrowser { browser in
                try await browser.navigate(to: url + "/photos/\(sha)")
                let title = try await browser.waitForElement(".photo-book-title")
                #expect(try await title.text() == markup, "the characters, shown")
                #expect(try await browser.execute("return document.querySelectorAll('.photo-books img').length") == 0)
                #expect(try await browser.alertText() == nil, "no alert opened")
            }
            #expect(try await web.stop() == 0)
        }
    }
}
