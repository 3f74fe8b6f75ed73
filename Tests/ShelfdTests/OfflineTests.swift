import Foundation
import ShelfCore
import ShelfOCR
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// A shelf drawn with a 5×7 bitmap font: each title runs down its spine (top to bottom, as on most English
/// spines), dark on a light colour, so Tesseract has real letters to read without any font installed.
enum DrawnShelf {
    static let glyphs: [Character: [String]] = [
        "A": ["01110", "10001", "10001", "11111", "10001", "10001", "10001"],
        "B": ["11110", "10001", "10001", "11110", "10001", "10001", "11110"],
        "D": ["11100", "10010", "10001", "10001", "10001", "10010", "11100"],
        "E": ["11111", "10000", "10000", "11110", "10000", "10000", "11111"],
        "H": ["10001", "10001", "10001", "11111", "10001", "10001", "10001"],
        "M": ["10001", "11011", "10101", "10101", "10001", "10001", "10001"],
        "N": ["10001", "11001", "10101", "10011", "10001", "10001", "10001"],
        "R": ["11110", "10001", "10001", "11110", "10100", "10010", "10001"],
        "S": ["01111", "10000", "10000", "01110", "00001", "00001", "11110"],
        "T": ["11111", "00100", "00100", "00100", "00100", "00100", "00100"],
        "U": ["10001", "10001", "10001", "10001", "10001", "10001", "01110"],
        " ": ["00000", "00000", "00000", "00000", "00000", "00000", "00000"],
    ]

    /// A JPEG of `titles.count` spines side by side, `scale` pixels a font dot.
    static func jpeg(_ titles: [String], scale: Int = 5) -> [UInt8] {
        let spineWidth = 9 * scale * 2, height = 760, margin = 40
        let width = margin * 2 + spineWidth * titles.count
        var pixels = [UInt8](repeating: 235, count: width * height * 3)
        let colours: [(UInt8, UInt8, UInt8)] = [(250, 228, 180), (200, 225, 245), (230, 245, 210), (245, 210, 215)]
        for (index, title) in titles.enumerated() {
            let x0 = margin + index * spineWidth, colour = colours[index % colours.count]
            for y in 20..<(height - 20) {
                for x in (x0 + 4)..<(x0 + spineWidth - 4) {
                    let p = (y * width + x) * 3
                    pixels[p] = colour.0; pixels[p + 1] = colour.1; pixels[p + 2] = colour.2
                }
            }
            // Reading down the spine: a letter's top faces right, so font row r is column (right - r).
            let right = x0 + spineWidth / 2 + 3 * scale
            for (i, character) in title.enumerated() {
                guard let rows = glyphs[character] else { continue }
                let top = 60 + i * 6 * scale
                for (r, row) in rows.enumerated() {
                    for (c, dot) in row.enumerated() where dot == "1" {
                        for dy in 0..<scale {
                            for dx in 0..<scale {
                                let x = right - r * scale - dx, y = top + c * scale + dy
                                let p = (y * width + x) * 3
                                pixels[p] = 30; pixels[p + 1] = 30; pixels[p + 2] = 40
                            }
                        }
                    }
                }
            }
        }
        return JPEGFactory.jpeg(rgb: pixels, width: width, height: height, quality: 92)
    }
}

@Suite("No key, no network: the offline OCR", .serialized)
struct OfflineTests {
    static let catalogue = """
        Title,Author,ISBN,Year
        Dune,"Herbert, Frank",0441172717,1965
        Emma,Jane Austen,9780141439587,1815
        The Hobbit,"Tolkien, J. R. R.",,1937

        """

