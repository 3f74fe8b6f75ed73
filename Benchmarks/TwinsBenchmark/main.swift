// Twins benchmark: what the library as the first source saves, end to end. The release shelfd reads the six
// sample shelves (samples/) through the Gemini emulator twice, as a household photographs its shelves again:
// the first day every book is read with its author, sure; the second day the same books, but every third read by
// its title alone and unsure (0.5, below the review threshold), as a model reads a worn spine. Before the library
// was a source, each such reading became a work of its own, "Dune (to review)" beside "Dune — Frank Herbert": a
// twin. The second day's photos go
//  - to the same shelf folders: a reading of a book seen on that shelf is taken as a sighting of it;
//  - to other folders: the book is only offered, first, and a person decides;
//  - to the same shelf folders, read with the first day's in one run: the photos of one batch, and of batches
//    committed meanwhile, see each other's works (the library is looked up inside each batch's commit);
// and the figures are the works, the titles held by more than one work (twins), the readings taken as
// sightings (their `matched` step by `library`) and the open items whose first candidate is a library work.
//
//   shelfd-bench-twins [--shelfd PATH] [--samples DIR]
import Foundation
import ShelfCore
import ShelfDigest
import ShelfImaging
import ShelfTesting

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("shelfd-bench-twins: \(message)\n".utf8))
    exit(1)
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let binary: URL =
    option("--shelfd").map { URL(fileURLWithPath: $0) }
    ?? {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("shelfd")
    }()
let samples = URL(fileURLWithPath: option("--samples") ?? "samples")
guard FileManager.default.isExecutableFile(atPath: binary.path) else {
    fail("no shelfd at \(binary.path); pass --shelfd PATH")
}

/// A sample shelf: its photo, the same picture encoded again (another file, the second day's), and its books.
struct Shelf {
    var name: String
    var firstDay: [UInt8]
    var secondDay: [UInt8]
    var books: [TruthDocument.Book]
}

let shelves: [Shelf] = {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: samples.path)) ?? [])
        .filter { $0.hasSuffix(".truth.json") }.sorted()
    guard !names.isEmpty else { fail("no truth files in \(samples.path); pass --samples DIR") }
    return names.map { name in
        guard let data = FileManager.default.contents(atPath: samples.appendingPathComponent(name).path),
            let truth = try? JSONDecoder().decode(TruthDocument.self, from: data),
            let photo = FileManager.default.contents(atPath: samples.appendingPathComponent(truth.photo).path),
            let decoded = JPEGFactory.decode(Array(photo))
        else { fail("cannot read \(name) and its photo") }
        return Shelf(
            name: String(truth.photo.prefix { $0 != "." }), firstDay: Array(photo),
            secondDay: JPEGFactory.jpeg(rgb: decoded.pixels, width: decoded.width, height: decoded.height, quality: 88),
            books: truth.books)
    }
}()

/// The model's reading of a book on a day: sure and whole, or (every third book, the second day) its title alone.
func reading(_ book: TruthDocument.Book, index: Int, secondDay: Bool) -> GeminiEmulator.Book {
    let box = book.box.map { [Int($0.y1 * 1000), Int($0.x1 * 1000), Int($0.y2 * 1000), Int($0.x2 * 1000)] }
    let worn = secondDay && index % 3 == 0
    return GeminiEmulator.Book(
        title: book.title, author: worn ? nil : book.author, isbn: nil, confidence: worn ? 0.5 : 0.92, box2D: box)
}

func sent(_ photo: [UInt8]) -> String {
    guard let prepared = try? Preprocessor.prepare(photo, preset: .gemini) else {
        fail("a sample photo cannot be prepared")
    }
    return SHA256.hex(of: prepared.jpeg)
}

let rules: [GeminiEmulator.Rule] = shelves.flatMap { shelf in
    [
        GeminiEmulator.Rule(
            photo: .sha256(sent(shelf.firstDay)),
            replies: [.books(shelf.books.enumerated().map { reading($1, index: $0, secondDay: false) })]),
        GeminiEmulator.Rule(
            photo: .sha256(sent(shelf.secondDay)),
            replies: [.books(shelf.books.enumerated().map { reading($1, index: $0, secondDay: true) })]),
    ]
}
let emulator: GeminiEmulator
do { emulator = try GeminiEmulator.start(script: GeminiEmulator.Script(rules: rules, reply: .books([]))) } catch {
    fail("cannot start the Gemini emulator: \(error)")
}

