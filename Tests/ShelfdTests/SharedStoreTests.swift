import Foundation
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Several `shelfd watch` workers, each with folders of its own, sharing one PostgreSQL database (`[store] url`).
@Suite("Workers sharing one PostgreSQL store", .serialized)
struct SharedStoreTests {
    /// The per-minute limit the three keep together is shown on a manual clock (RateLimitsOnTheClockTests); here the
    /// processes themselves: kill -9, a lease given back by the pid it named, workers registered and gone.
    @Test(
        "Three workers, 60 photos dropped at one, one worker killed twice: each photo done once, one library entry",
        .timeLimit(.minutes(4)))
    func threeWorkersOneQueue() async throws {
        let photos = 60
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            try await withGeminiEmulator(GeminiEmulator.Script(latency: .milliseconds(300), reply: .books([dune]))) {
                gemini in
                let overrides: [String: [String: String]] = ["store": ["url": "\"\(url)\""]]
                // Each worker its own root and state, as on three machines: only the first sees the photos, and only
                // the first keeps the files for people.
                let roots = try (0..<3).map { index in
                    var overrides = overrides
                    if index > 0 { overrides["store", default: [:]]["writes_files"] = "false" }
                    return try ShelfRoot(geminiURL: gemini.baseURL, overrides: overrides)
                }
                for seed in 0..<photos {
                    try roots[0].drop(
                        JPEGFactory.shelf(width: 320, height: 240, seed: 5_000 + seed), as: "shelf-\(seed).jpg")
                }
                var daemons = try roots.map { try $0.startDaemon() }

                try await waitUntil("three workers are registered", timeout: .seconds(60)) {
                    try await roots[0].status().workers?.count == 3
                }
                let listed = try await roots[1].status()
                #expect(listed.workers?.count == 3, "any worker's status lists all three")
                #expect(Set(listed.workers?.map(\.pid) ?? []).count == 3)

                // The second worker is killed twice mid-way, and started again each time.
                for doneBefore in [15, 35] {
                    try await waitUntil("\(doneBefore) photos are done", timeout: .seconds(180)) {
                        try await roots[0].status().queue.done >= doneBefore
                    }
                    try await daemons[1].kill9()
                    daemons[1] = try roots[1].startDaemon()
                }
                try await waitUntil("every photo is done", timeout: .seconds(240)) {
                    try await roots[0].status().queue.done == photos
                }
                let status = try await roots[2].status()
                #expect(status.queue.dead == 0 && status.queue.failed == 0 && status.queue.pending == 0)
                #expect(status.workers?.count == 3, "the killed worker's old record is gone once it started again")
                for daemon in daemons { #expect(try await daemon.stop() == 0) }

                // Every photo has exactly one result, all in the first worker's results/ (it writes the files), whichever
                // worker read it; the workers that never saw the folder read the image the first one stored.
                let results = try roots[0].resultDocuments()
                let byPhoto = Dictionary(grouping: results, by: \.photo.sha256)
                #expect(byPhoto.count == photos, "a result for every photo")
                #expect(byPhoto.values.allSatisfy { $0.count == 1 }, "no photo written twice")
                #expect(
                    try roots[1...].allSatisfy { try $0.resultDocuments().isEmpty }, "the other workers write no result"
                )
                #expect(roots.allSatisfy { $0.photosDoneInLogs() > 0 }, "all three workers read photos")

                // One library: one entry for the one book, seen on every photo, in the file writer's library.json only.
                let library = try roots[0].library()
                #expect(library.books.count == 1, "no duplicate entries")
                #expect(library.books.first?.sightingsCount == photos)
                #expect(
                    roots[1...].allSatisfy {
                        !FileManager.default.fileExists(atPath: $0.root.appendingPathComponent("library.json").path)
                    })

                let sent = gemini.requests.filter { $0.photoSHA256 != nil }
                // A lost lease costs at most the photos the killed worker held (its batches of up to five, twice).
                #expect(sent.count <= photos + 2 * 2 * 5, "\(sent.count) requests for \(photos) photos")
            }
        }
    }

    @Test(
        "One node keeps the files: photos dropped at both nodes get one result each, in its results/; a decision made on the other node reaches its library.json and exports",
        .timeLimit(.minutes(4)))
    func oneNodeWritesTheFiles() async throws {
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
                // Both roots exist: the first writes the files, also of the photos found elsewhere, because it is told to
                // (on "auto" it would write only its own photos' results), the second writes none because it is told not to.
                let writer = try ShelfRoot(
                    geminiURL: gemini.baseURL,
                    overrides: ["store": ["url": "\"\(url)\"", "writes_files": "true"]])
                let other = try ShelfRoot(
                    geminiURL: gemini.baseURL,
                    overrides: ["store": ["url": "\"\(url)\"", "writes_files": "false"]])
                var photos: [String: [UInt8]] = [:] // relative path at the node it was dropped at → bytes
                for seed in 0..<4 {
                    let bytes = JPEGFactory.shelf(width: 320, height: 240, seed: 7_000 + seed)
                    try writer.drop(bytes, as: "den/w-\(seed).jpg")
                    photos["den/w-\(seed).jpg"] = bytes
                }
                for seed in 0..<4 {
                    let bytes = JPEGFactory.shelf(width: 320, height: 240, seed: 7_100 + seed)
                    try other.drop(bytes, as: "hall/o-\(seed).jpg")
                    photos["hall/o-\(seed).jpg"] = bytes
                }
                // The same name at both nodes, different photos: named as one machine names them (the second gets its hash).
                let twinA = JPEGFactory.shelf(width: 320, height: 240, seed: 7_200),
                    twinB = JPEGFactory.shelf(width: 320, height: 240, seed: 7_201)
                try writer.drop(twinA, as: "twin.jpg")
                try other.drop(twinB, as: "twin.jpg")
                let hashes = Set(photos.values.map { SHA256.hex(of: $0) } + [twinA, twinB].map { SHA256.hex(of: $0) })

                let daemons = [try writer.startDaemon(), try other.startDaemon()]
                try await waitUntil("every photo is read", timeout: .seconds(120)) {
                    try await writer.status().queue.review == hashes.count
                }
                try await waitUntil("the writer wrote every result", timeout: .seconds(60)) {
                    try writer.resultDocuments().count == hashes.count
                }
                let workers = try await other.status().workers ?? []
                #expect(
                    workers.count == 2 && workers.filter(\.writesFiles).count == 1,
                    "status says which node writes the files")

                // Each photo one result, under the writer's results/ with the path it arrived under; none at the other node.
                let results = try writer.resultDocuments()
                #expect(Set(results.map(\.photo.sha256)) == hashes && results.count == hashes.count)
                for (path, bytes) in photos {
                    let file = writer.results.appendingPathComponent((path as NSString).deletingPathExtension + ".json")
                    let document = try JSONStyle.decoder().decode(ResultDocument.self, from: Data(contentsOf: file))
                    #expect(document.photo.sha256 == SHA256.hex(of: bytes), "\(path)")
                }
                let twins = [
                    "twin.json", "twin-\(SHA256.hex(of: twinA).prefix(8)).json",
                    "twin-\(SHA256.hex(of: twinB).prefix(8)).json",
                ]
                .filter { FileManager.default.fileExists(atPath: writer.results.appendingPathComponent($0).path) }
                #expect(twins.count == 2 && twins.contains("twin.json"), "\(twins)")
                #expect(try other.resultDocuments().isEmpty)
                for name in ["library.json", "review", "exports"] {
                    #expect(
                        !FileManager.default.fileExists(atPath: other.root.appendingPathComponent(name).path),
                        "\(name) at the other node")
                }

                // One library at the writer, every book once; review/ holds every open item with its crop, cut from the
                // stored image where the writer cannot see the photo.
                try await waitUntil("library.json follows every photo", timeout: .seconds(10)) {
                    (try? writer.library())?.books.first { $0.title == "Dune" }?.sightingsCount == hashes.count
                }
                let library = try writer.library()
                #expect(library.books.map(\.title).sorted() == ["Dune", "Smudged Spine"])
                #expect(library.books.first { $0.title == "Dune" }?.sightingsCount == hashes.count)
                let items = try await other.reviewList()
                #expect(items.count == hashes.count)
                #expect(Set(items.map(\.photo.sha256)) == hashes)
                try await waitUntil("review/ holds every item and its crop", timeout: .seconds(30)) {
                    writer.reviewFiles().isSuperset(of: items.flatMap { ["\($0.id).json", "\($0.id).jpg"] })
                }

                // An export made once at the writer follows a decision taken at the other node.
                #expect(try await writer.shelfd("export", "--format", "goodreads").status == 0)
                #expect(try !writer.exported("goodreads").contains("Dune Messiah"))
                // The photos dropped at the other node go from there (a phone-sync folder), and the writer's review/ with
                // them: when the library next changes, the crops are cut again from the images the other node stored.
                for path in photos.keys where path.hasPrefix("hall/") {
                    try FileManager.default.removeItem(at: other.incoming.appendingPathComponent(path))
                }
                try FileManager.default.removeItem(at: other.incoming.appendingPathComponent("twin.jpg"))
                try FileManager.default.removeItem(at: writer.review)
                let decided = try #require(items.first { $0.photo.path.hasPrefix("hall/") })
                let edit = try await other.shelfd(
                    "review", "edit", decided.id, "--title", "Dune Messiah", "--author", "Frank Herbert")
                #expect(edit.status == 0, "\(edit.stderr)")
                try await waitUntil("the decision reaches the writer's library.json and export", timeout: .seconds(30))
                {
                    try writer.library().books.contains { $0.title == "Dune Messiah" }
                        && writer.exported("goodreads").contains("Dune Messiah")
                        && !FileManager.default.fileExists(
                            atPath: writer.review.appendingPathComponent("\(decided.id).json").path)
                }
                let stillOpen = items.filter { $0.id != decided.id }
                try await waitUntil("review/ is cut again", timeout: .seconds(30)) {
                    writer.reviewFiles().isSuperset(of: stillOpen.flatMap { ["\($0.id).json", "\($0.id).jpg"] })
                }
                #expect(!writer.reviewFiles().contains("\(decided.id).json"))
                #expect(try writer.library().books.filter { $0.title == "Dune Messiah" }.count == 1)
                #expect(!FileManager.default.fileExists(atPath: other.root.appendingPathComponent("library.json").path))

                for daemon in daemons { #expect(try await daemon.stop() == 0) }
                #expect(try writer.resultDocuments().count == hashes.count, "no result written twice")
                #expect(gemini.requests.filter { $0.photoSHA256 != nil }.count == hashes.count)
            }
        }
    }

    @Test(
        "Three workers on auto, each with its own root: a photo's result is written at the node it was dropped at, whichever worker read it",
        .timeLimit(.minutes(4)))
    func resultsStayWhereThePhotosArrived() async throws {
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            try await withGeminiEmulator(GeminiEmulator.Script(latency: .seconds(1), reply: .books([dune]))) { gemini in
                // Three machines set up alike: each root exists, so each writes files ("auto").
                let nodes = try (0..<3).map { _ in
                    try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["store": ["url": "\"\(url)\""]])
                }
                let daemons = try nodes.map { try $0.startDaemon() }
                try await waitUntil("three workers are registered", timeout: .seconds(60)) {
                    try await nodes[0].status().workers?.count == 3
                }
                // Dropped while all three are idle, so that every worker reads some of each node's photos.
                var dropped: [[String]] = [[], [], []]
                for (node, count, seed) in [(0, 24, 9_000), (1, 6, 9_100)] {
                    for index in 0..<count {
                        let bytes = JPEGFactory.shelf(width: 320, height: 240, seed: seed + index)
                        try nodes[node].drop(bytes, as: "shelf-\(index).jpg")
                        dropped[node].append(SHA256.hex(of: bytes))
                    }
                }
                try await waitUntil("every photo is done", timeout: .seconds(120)) {
                    try await nodes[0].status().queue.done == 30
                }
                try await waitUntil("each node wrote its photos' results", timeout: .seconds(30)) {
                    try nodes[0].resultDocuments().count == 24 && nodes[1].resultDocuments().count == 6
                }
                #expect(nodes.allSatisfy { $0.photosDoneInLogs() > 0 }, "all three workers read photos")

                #expect(
                    try nodes[0].resultDocuments().map(\.photo.sha256).sorted() == dropped[0].sorted(),
                    "all of the first node's, and only those")
                #expect(try nodes[1].resultDocuments().map(\.photo.sha256).sorted() == dropped[1].sorted())
                #expect(try nodes[2].resultDocuments().isEmpty, "no result at the node where no photo arrived")
                // Every node that writes files keeps the one library; every node's status shows the photos just read.
                try await waitUntil("each node's library.json has every sighting", timeout: .seconds(30)) {
                    try nodes.allSatisfy { try $0.library().books.first?.sightingsCount == 30 }
                }
                let recent = try await nodes[2].status().recent
                #expect(
                    !recent.isEmpty && recent.allSatisfy { $0.books == 1 },
                    "status lists recent photos at a node that wrote none")

                for daemon in daemons { #expect(try await daemon.stop() == 0) }
                #expect(
                    try nodes[0].resultDocuments().count == 24 && nodes[2].resultDocuments().isEmpty,
                    "nothing written twice or elsewhere")
            }
        }
    }

    @Test(
        "A node that writes no files: its photos' results wait, said by status, for the node with writes_files = true, not one on auto",
        .timeLimit(.minutes(3)))
    func resultsOfAReadingNode() async throws {
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            try await withGeminiEmulator(.always(.books([dune]))) { gemini in
                let store = "\"\(url)\""
                let files = try ShelfRoot(
                    geminiURL: gemini.baseURL, overrides: ["store": ["url": store, "writes_files": "true"]])
                let reader = try ShelfRoot(
                    geminiURL: gemini.baseURL, overrides: ["store": ["url": store, "writes_files": "false"]])
                let auto = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["store": ["url": store]])
                var atReader: [String] = [], atAuto: [String] = []
                for seed in 0..<6 {
                    let bytes = JPEGFactory.shelf(width: 320, height: 240, seed: 9_200 + seed)
                    try reader.drop(bytes, as: "hall/r-\(seed).jpg")
                    atReader.append(SHA256.hex(of: bytes))
                }
                for seed in 0..<3 {
                    let bytes = JPEGFactory.shelf(width: 320, height: 240, seed: 9_300 + seed)
                    try auto.drop(bytes, as: "a-\(seed).jpg")
                    atAuto.append(SHA256.hex(of: bytes))
                }
                var daemons = try [reader, auto].map { try $0.startDaemon() }
                try await waitUntil("every photo is done", timeout: .seconds(120)) {
                    try await reader.status().queue.done == 9
                }
                try await waitUntil(
                    "status says the reading node's results wait for a files node", timeout: .seconds(60)
                ) {
                    try await reader.status().problems.contains {
                        $0.code == "results_without_writer" && $0.message.hasPrefix("6 results")
                    }
                }
                #expect(try auto.resultDocuments().count == 3)
                daemons.append(try files.startDaemon())
                try await waitUntil("the results are written", timeout: .seconds(30)) {
                    try files.resultDocuments().count == 6 && auto.resultDocuments().count == 3
                }
                #expect(try files.resultDocuments().map(\.photo.sha256).sorted() == atReader.sorted())
                #expect(
                    FileManager.default.fileExists(atPath: files.results.appendingPathComponent("hall/r-0.json").path),
                    "named by the path the photo arrived under")
                #expect(
                    try auto.resultDocuments().map(\.photo.sha256).sorted() == atAuto.sorted(),
                    "auto writes only its own photos' results")
                #expect(!FileManager.default.fileExists(atPath: reader.results.path))
                #expect(try await reader.status().problems.allSatisfy { $0.code != "results_without_writer" })
                for daemon in daemons { #expect(try await daemon.stop() == 0) }
            }
        }
    }

    @Test(
        "writes_files unset: a node whose root did not exist at its first start leaves the files to another, also after a restart",
        .timeLimit(.minutes(2)))
    func autoFollowsTheFirstStart() async throws {
        try await withPostgres { server in
            let url = server.url(database: try server.createDatabase())
            try await withGeminiEmulator(.always(.books([dune]))) { gemini in
                let node = try ShelfRoot(geminiURL: gemini.baseURL, overrides: ["store": ["url": "\"\(url)\""]])
                try FileManager.default.removeItem(at: node.root)
                for start in 1...2 {
                    let daemon = try node.startDaemon()
                    try await waitUntil("the worker is registered", timeout: .seconds(60)) {
                        try await node.status().workers?.count == 1
                    }
                    #expect(try await node.status().workers?.first?.writesFiles == false, "start \(start)")
                    #expect(try await daemon.stop() == 0)
                    #expect(
                        FileManager.default.fileExists(atPath: node.incoming.path), "it watches incoming/ all the same")
                    #expect(!FileManager.default.fileExists(atPath: node.results.path))
                }
            }
        }
    }
}

extension ShelfRoot {
    /// Photos this root's `watch` processes said they finished, over every start (their logs stay in the test's home).
    func photosDoneInLogs() -> Int {
        let logs = (try? FileManager.default.contentsOfDirectory(at: base, includingPropertiesForKeys: nil)) ?? []
        return logs.filter { $0.lastPathComponent.hasPrefix("daemon-") && $0.pathExtension == "err" }
            .map {
                ((try? String(contentsOf: $0, encoding: .utf8)) ?? "").components(separatedBy: "Photo done").count - 1
            }
            .reduce(0, +)
    }
}
