// Spine-matching benchmark on the library data set (Llabrés et al., DAS 2024; see its README): imports
// `catalogue.csv` through the real importer into a temporary database, matches every usable row of
// `annotations-dev.csv` by its `ocr` text through the local catalogue source and `SpineMatcher`, and
// prints top-1 accuracy (overall and by text length), how many spines are auto-accepted and how many of
// those are wrong, how many spines of books *not* in the catalogue are auto-accepted, and milliseconds per
// spine; beside it, in the same run, a plain character-trigram TF-IDF cosine over title + author.
// Numbers are printed, never asserted.
//
//   shelfd-bench-match DATASET_DIR [--limit N]
//
// Rows: `not_book=True` are not books and are left out. `not_in_db=True` rows (the book is not in the
// catalogue) are the not-in-catalogue set: for them only the auto-accept rate counts. Rows with
// `segmentation_merged_books=True` (one text read over two books) have no single right answer: they are
// left out of top-1 and reported on their own. Truth is the catalogue entry with the annotation's ISBN, or
// the same work (folded title and surname; a spine cannot tell two editions of one work apart).
import Foundation
import ShelfCore
import ShelfEnrichment
import ShelfStore

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func percent(_ part: Int, _ whole: Int) -> String {
    whole == 0 ? "  n/a" : String(format: "%5.1f %%", 100 * Double(part) / Double(whole))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("shelfd-bench-match: \(message)\n".utf8))
    exit(1)
}

/// Reads a CSV with a header into dictionaries, through the importer's own reader.
func readCSV(_ path: String) throws -> [[String: String]] {
    guard let (reader, header) = try DelimitedReader.open(LineReader(path: path)) else { return [] }
    var rows: [[String: String]] = []
    while let fields = try reader.next() {
        rows.append(Dictionary(zip(header, fields + Array(repeating: "", count: max(0, header.count - fields.count))),
                               uniquingKeysWith: { a, _ in a }))
    }
    return rows
}

struct Annotation {
    var ocr: String
    var isbn13: String?
    var work: String
    var inCatalogue: Bool
    var merged: Bool

    func isRight(_ record: CatalogueRecord?) -> Bool {
        guard let record else { return false }
        if let isbn13, isbn13 == record.isbn13 { return true }
        return CatalogueRecord.workKey(title: record.title, author: record.author) == work
    }
}

// MARK: Arguments

var arguments = Array(CommandLine.arguments.dropFirst())
var limit = CatalogueSource.searchLimit
if let flag = arguments.firstIndex(of: "--limit") {
    guard flag + 1 < arguments.count, let value = Int(arguments[flag + 1]) else { fail("--limit needs a number") }
    limit = value
    arguments.removeSubrange(flag...(flag + 1))
}
guard arguments.count == 1 else { fail("usage: shelfd-bench-match DATASET_DIR [--limit N]") }
let dataset = URL(fileURLWithPath: arguments[0])
let cataloguePath = dataset.appendingPathComponent("catalogue.csv").path
let annotationsPath = dataset.appendingPathComponent("annotations-dev.csv").path
for path in [cataloguePath, annotationsPath] where !FileManager.default.fileExists(atPath: path) {
    fail("\(path) not found: give the library-dataset folder")
}

// MARK: Import

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-bench-match-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
let clock = ContinuousClock()
let importStart = clock.now
let report = try CatalogueImporter(store: store).importFile(cataloguePath)
let importMs = milliseconds(clock.now - importStart)
let source = try CatalogueSource(store: store)
let matcher = SpineMatcher()

let annotations: [Annotation] = try readCSV(annotationsPath).compactMap { row in
    guard row["not_book"] == "False" else { return nil }
    return Annotation(ocr: row["ocr"] ?? "", isbn13: row["isbn"].flatMap(ISBN.init)?.isbn13,
                      work: CatalogueRecord.workKey(title: row["title"] ?? "", author: row["author"]),
                      inCatalogue: row["not_in_db"] != "True", merged: row["segmentation_merged_books"] == "True")
}

// MARK: Matching

struct Outcome {
    var annotation: Annotation
    var result: MatchResult
    var found: Bool
    var ms: Double
}