/// One household: a root of its own, the sample catalogue imported, two days of photos read by `shelfd run`, or
/// (`together`) both days' photos read by one.
func household(together: Bool = false, secondDayFolder: (String) -> String) -> (
    works: Int, twins: [String], taken: Int, offered: Int, open: Int
) {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent(
        "shelfd-bench-twins-\(UUID().uuidString.prefix(8))")
    defer { try? FileManager.default.removeItem(at: base) }
    let root = base.appendingPathComponent("Shelves"), config = base.appendingPathComponent("shelfd.toml")
    func shelfd(_ arguments: [String]) -> Data {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments + ["--config", config.path]
        process.environment = ["HOME": base.path, "PATH": "/usr/bin:/bin", "GEMINI_API_KEY": GeminiEmulator.defaultKey]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { fail("cannot run \(binary.path): \(error)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            fail("shelfd \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return data
    }
    func drop(_ bytes: [UInt8], _ path: String) {
        let url = root.appendingPathComponent("incoming").appendingPathComponent(path)
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        } catch { fail("cannot write \(url.path): \(error)") }
    }
    do {
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("incoming"), withIntermediateDirectories: true)
        try """
        [paths]
        root = "\(root.path)"
        state = "\(base.appendingPathComponent("state").path)"
        [pipeline]
        provider = "gemini"
        [gemini]
        base_url = "\(emulator.baseURL)"
        requests_per_minute = 6000
        [enrich]
        sources = ["catalogue"]
        """.write(to: config, atomically: true, encoding: .utf8)
    } catch { fail("cannot write the configuration: \(error)") }
    _ = shelfd(["catalogue", "import", samples.appendingPathComponent("catalogue.csv").path])
    for shelf in shelves { drop(shelf.firstDay, "\(shelf.name)/day-1.jpg") }
    if !together { _ = shelfd(["run"]) }
    for shelf in shelves { drop(shelf.secondDay, "\(secondDayFolder(shelf.name))/day-2.jpg") }
    _ = shelfd(["run"])

    guard let data = FileManager.default.contents(atPath: root.appendingPathComponent("library.json").path),
        let library = try? JSONStyle.decoder().decode(LibraryDocument.self, from: data)
    else { fail("no library.json") }
    let byTitle = Dictionary(grouping: library.books) { TextNormalization.title($0.title) }
    let twins = byTitle.values.filter { $0.count > 1 }.compactMap { $0.first?.title }.sorted()
    let taken = library.books.reduce(0) {
        $0 + $1.history.filter { $0.action == "matched" && $0.by == LibraryWork.source }.count
    }
    let items =
        (try? JSONStyle.decoder().decode([ReviewDocument].self, from: shelfd(["review", "list", "--json"]))) ?? []
    let offered = items.filter { $0.candidates.first?.libraryShelf != nil }.count
    return (library.books.count, twins, taken, offered, items.count)
}

let books = shelves.reduce(0) { $0 + $1.books.count }
let worn = shelves.reduce(0) { $0 + ($1.books.count + 2) / 3 }
print("\(shelves.count) sample shelves, \(books) books; the second day \(worn) of them read by title alone at 0.5")
let same = household { $0 }
let other = household { "\($0)-elsewhere" }
let together = household(together: true) { $0 }
let rows = [
    ("on the same shelves", same), ("in other folders", other),
    ("on the same shelves, in one run with the first day's", together),
]
print(
    "\n| second day's photos | works | titles with twins | taken as sightings | open items | offered a library work first |"
)
print("|---|---|---|---|---|---|")
for (label, figures) in rows {
    print(
        "| \(label) | \(figures.works) | \(figures.twins.count) | \(figures.taken) | \(figures.open) | \(figures.offered) |"
    )
}
for (label, figures) in rows {
    print("twins, \(label): \(figures.twins.isEmpty ? "none" : figures.twins.joined(separator: "; "))")
}
emulator.stop()
