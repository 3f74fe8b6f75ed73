import Foundation
import ShelfDigest
import ShelfApp
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("The web page's picture cache")
struct PictureCacheTests {
    @Test(
        "state/web-cache/ stays within [web] cache_mb: the pictures used longest ago go first, one just shown stays")
    func cacheIsBounded() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["web": ["cache_mb": "2"]])
            let first = JPEGFactory.shelf(width: 1600, height: 1200, seed: 95),
                second = JPEGFactory.shelf(width: 1600, height: 1200, seed: 96)
            try shelf.drop(first, as: "den/IMG_95.jpg")
            try shelf.drop(second, as: "den/IMG_96.jpg")
            // Pictures an earlier server kept: nearly the whole bound, the larger one the oldest.
            let cache = shelf.state.appendingPathComponent("web-cache")
            try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
            func keep(_ name: String, bytes: Int, hoursAgo: Double) throws {
                let url = cache.appendingPathComponent(name)
                try Data(count: bytes).write(to: url)
                try FileManager.default.setAttributes(
                    [.modificationDate: Date().addingTimeInterval(-hoursAgo * 3600)],
                    ofItemAtPath: url.path)
            }
            try keep("\(String(repeating: "a", count: 64))-image.jpg", bytes: 1_400_000, hoursAgo: 4)
            try keep("\(String(repeating: "b", count: 64))-image.jpg", bytes: 600_000, hoursAgo: 1)

            let site = try InProcessSite(shelf)
            try await site.run()
            let firstThumb = "/photos/\(SHA256.hex(of: first))/thumb"
            let thumbFile = cache.appendingPathComponent("\(SHA256.hex(of: first))-thumb.jpg")
            try await site.web { http in
                #expect(try await http.send("GET", firstThumb).status == 200)
                #expect(FileManager.default.fileExists(atPath: thumbFile.path))
                // Made long ago, shown again now: used recently.
                try FileManager.default.setAttributes(
                    [.modificationDate: Date().addingTimeInterval(-5 * 3600)], ofItemAtPath: thumbFile.path)
                #expect(try await http.send("GET", firstThumb).status == 200)
                // A new picture takes the cache past 2 MB.
                #expect(try await http.send("GET", "/photos/\(SHA256.hex(of: second))/image").status == 200)
            }

            let left = try FileManager.default.contentsOfDirectory(atPath: cache.path)
            let total = try left.reduce(0) { sum, name in
                sum
                    + ((try FileManager.default.attributesOfItem(atPath: cache.appendingPathComponent(name).path)[.size]
                        as? Int) ?? 0)
            }
            print("web cache: \(left.count) pictures, \(total) bytes after pruning to 2 MiB")
            #expect(total <= 2 * 1_048_576)
            #expect(!left.contains { $0.hasPrefix("aaaa") }, "the picture used longest ago went first")
            #expect(left.contains { $0.hasPrefix("bbbb") }, "a newer one stayed")
            #expect(left.contains("\(SHA256.hex(of: first))-thumb.jpg"), "the one just shown stayed")
            #expect(left.contains("\(SHA256.hex(of: second))-image.jpg"))
        }
    }
}