var outcomes: [Outcome] = []
for annotation in annotations {
    let query = SpineQuery(text: annotation.ocr)
    let start = clock.now
    let records = try source.search(query, limit: limit)
    let result = matcher.decide(query, among: records)
    let ms = milliseconds(clock.now - start)
    outcomes.append(Outcome(annotation: annotation, result: result, found: records.contains(where: annotation.isRight), ms: ms))
}
// A second pass, as in a running daemon that has seen these records before: search and decide timed apart.
var searchMs: [Double] = [], decideMs: [Double] = []
for annotation in annotations {
    let query = SpineQuery(text: annotation.ocr)
    let start = clock.now
    let records = try source.search(query, limit: limit)
    let searched = clock.now
    _ = matcher.decide(query, among: records)
    decideMs.append(milliseconds(clock.now - searched))
    searchMs.append(milliseconds(searched - start))
}

// MARK: Baseline: character-trigram TF-IDF cosine over title + author

/// The issue's reference point: every catalogue entry's title + author as a TF-IDF vector of character
/// trigrams (sublinear tf, smoothed idf, L2-normalised); a spine goes to the entry of highest cosine.
struct TrigramTFIDF {
    private var documentFrequency: [UInt32: Int] = [:]
    private var postings: [UInt32: [(Int, Double)]] = [:]
    private let documents: Double
    let count: Int

    init(_ texts: [String]) {
        let counts = texts.map(Self.trigramCounts)
        for document in counts { for term in document.keys { documentFrequency[term, default: 0] += 1 } }
        documents = Double(texts.count)
        count = texts.count
        for (index, document) in counts.enumerated() {
            for (term, weight) in vector(document) { postings[term, default: []].append((index, weight)) }
        }
    }

    /// The best entry and its cosine.
    func best(_ text: String) -> (index: Int, score: Double)? {
        var scores = [Double](repeating: 0, count: count)
        for (term, weight) in vector(Self.trigramCounts(text)) {
            for (index, documentWeight) in postings[term] ?? [] { scores[index] += weight * documentWeight }
        }
        return scores.indices.max { scores[$0] < scores[$1] }.map { ($0, scores[$0]) }
    }

    private func vector(_ counts: [UInt32: Int]) -> [UInt32: Double] {
        var vector: [UInt32: Double] = [:]
        for (term, count) in counts {
            guard let df = documentFrequency[term] else { continue }
            vector[term] = (1 + log(Double(count))) * (log(documents / Double(df)) + 1)
        }
        let norm = vector.values.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return norm > 0 ? vector.mapValues { $0 / norm } : vector
    }

    static func trigramCounts(_ text: String) -> [UInt32: Int] {
        let bytes = Array(" \(TextNormalization.fold(text)) ".utf8)
        var counts: [UInt32: Int] = [:]
        guard bytes.count >= 3 else { return counts }
        for i in 0..<(bytes.count - 2) {
            counts[UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]), default: 0] += 1
        }
        return counts
    }
}

let catalogueRows = try readCSV(cataloguePath)
let baselineRecords = catalogueRows.enumerated().map { index, row in
    CatalogueRecord(source: "baseline", key: "\(index)", title: row["title"] ?? "", author: row["author"],
                    isbn13: row["isbn"].flatMap { ISBN($0) }?.isbn13)
}
let baseline = TrigramTFIDF(baselineRecords.map { "\($0.title) \($0.author ?? "")" })
var baselineRight = 0, baselineTotal = 0, baselineAccepted = 0, baselineAcceptedWrong = 0
var baselineOutsideAccepted = 0, baselineOutside = 0
for annotation in annotations where !annotation.merged {
    let found = baseline.best(annotation.ocr)
    let best = found?.index, bestScore = found?.score ?? 0
    if annotation.inCatalogue {
        baselineTotal += 1
        let right = annotation.isRight(best.map { baselineRecords[$0] })
        if right { baselineRight += 1 }
        if bestScore >= 0.5 { baselineAccepted += 1; if !right { baselineAcceptedWrong += 1 } }
    } else {
        baselineOutside += 1
        if bestScore >= 0.5 { baselineOutsideAccepted += 1 }
    }
}

// MARK: Report

let inCatalogue = outcomes.filter { $0.annotation.inCatalogue && !$0.annotation.merged }
let outside = outcomes.filter { !$0.annotation.inCatalogue && !$0.annotation.merged }
let merged = outcomes.filter(\.annotation.merged)
let right = inCatalogue.filter { $0.annotation.isRight($0.result.candidates.first?.record) }
let accepted = inCatalogue.filter { $0.result.decision == .accepted }
let acceptedWrong = accepted.filter { !$0.annotation.isRight($0.result.best?.record) }
let outsideAccepted = outside.filter { $0.result.decision == .accepted }

