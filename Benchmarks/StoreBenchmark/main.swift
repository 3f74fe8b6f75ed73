// Database size benchmark: fills a fresh store through the Store API with a year of photos (10,000 by
// default, finished evenly over 365 days), each queued, claimed in batches of five, its raw answer saved
// (a 3 KB file in responses/, as a provider's answer is) and finished with a dozen books drawn from a few
// thousand works, so the library, its sightings and history grow as at home. Then it prunes as the daemon
// does after `[pipeline] keep_days` (the real `Pruning`, files too) and prints the bytes before and after,
// per photo, and what VACUUM would give back. Numbers are printed, never asserted.
//
//   shelfd-bench-store [--photos N] [--books-per-photo N] [--keep-days N] [--days N]
import Foundation
import Logging
import ShelfCore
import ShelfDaemon
import ShelfDigest
import ShelfStore
import ShelfTesting

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("shelfd-bench-store: \(message)\n".utf8))
    exit(1)
}

func option(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name) else { return value }
    guard index + 1 < arguments.count, let number = Int(arguments[index + 1]), number >= 0 else {
        fail("\(name) takes a number")
    }
    return number
}

func seconds(_ duration: Duration) -> String {
    String(format: "%.2f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
}

func megabytes(_ bytes: Int64) -> String { String(format: "%8.2f MB", Double(bytes) / 1_048_576) }

func folderBytes(_ url: URL) -> (files: Int, bytes: Int64) {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
    let bytes = names.reduce(Int64(0)) { total, name in
        total
            + ((try? FileManager.default.attributesOfItem(atPath: url.appendingPathComponent(name).path)[.size]
                as? NSNumber)?.int64Value ?? 0)
    }
    return (names.count, bytes)
}

func rows(_ store: Store, _ table: String) -> Int {
    (try? store.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM \(table)")?.int("n") }).flatMap { $0 }.map(
        Int.init) ?? 0
}

/// Runs `body` on the store alone: when it returns, the last connection closes and checkpoints the
/// write-ahead log into the file, so the file's size is the database's.
func withStore<T>(_ path: String, _ body: (Store) throws -> T) -> T {
    do { return try body(try Store.open(path: path)) } catch { fail("\(path): \(error)") }
}

let photos = option("--photos", default: 10_000)
let booksPerPhoto = option("--books-per-photo", default: 12)
let keepDays = option("--keep-days", default: 30)
let days = max(1, option("--days", default: 365))
let works = max(1, photos * booksPerPhoto / 40) // a work is seen on about 40 photos over the year

let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
    "shelfd-bench-store-\(UUID().uuidString.prefix(8))")
let responses = folder.appendingPathComponent("responses")
defer { try? FileManager.default.removeItem(at: folder) }
do { try FileManager.default.createDirectory(at: responses, withIntermediateDirectories: true) } catch {
    fail("\(error)")
}
let path = folder.appendingPathComponent("shelfd.db").path

print(
    "shelfd-bench-store: \(photos) photos over \(days) days, \(booksPerPhoto) books each from \(works) works, keep_days = \(keepDays)"
)
let now = Date()
let started = ContinuousClock.now
withStore(path) { store in
    try YearOfPhotos(photos: photos, booksPerPhoto: booksPerPhoto, works: works, days: days).fill(
        store, responses: responses, now: now)
}
let filled = ContinuousClock.now - started

let before = withStore(path) { try $0.maintenance.size() }
let beforeFiles = folderBytes(responses)
let counts = withStore(path) { store in
    ["job", "event", "response", "book", "book_sighting", "book_history", "review_item"].map { ($0, rows(store, $0)) }
}
print("filled in \(seconds(filled))")
print("rows: " + counts.map { "\($0.0) \($0.1)" }.joined(separator: " · "))

let pruneStarted = ContinuousClock.now
let report = withStore(path) { store in
    Pruning(
        store: store, responses: responses, keepDays: keepDays,
        logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() },
        time: TimeSource(clock: ContinuousClock(), wall: { now })
    )
    .prune()
}
let pruneTook = ContinuousClock.now - pruneStarted
let after = withStore(path) { try $0.maintenance.size() }
let afterFiles = folderBytes(responses)
print("pruned in \(seconds(pruneTook)): \(report?.events ?? 0) events, \(report?.responses ?? 0) saved answers")

do { try SQLiteConnection(path: path).executeScript("VACUUM") } catch { fail("VACUUM: \(error)") }
let compact = withStore(path) { try $0.maintenance.size() }

func line(_ label: String, _ size: StoreSize, _ files: (files: Int, bytes: Int64)) {
    let perPhoto = Double(size.usedBytes) / Double(max(1, photos))
    print(
        "\(label)  database file \(megabytes(size.fileBytes)) · in use \(megabytes(size.usedBytes)) "
            + "(\(String(format: "%6.0f", perPhoto)) bytes per photo) · responses/ \(files.files) files \(megabytes(files.bytes))"
    )
}
line("before prune ", before, beforeFiles)
line("after prune  ", after, afterFiles)
line("after VACUUM ", compact, afterFiles)
print("A prune frees pages inside the file; SQLite reuses them before the file grows again.")