    @Test(
        "With no key, auto picks the OCR, and a drawn shelf is catalogued: books, library and export written",
        .timeLimit(.minutes(3)))
    func offlineShelfIsCatalogued() async throws {
        // No Gemini key, and Gemini pointed at a closed port: nothing may be sent anywhere.
        let root = try ShelfRoot(geminiURL: "http://127.0.0.1:9", apiKey: nil)
        let file = root.base.appendingPathComponent("mine.csv")
        try Self.catalogue.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await root.shelfd("catalogue", "import", file.path).status == 0)
        try root.drop(DrawnShelf.jpeg(["DUNE HERBERT", "EMMA AUSTEN"]), as: "shelf.jpg")

        let run = try await root.shelfd("run", timeout: .seconds(150))
        #expect(run.stderr.contains("Provider chosen event=provider_chosen provider=ocr"), "\(run.stderr)")
        let books = try #require(try root.resultDocuments().first).books
        #expect(
            books.map(\.title) == ["Dune", "Emma"],
            "\(books.map { "\($0.title) \($0.confidence) \($0.reviewReasons ?? [])" })")
        #expect(books.first?.author == "Herbert, Frank" || books.first?.author == "Frank Herbert")
        #expect(books.allSatisfy { $0.match?.source == "catalogue" })
        #expect(try root.library().books.count == 2)
        let export = try await root.shelfd("export", "--format", "goodreads", "--include-unverified", "--output", "-")
        #expect(
            export.status == 0 && export.stdout.contains("Dune") && export.stdout.contains("Emma"),
            "\(export.status) \(export.stdout) \(export.stderr)")

        let status = try await root.status()
        #expect(status.provider.name == "ocr")
        #expect(status.provider.chosenBecause?.contains("auto") == true)
    }

    @Test(
        "A truncated model or a missing ONNX Runtime pauses the reader with the command that mends it; the photo waits, and is read once the files are whole",
        .timeLimit(.minutes(3)))
    func brokenFilesLeaveThePhotoWaiting() async throws {
        let installed = PPOCRFiles.locate()
        let root = try ShelfRoot(geminiURL: "http://127.0.0.1:9", apiKey: nil)
        let models = root.base.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        for name in PPOCRFiles.models {
            try FileManager.default.copyItem(
                atPath: "\(installed.modelsFolder)/\(name)", toPath: models.appendingPathComponent(name).path)
        }
        let detector = models.appendingPathComponent(PPOCRFiles.detector)
        let whole = try Data(contentsOf: detector)
        try whole.prefix(whole.count / 2).write(to: detector)
        func configure(library: String) throws {
            try root.writeConfig(
                geminiURL: "http://127.0.0.1:9",
                overrides: [
                    "pipeline": ["provider": "\"ocr\""],
                    "ocr": ["engine": "\"ppocr\"", "models_dir": "\"\(models.path)\"", "library": "\"\(library)\""],
                ])
        }
        let file = root.base.appendingPathComponent("mine.csv")
        try Self.catalogue.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await root.shelfd("catalogue", "import", file.path).status == 0)
        try root.drop(DrawnShelf.jpeg(["DUNE HERBERT"]), as: "shelf.jpg")

        for (broken, library) in [
            (PPOCRFiles.detector, installed.library), ("libonnxruntime", "/nonexistent/\(OnnxRuntime.libraryName)"),
        ] {
            try configure(library: library)
            let run = try await root.shelfd("run", timeout: .seconds(120))
            #expect(run.status == 3, "\(run.stderr)")
            let status = try await root.status()
            #expect(status.provider.state == "paused")
            let problem = status.problems.first { $0.code == "provider_model" }
            #expect(
                problem?.message.contains(broken) == true
                    && problem?.message.contains("scripts/install-deps.sh") == true,
                "\(status.problems.map(\.message))")
            #expect(
                status.queue.pending == 1 && status.queue.failed == 0 && status.queue.dead == 0,
                "the photo waits, uncharged")
            #expect(try root.resultDocuments().isEmpty)
        }

        try whole.write(to: detector)
        try configure(library: installed.library)
        let run = try await root.shelfd("run", timeout: .seconds(150))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try root.resultDocuments().first?.books.map(\.title) == ["Dune"])
    }
}
