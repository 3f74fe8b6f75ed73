import Foundation
import ShelfApp
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Many works in one photo: 130 spines read with confidence, plus Dune with its ISBN.
private let manyBooks =
    (1...130).map { n in
        GeminiEmulator.Book(
            title: String(format: "Volume %03d", n), author: "Writer \(n)", confidence: 0.9,
            box2D: [100, (n * 7) % 990, 900, (n * 7) % 990 + 5])
    } + [dune]

@Suite("The library page")
struct LibraryPageTests {
    @Test("Lists every work a page at a time, finds one by title, author or ISBN, sorts, and downloads exports")
    func listsSearchesAndPages() async throws {
        try await withGeminiEmulator(.always(.books(manyBooks))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(seed: 70)
            try root.drop(photo, as: "den/IMG_70.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            try await site.web { http in
                let first = try await http.send("GET", "/library?sort=title")
                #expect(first.status == 200)
                #expect(first.body.libraryRows == 100)
                #expect(first.body.contains("1–100 of 131"))
                #expect(first.body.contains("Volume 001") && !first.body.contains("Volume 100")) // Dune among them
                #expect(first.body.contains("/photos/\(SHA256.hex(of: photo))/thumb"))
                let second = try await http.send("GET", "/library?sort=title&page=2")
                #expect(second.body.libraryRows == 31)
                #expect(second.body.contains("101–131 of 131") && second.body.contains("Volume 130"))

                for search in ["dune", "HERBERT", "9780441172719", "0441172717", "978-0-441"] {
                    let found = try await http.send("GET", "/library?q=\(formEncoded(search))")
                    #expect(found.body.libraryRows == 1, "\(search)")
                    #expect(found.body.contains(">Dune</a>"), "\(search)")
                }
                #expect(try await http.send("GET", "/library?q=nothing+like+this").body.contains("No book matches"))

                // The newest first by default; by author, "Frank Herbert" comes before "Writer 1".
                let byAuthor = try await http.send("GET", "/library?sort=author")
                let firstRow = try #require(byAuthor.body.range(of: "<tr data-work="))
                #expect(byAuthor.body[firstRow.upperBound...].prefix(400).contains("Dune"))

                site.desks.flushFiles()
                let work = try #require(try root.library().books.first { $0.title == "Dune" })
                let page = try await http.send("GET", workPath(work.work))
                #expect(page.status == 200)
                #expect(page.body.contains("9780441172719") && page.body.contains("den/IMG_70.jpg"))
                #expect(try await http.send("GET", "/library/no-such-work").status == 404)

                let export = try await http.send("GET", "/exports/goodreads")
                #expect(export.status == 200)
                #expect(export.header("content-disposition") == "attachment; filename=\"goodreads.csv\"")
                #expect(export.body.contains("Dune") && export.body.contains("Volume 042"))
                #expect(try await http.send("GET", "/exports/../../etc/passwd").status == 404)
                #expect(try await http.send("GET", "/exports/pdf").status == 404)

                // A title that reads as markup is shown as its characters, in the list and on its page.
                let volume = try #require(try root.library().books.first { $0.title == "Volume 001" }?.work)
                let markup = "<img src=x onerror=alert(1)>"
                let edited = try await http.post(
                    workPath(volume) + "/edit", form: ["title": markup, "author": "Writer 1", "isbn": ""])
                #expect(edited.status == 303, "\(edited.body)")
                site.desks.flushFiles()
                for path in [
                    "/library?q=onerror",
                    workPath(try #require(try root.library().books.first { $0.title == markup }?.work)),
                ] {
                    let shown = try await http.send("GET", path).body
                    #expect(shown.contains("&lt;img src=x onerror=alert(1)&gt;") && !shown.contains(markup), "\(path)")
                }
            }
        }
    }
}
