// Shelves benchmark: what a shelf's round costs as the library grows, on both engines. For each engine (SQLite in a
// temporary file, PostgreSQL on a server of the benchmark's own, started as the tests start theirs) and each size
// (by default 1,000 and 30,000 works on about two photos each: `YearOfPhotos`, through the store's API), a shelf of
// 60 books of its own, the same at every size, is photographed in rounds of three shots, each round taking the book
// at its left end away and bringing one new (`YearOfPhotos.shelfRound`), and
//  - the round's comparison with the shelf when it closes (`ShelfRounds.closeDue`),
//  - the shelf read as `shelfd shelf show` and its page read it (`ShelfRounds.shelf`),
//  - where a book is (`ShelfRounds.whereabouts`, `shelfd library find`), and where the shelf's books all are at once
//    (the library page's search shows where each of its works is),
//  - the background push to Hardcover's look at the works the round changed, and its look when nothing changed (what
//    `watch` does every 30 s: `HardcoverPushes.changedWorks` from its cursor), after a first walk through the
//    whole library (what a start does, timed once),
// each the median of 9, after one to warm up; the sizes of one engine take turns round by round, so that what else
// the machine does weighs on each alike. Then a table with each figure's ratio to the first size's of its engine.
// Numbers are printed, never asserted.
//
//   shelfd-bench-shelves [--sizes 1000x2,30000x2] [--engines sqlite,postgres]
import Foundation
import ShelfCore
import ShelfPostgres
import ShelfStore
import ShelfTesting

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("shelfd-bench-shelves: \(message)\n".utf8))
    exit(1)
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func timed(_ body: () throws -> Void) -> Double {
    let start = ContinuousClock.now
    do { try body() } catch { fail("\(error)") }
    return milliseconds(ContinuousClock.now - start)
}

struct Size: CustomStringConvertible {
    var works: Int
    var sightings: Int
    var photos: Int { max(1, works * sightings / 12) }
    var description: String { "\(works.formatted()) works × \(sightings)" }
}

struct Figures { var close = 0.0, show = 0.0, find = 0.0, page = 0.0, changed = 0.0, idle = 0.0 }

/// The works changed after `cursor`, walked to the end a page at a time: where the walk ended and the works to push.
func walk(_ store: Store, from cursor: HardcoverCursor?) throws -> (cursor: HardcoverCursor?, works: Int) {
    var cursor = cursor
    var count = 0
    while true {
        let (works, last, more) = try store.hardcover.changedWorks(after: cursor)
        count += works.count
        if let last { cursor = last }
        if !more { return (cursor, count) }
    }
}

let sizes: [Size] = (option("--sizes") ?? "1000x2,30000x2").split(separator: ",").map { spec in
    let parts = spec.split(separator: "x").compactMap { Int($0) }
    guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { fail("--sizes takes WORKSxSIGHTINGS, comma-separated") }
    return Size(works: parts[0], sightings: parts[1])
}
let engines = (option("--engines") ?? "sqlite,postgres").split(separator: ",").map(String.init)
let base = FileManager.default.temporaryDirectory.appendingPathComponent(
    "shelfd-bench-shelves-\(UUID().uuidString.prefix(8))")
defer { try? FileManager.default.removeItem(at: base) }
let server: PostgresServer? = engines.contains("postgres") ? try await PostgresServer.start() : nil
defer { server?.close() }