#if DEBUG
let build = "debug build: times are not representative"
#else
let build = "release build"
#endif
print("Spine matching on \(dataset.lastPathComponent) (\(build))")
print("catalogue:   \(report.imported) entries imported, \(report.duplicates) duplicates, \(report.skipped) skipped "
      + String(format: "in %.0f ms", importMs))
print("spines:      \(annotations.count) usable: \(inCatalogue.count) in the catalogue, \(outside.count) not, "
      + "\(merged.count) merged segmentations (left out of top-1)")
print("")
print("top-1:                   \(percent(right.count, inCatalogue.count))  (\(right.count)/\(inCatalogue.count))"
      + "    target ≥ 93 %")
print("  found among \(limit):      \(percent(inCatalogue.filter(\.found).count, inCatalogue.count))  (retrieval recall)")
let buckets: [(String, ClosedRange<Int>)] = [("< 20 chars", 0...19), ("20–39", 20...39), ("40–79", 40...79), ("≥ 80", 80...Int.max)]
for (name, range) in buckets {
    let inBucket = inCatalogue.filter { range.contains($0.annotation.ocr.count) }
    let rightInBucket = inBucket.filter { $0.annotation.isRight($0.result.candidates.first?.record) }
    print("  \(name.padding(toLength: 11, withPad: " ", startingAt: 0))            \(percent(rightInBucket.count, inBucket.count))  (\(rightInBucket.count)/\(inBucket.count))")
}
print("auto-accepted:           \(percent(accepted.count, inCatalogue.count))  (\(accepted.count)/\(inCatalogue.count))"
      + "    target ≥ 80 %")
print("  wrong among accepted:  \(percent(acceptedWrong.count, accepted.count))  (\(acceptedWrong.count)/\(accepted.count))"
      + "    target ≤ 2 %")
print("  sent to review:        \(percent(inCatalogue.filter { $0.result.decision == .review }.count, inCatalogue.count))")
print("not in catalogue, auto-accepted: \(percent(outsideAccepted.count, outside.count))  (\(outsideAccepted.count)/\(outside.count))"
      + "    target ≤ 15 %")
print("merged segmentations, auto-accepted: \(percent(merged.filter { $0.result.decision == .accepted }.count, merged.count))"
      + "  (\(merged.filter { $0.result.decision == .accepted }.count)/\(merged.count))")
func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(max(values.count, 1)) }
let allMs = outcomes.map(\.ms)
print(String(format: "ms per spine, search + decide, first pass: median %.3f, mean %.3f    target ≤ 1", median(allMs), mean(allMs)))
print(String(format: "  second pass: search median %.3f (mean %.3f), decide median %.3f (mean %.3f)",
             median(searchMs), mean(searchMs), median(decideMs), mean(decideMs)))
print("")
print("baseline, trigram TF-IDF cosine over title + author, same run:")
print("  top-1 \(percent(baselineRight, baselineTotal)); score ≥ 0.5: \(percent(baselineAccepted, baselineTotal)) accepted, "
      + "\(percent(baselineAcceptedWrong, baselineAccepted)) wrong; not in catalogue accepted \(percent(baselineOutsideAccepted, baselineOutside))")

if ProcessInfo.processInfo.environment["BENCH_MATCH_ERRORS"] != nil {
    print("")
    for outcome in inCatalogue where !outcome.annotation.isRight(outcome.result.candidates.first?.record) || (outcome.result.decision == .accepted && !outcome.annotation.isRight(outcome.result.best?.record)) {
        let top = outcome.result.candidates.first
        print("WRONG \(outcome.result.decision.rawValue) \(String(format: "%.3f", top?.score ?? 0)) | \(outcome.annotation.ocr.prefix(70)) | \(top?.record.title.prefix(50) ?? "-")")
    }
    for outcome in outsideAccepted {
        print("OUTSIDE \(String(format: "%.3f", outcome.result.best?.score ?? 0)) | \(outcome.annotation.ocr.prefix(70)) | \(outcome.result.best?.record.title.prefix(50) ?? "-")")
    }
}
