// The offline OCR provider on real photos: seconds per photo and, with PP-OCR, where they go stage by stage (decoding,
// the detector's first and second look, the classifier, the recogniser, finding the spines' sides, grouping lines into
// spines, matching), the spines it read, the books the enrichment made of them and the texts it left unread, so a person can judge them by
// eye. With --catalogue the catalogue (a CSV the importer reads) is imported into a temporary database first and
// matched against. With --lines, PP-OCR's lines are printed as read, before they are grouped into spines (their centre,
// size and direction in the picture read), to see why lines join or stay apart, with how many the detector's first look
// alone finds. Each photo's ISBN barcodes are read too, as `[pipeline] barcodes` reads them before the provider is
// asked, and their cost is printed against the reading's. Numbers are printed, never asserted.
//
//   shelfd-bench-ocr PHOTO… [--catalogue CSV] [--engine ppocr|tesseract] [--languages eng+spa] [--max-side 2400] [--lines]
import Foundation
import Logging
import ShelfCore
import ShelfEnrichment
import ShelfImaging
import ShelfOCR
import ShelfProviders
import ShelfStore

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("shelfd-bench-ocr: \(message)\n".utf8))
    exit(1)
}

@MainActor func value(_ option: String) -> String {
    guard let value = arguments.popFirst() else { fail("\(option) needs a value") }
    return value
}

var photos: [String] = [], catalogue: String?, languages = ["eng"], maxSide = 2400, showLines = false
var engine = OCRSettings.defaultEngine()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--catalogue": catalogue = value(argument)
    case "--engine":
        switch value(argument) {
        case "ppocr": engine = .ppocr(PPOCRFiles.locate())
        case "tesseract": engine = .tesseract
        default: fail("--engine is ppocr or tesseract")
        }
    case "--languages": languages = value(argument).split(separator: "+").map(String.init)
    case "--max-side":
        guard let side = Int(value(argument)) else { fail("--max-side needs a number of pixels") }
        maxSide = side
    case "--lines": showLines = true
    default: photos.append(argument)
    }
}
if photos.isEmpty {
    fail(
        "usage: shelfd-bench-ocr PHOTO… [--catalogue CSV] [--engine ppocr|tesseract] [--languages eng+spa] [--max-side 2400] [--lines]"
    )
}

var sources: [any BookSource] = []
if let catalogue {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-bench-ocr-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
    let report = try CatalogueImporter(catalogue: store.catalogue).importFile(catalogue)
    print("catalogue: \(report)")
    sources = [try CatalogueSource(catalogue: store.catalogue)]
}

let provider = OCRProvider(
    settings: OCRSettings(
        engine: engine, languages: languages, maxSide: maxSide,
        threads: ProcessInfo.processInfo.activeProcessorCount),
    logger: Logger(label: "shelfd-bench-ocr"))
// The spines' texts are matched as the pipeline matches them: checked, then enriched.
let enricher = Enricher(sources: sources, reviewThreshold: 0.6)
if case .failure(let error) = await provider.checkReachable() { fail(error.message) }
// With --lines, the lines are read again by models of their own, loaded once for all the photos.
let lineReader: PPOCREngine? =
    if showLines, case .ppocr(let files) = engine {
        PPOCREngine(files: files, threads: ProcessInfo.processInfo.activeProcessorCount)
    } else { nil }
var total = 0.0, barcodeTotal = 0.0
for path in photos {
    guard let bytes = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
    let clock = ContinuousClock(), started = clock.now
    let reading = try await provider.read(Array(bytes))
    let readAt = clock.now
    let checked = BookChecker(reviewThreshold: enricher.reviewThreshold).check(
        ModelAnswer(books: reading.spines.map(OCRProvider.book)).books, source: provider.name)
    let enriched = await enricher.enrich(checked)
    let matching = readAt.duration(to: clock.now)
    let elapsed = clock.now - started
    total += elapsed.seconds
    print(
        "\(path): \(reading.width)×\(reading.height), \(reading.spines.count) spines, \(String(format: "%.1f", elapsed.seconds)) s"
    )
    // The barcodes are read on the whole photo at its full size, before the provider (`[pipeline] barcodes`).
    let barcodesStarted = clock.now
    let symbols = (try? BarcodeReader.isbns(inPhoto: Array(bytes), maxPixels: 64_000_000)) ?? []
    let barcodes = (clock.now - barcodesStarted).seconds
    barcodeTotal += barcodes
    print(
        String(
            format: "  barcodes: %d read in %.2f s: with them the photo costs %.2f× its reading without",
            symbols.count, barcodes, (elapsed.seconds + barcodes) / elapsed.seconds))
    // Where the photo's time goes, stage by stage (PP-OCR): what is worth making faster.
    if let times = reading.times {
        let stages: [(String, Duration)] = [
            ("decoding", times.decoding), ("detector", times.models.detector - times.models.closerLook),
            ("second look", times.models.closerLook), ("classifier", times.models.classifier),
            ("recogniser", times.models.recogniser), ("spine edges", times.edges), ("grouping", times.grouping),
            ("matching", matching),
        ]
        print(
            "  stages: "
                + stages.map { name, duration in
                    String(
                        format: "%@ %.2f s (%.0f %%)", name, duration.seconds, 100 * duration.seconds / elapsed.seconds)
                }.joined(separator: ", "))
    }
    for spine in reading.spines {
        let box = String(format: "x %.2f–%.2f y %.2f–%.2f", spine.box.x1, spine.box.x2, spine.box.y1, spine.box.y2)
        print("  [\(spine.reading.rawValue) \(String(format: "%.0f", spine.confidence * 100)) \(box)] \(spine.text)")
    }
    if showLines, let lineReader {
        let image = try Preprocessor.rgb(Array(bytes), maxSide: maxSide)
        let lines = try await lineReader.lines(in: image)
        let firstLook = try await lineReader.lines(in: image, lookCloser: false)
        print(
            "  lines on the \(image.width)×\(image.height) picture read: \(lines.count) (the first look alone: \(firstLook.count)):"
        )
        for line in lines.sorted(by: { $0.frame.centre.x < $1.frame.centre.x }) {
            let frame = line.frame
            print(
                String(
                    format: "    centre %4.0f,%4.0f  length %4.0f  thickness %3.0f  along %5.2f,%5.2f  %3.0f%%  ",
                    frame.centre.x, frame.centre.y, frame.length, frame.thickness,
                    frame.along.x / frame.length, frame.along.y / frame.length, line.confidence * 100) + line.text)
        }
    }
    for book in enriched.books where book.match != nil || book.status == .verified {
        print(
            "  → \(book.status.rawValue) \(book.title) — \(book.author ?? "?") (\(String(format: "%.2f", book.confidence)))"
                + (book.spineText.map { " ← \($0)" } ?? ""))
    }
    if !enriched.unread.isEmpty {
        print("  unread: " + enriched.unread.map { "«\($0.text)»" }.joined(separator: " "))
    }
}
print(
    String(
        format: "seconds per photo: %.1f; with the barcodes read first: %.2f× that", total / Double(photos.count),
        (total + barcodeTotal) / total))