var table: [(engine: String, size: Size, figures: Figures)] = []
for engine in engines {
    // One store per size, filled as a year of use fills it.
    var stores: [(size: Size, store: Store, year: YearOfPhotos)] = []
    for (index, size) in sizes.enumerated() {
        let folder = base.appendingPathComponent("\(engine)-\(index)")
        let responses = folder.appendingPathComponent("responses")
        do {
            try FileManager.default.createDirectory(at: responses, withIntermediateDirectories: true)
            let store: Store
            if engine == "postgres", let server {
                store = try PostgresStore.open(
                    .init(
                        host: server.host, port: server.port, user: server.user,
                        database: try server.createDatabase(), tls: .disable))
            } else {
                store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
            }
            let year = YearOfPhotos(photos: size.photos, booksPerPhoto: 12, works: size.works)
            let filling = ContinuousClock.now
            try year.fill(store, responses: responses)
            print(
                "\(engine), \(size): filled with \(size.photos.formatted()) photos in \(Int(milliseconds(ContinuousClock.now - filling) / 1000)) s"
            )
            stores.append((size, store, year))
        } catch { fail("filling \(engine), \(size): \(error)") }
    }
    var cursors: [HardcoverCursor?] = []
    for site in stores {
        var walked: (cursor: HardcoverCursor?, works: Int) = (nil, 0)
        let first = timed { walked = try walk(site.store, from: nil) }
        print(
            String(
                format: "%@, %@: Hardcover's first walk %.0f ms, %d works to push", engine, site.size.description,
                first, walked.works))
        cursors.append(walked.cursor)
    }
    var samples = Array(
        repeating: (
            close: [Double](), show: [Double](), find: [Double](), page: [Double](), changed: [Double](),
            idle: [Double]()
        ),
        count: stores.count)
    for round in 0...9 {
        for (index, site) in stores.enumerated() {
            // Dated after the year, a day apart: each round is quiet long before the next.
            let at = Date().addingTimeInterval(Double(1 + round) * 86_400)
            do { _ = try site.year.shelfRound(site.store, number: round + 1, at: at) } catch {
                fail("a round: \(error)")
            }
            let close = timed { _ = try site.store.shelves.closeDue(now: at.addingTimeInterval(40 * 60)) }
            var middle = ""
            var works: [String] = []
            let show = timed {
                guard let shelf = try site.store.shelves.shelf("bench-round"), shelf.books.count == 60 + round else {
                    fail("the shelf does not hold its \(60 + round) books")
                }
                middle = shelf.books[shelf.books.count / 2].work
                works = shelf.books.map(\.work)
            }
            let find = timed {
                guard try site.store.shelves.whereabouts(of: [middle]).first?.position != nil else {
                    fail("no place for \(middle)")
                }
            }
            let page = timed {
                guard try site.store.shelves.whereabouts(of: works).count == works.count else {
                    fail("not every book of the shelf has a place")
                }
            }
            var walked: (cursor: HardcoverCursor?, works: Int) = (nil, 0)
            let changed = timed { walked = try walk(site.store, from: cursors[index]) }
            guard walked.works > 0 else { fail("the round changed no work Hardcover would be sent") }
            cursors[index] = walked.cursor
            let idle = timed {
                guard try site.store.hardcover.changedWorks(after: cursors[index]).last == nil else {
                    fail("a look with nothing changed found works")
                }
            }
            if round > 0 {
                samples[index].close.append(close); samples[index].show.append(show); samples[index].find.append(find)
                samples[index].page.append(page)
                samples[index].changed.append(changed); samples[index].idle.append(idle)
            }
        }
    }
    for (site, sample) in zip(stores, samples) {
        let figures = Figures(
            close: median(sample.close), show: median(sample.show), find: median(sample.find),
            page: median(sample.page),
            changed: median(sample.changed), idle: median(sample.idle))
        print(
            String(
                format:
                    "%@, %@: round closed %.1f ms · shelf read %.1f ms · where is a book %.1f ms · where are all its books %.1f ms · "
                    + "Hardcover's look at the round %.1f ms, with nothing changed %.2f ms",
                engine, site.size.description, figures.close, figures.show, figures.find, figures.page,
                figures.changed,
                figures.idle))
        table.append((engine, site.size, figures))
    }
}

func cell(_ value: Double, _ reference: Double) -> String {
    String(format: "%.1f", value) + (reference > 0 ? String(format: " (%.2f×)", value / reference) : "")
}
print(
    "\n| engine | size | round closed ms | shelf read ms | where is a book ms | where are the shelf's books ms "
        + "| Hardcover's look at the round ms "
        + "| Hardcover's idle look ms |")
print("|---|---|---|---|---|---|---|---|")
for row in table {
    guard let first = table.first(where: { $0.engine == row.engine })?.figures else { continue }
    print(
        "| \(row.engine) | \(row.size) | \(cell(row.figures.close, first.close)) | \(cell(row.figures.show, first.show)) "
            + "| \(cell(row.figures.find, first.find)) | \(cell(row.figures.page, first.page)) "
            + "| \(cell(row.figures.changed, first.changed)) "
            + "| \(cell(row.figures.idle, first.idle)) |")
}
