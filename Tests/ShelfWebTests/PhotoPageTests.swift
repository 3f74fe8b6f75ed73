import Foundation
import ShelfApp
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfTesting
import Testing

extension InProcessSite {
    /// The open review item of the book read as `title`.
    fileprivate func openItem(_ title: String) throws -> String {
        try #require(try desks.review.items().first { $0.book.title == title }?.id)
    }
}

/// The boxes of a photo page, each as its whole element (`<a …>…</a>` or `<g …>…</g>`).
private func boxes(in html: String) -> [String] {
    html.components(separatedBy: "class=\"photo-box photo-box-").dropFirst().map { String($0.prefix { $0 != "\n" }) }
}

@Suite("Photo pages")
struct PhotoPageTests {
    @Test(
        "A photo read through Gemini: /photos shows its thumbnail, its page a box per book coloured by state, linked to its book"
    )
    func photoListAndPage() async throws {
        let tip = GeminiEmulator.Suggestion(
            type: "lighting_issues", severity: "warning",
            message: "Turn a lamp on: the lower shelf is in shadow.")
        try await withGeminiEmulator(.always(.books([dune, blurry, typo, shadow], suggestions: [tip]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(width: 800, height: 600, seed: 900)
            let sha = SHA256.hex(of: photo)
            try root.drop(photo, as: "den/IMG_1.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            // One reading of each state: Dune verified, the smudged spine rejected, "Dnue" edited, Shadow to review.
            _ = try site.desks.review.decide(try site.openItem("Smudged Spine"), .reject)
            _ = try site.desks.review.decide(
                try site.openItem("Dnue"), .edit(title: "Dune Messiah", author: "Frank Herbert", isbn: nil))
            let shadowItem = try site.openItem("Shadow")
            site.desks.flushFiles()
            let library = try root.library()

            try await site.web { http in
                let list = try await http.send("GET", "/photos")
                #expect(list.status == 200)
                #expect(list.body.contains("<h2>den</h2>"))
                #expect(list.body.contains("href=\"/photos/\(sha)\""))
                #expect(list.body.contains("src=\"/photos/\(sha)/thumb\""))

                let thumb = try await http.send("GET", "/photos/\(sha)/thumb")
                #expect(thumb.status == 200)
                #expect(thumb.header("content-type") == "image/jpeg")
                let small = try #require(JPEGFactory.decode(thumb.bytes), "the thumbnail is a JPEG")
                #expect(
                    max(small.width, small.height) == 320 && small.width * 3 == small.height * 4,
                    "\(small.width)×\(small.height)")
                #expect(
                    FileManager.default.fileExists(
                        atPath: root.state.appendingPathComponent("web-cache/\(sha)-thumb.jpg").path),
                    "kept for the next page")
                let etag = try #require(thumb.header("etag"))
                let again = try await http.send("GET", "/photos/\(sha)/thumb", headers: [("If-None-Match", etag)])
                #expect(again.status == 304)
                let image = try await http.send("GET", "/photos/\(sha)/image")
                #expect(image.status == 200)
                let whole = try #require(JPEGFactory.decode(image.bytes))
                #expect(whole.width == 800 && whole.height == 600, "smaller than 1600 px: not enlarged")

                let view = try await http.send("GET", "/photos/\(sha)")
                #expect(view.status == 200)
                #expect(view.body.contains("src=\"/photos/\(sha)/image\""))
                let drawn = boxes(in: view.body)
                #expect(drawn.count == 4, "one box per book read")
                func workLink(_ title: String) throws -> String {
                    workPath(try #require(library.books.first { $0.title == title }?.work))
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
                #expect(
                    byTitle["Dune"]?.contains("<rect x=\"41.00\" y=\"12.00\" width=\"4.00\" height=\"76.00\"") == true)

                #expect(view.body.contains("now: Dune Messiah — Frank Herbert"), "what the edit made of the reading")
                #expect(view.body.contains("Turn a lamp on: the lower shelf is in shadow."), "the tip in words")
                let runs = try #require(view.body.components(separatedBy: "class=\"photo-runs\"").last)
                #expect(runs.contains("<td>gemini (its answer counts)</td>"))
                #expect(runs.range(of: #"<td>\d+ ms</td>"#, options: .regularExpression) != nil, "the run's latency")
                #expect(view.body.contains("name=\"csrf\""))

                // Ids that are not a known photo's hash, or that try to leave the folders, find nothing.
                for path in [
                    "/photos/not-hex", "/photos/..%2f..%2fetc%2fpasswd/image", "/photos/..%2F..%2Fetc%2Fpasswd",
                    "/photos/\(sha.uppercased())/image", "/photos/\(String(repeating: "0", count: 64))/image",
                    "/photos/\(sha.prefix(12))/thumb",
                ] {
                    #expect(try await http.send("GET", path).status == 404, "\(path)")
                }
            }
        }
    }

    @Test("A photo stored sideways (EXIF orientation 6) is served upright, as its boxes are measured")
    func rotatedPhotoServedUpright() async throws {
        try await expectServedUpright(
            JPEGFactory.quadrants(width: 320, height: 200, orientation: 6), as: "IMG_side.jpg")
    }

    @Test(
        "A HEIC photo turned by its irot box is served as an upright JPEG",
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
            let site = try InProcessSite(root)
            try await site.run()
            #expect(try root.resultDocuments().first?.photo.width == 320, "the result measures the upright photo")

            try await site.web { http in
                let response = try await http.send("GET", "/photos/\(sha)/image")
                #expect(response.status == 200)
                #expect(response.header("content-type") == "image/jpeg")
                let image = try #require(JPEGFactory.decode(response.bytes))
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
                let view = try await http.send("GET", "/photos/\(sha)")
                #expect(view.body.contains("width=\"320\" height=\"200\""), "the page lays the photo out upright")
            }
        }
    }

    @Test(
        "A moved original is found under processed/; once deleted, review's copy stands in, and without one the picture is a 404"
    )
    func originalsMovedOrGone() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["pipeline": ["after": "\"move\""]])
            let waiting = JPEGFactory.shelf(seed: 940), done = JPEGFactory.shelf(seed: 941)
            try root.drop(waiting, as: "attic/IMG_5.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            gemini.setScript(.always(.books([dune])))
            try root.drop(done, as: "attic/IMG_6.jpg")
            try await site.run()
            let processed = root.root.appendingPathComponent("processed/attic")
            #expect(FileManager.default.fileExists(atPath: processed.appendingPathComponent("IMG_5.jpg").path), "moved")

            try await site.web { http in
                func picture(_ photo: [UInt8]) async throws -> Int {
                    try await http.send("GET", "/photos/\(SHA256.hex(of: photo))/image").status
                }
                #expect(try await picture(waiting) == 200, "read from processed/")
                try FileManager.default.removeItem(at: processed)
                try FileManager.default.removeItem(at: root.state.appendingPathComponent("web-cache"))
                #expect(try await picture(waiting) == 200, "a book of it waits for review: review/photos/ keeps a copy")
                #expect(try await picture(done) == 404, "gone, and no copy kept")
                #expect(
                    try await http.send("GET", "/photos/\(SHA256.hex(of: done))").status == 200,
                    "its page still shows its books")
            }
        }
    }

    @Test("Read again with another provider: the form queues the photo for Cloudflare, and the next run reads it so")
    func rescanForm() async throws {
        let emma = CloudflareEmulator.Book(
            title: "Emma", author: "Jane Austen", confidence: 0.9, box2D: [100, 100, 900, 150])
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            try await withCloudflareEmulator(.init(licenseAgreed: true, reply: .books([emma]))) { cloudflare in
                let root = try ShelfRoot(geminiURL: gemini.baseURL, cloudflareURL: cloudflare.baseURL)
                let photo = JPEGFactory.shelf(seed: 910)
                let sha = SHA256.hex(of: photo)
                try root.drop(photo, as: "hall/IMG_2.jpg")
                let site = try InProcessSite(root)
                try await site.run()
                #expect(try root.resultDocuments().first?.decidedBy == "gemini")

                try await site.web { http in
                    // As a browser would: the page's session cookie and its form's csrf field go with the POST.
                    let form = try await http.send("GET", "/photos/\(sha)")
                    #expect(form.body.contains("<option value=\"cloudflare\">"))
                    let csrf =
                        form.body.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().first?.prefix {
                            $0 != "\""
                        } ?? ""
                    var headers = [
                        ("Content-Type", "application/x-www-form-urlencoded"), ("Origin", "http://localhost"),
                    ]
                    if let cookie = form.cookiePair { headers.append(("Cookie", cookie)) }
                    let posted = try await http.send(
                        "POST", "/photos/\(sha)/rescan", headers: headers, body: "csrf=\(csrf)&provider=cloudflare")
                    #expect(posted.status == 303)
                    let back = try #require(posted.header("location"))
                    #expect(back == "/photos/\(sha)?rescan=queued-cloudflare")
                    #expect(try await http.send("GET", back).body.contains("Queued again with cloudflare."))

                    #expect(
                        try site.desks.status().queue.pending == 1,
                        "queued again, as 'shelfd rescan --provider cloudflare' does")
                    // A second press while it waits queues nothing more.
                    let twice = try await http.send(
                        "POST", "/photos/\(sha)/rescan", headers: headers, body: "csrf=\(csrf)&provider=ocr")
                    #expect(twice.header("location") == "/photos/\(sha)?rescan=waiting")
                    let unknown = try await http.send(
                        "POST", "/photos/\(sha)/rescan", headers: headers, body: "csrf=\(csrf)&provider=nonsense")
                    #expect(unknown.status == 400)
                }

                // The page processes nothing: the next run takes the job with the provider it asked for.
                try await site.run()
                #expect(cloudflare.requests.filter { !$0.isAgreement }.count == 1)
                #expect(gemini.requests.count == 1)
                #expect(try root.resultDocuments().first?.decidedBy == "cloudflare")
                let after = try site.desks.status()
                #expect(after.queue.pending == 0 && after.queue.done == 2)
                try await site.web { http in
                    let view = try await http.send("GET", "/photos/\(sha)")
                    #expect(view.body.contains("<td>cloudflare (its answer counts)</td>"))
                    #expect(boxes(in: view.body).count == 1)
                }
            }
        }
    }
}
