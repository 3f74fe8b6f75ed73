import Foundation
import ShelfCore
import ShelfStore
import ShelfTesting

/// A temporary home for one test: ~/Shelves-like root, a state folder, a configuration file,
/// and the built `shelfd` binary run against them as a person would (ShelfdTests), or its machinery in the
/// test's own process (`InProcessShelf`, `InProcessSite`).
package final class ShelfRoot: @unchecked Sendable {
    package let base: URL
    package var root: URL { base.appendingPathComponent("Shelves") }
    package var incoming: URL { root.appendingPathComponent("incoming") }
    package var results: URL { root.appendingPathComponent("results") }
    package var state: URL { base.appendingPathComponent("state") }
    package var configFile: URL { base.appendingPathComponent("shelfd.toml") }
    package var environment: [String: String]

    /// `overrides` replace or add keys per section, as raw TOML values: `["pipeline": ["batch_size": "2"]]`.
    /// A root whose Cloudflare section points at `cloudflareURL`, with the emulator's token and account.
    package convenience init(
        geminiURL: String? = nil, cloudflareURL: String, overrides: [String: [String: String]] = [:]
    )
        throws
    {
        var overrides = overrides
        overrides["cloudflare", default: [:]]["base_url"] = "\"\(cloudflareURL)\""
        try self.init(geminiURL: geminiURL, overrides: overrides)
        environment["CLOUDFLARE_API_TOKEN"] = CloudflareEmulator.defaultToken
        environment["CLOUDFLARE_ACCOUNT_ID"] = CloudflareEmulator.defaultAccount
    }

    package init(
        geminiURL: String? = nil, apiKey: String? = GeminiEmulator.defaultKey,
        overrides: [String: [String: String]] = [:]
    ) throws {
        base = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-it-\(UUID().uuidString.prefix(8))")
        environment = ["HOME": base.path, "PATH": "/usr/bin:/bin"]
        if let apiKey { environment["GEMINI_API_KEY"] = apiKey }
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        try writeConfig(geminiURL: geminiURL, overrides: overrides)
    }

    deinit { try? FileManager.default.removeItem(at: base) }

    package func writeConfig(geminiURL: String?, overrides: [String: [String: String]] = [:]) throws {
        var sections: [String: [String: String]] = [
            "paths": ["root": "\"\(root.path)\"", "state": "\"\(state.path)\""],
            "pipeline": ["concurrency": "2", "max_attempts": "3"],
            "watch": ["settle_ms": "300", "mode": "\"inotify\""],
            "gemini": ["requests_per_minute": "6000", "timeout_s": "20"],
            // The local catalogue only: no test reaches OpenLibrary or Google Books (their emulators are opted into).
            "enrich": ["sources": "[\"catalogue\"]"],
            // A port of its own for every daemon: tests never meet on 8787 (the address is read with `webURL`).
            "web": ["listen": "\"127.0.0.1:0\""],
        ]
        // Without an emulator, Gemini is a closed port of this machine: a test that sends a photo reaches no one.
        sections["gemini"]?["base_url"] = "\"\(geminiURL ?? "http://127.0.0.1:9")\""
        for (section, keys) in overrides { sections[section, default: [:]].merge(keys) { $1 } }
        let text =
            sections.keys.sorted().map { section in
                "[\(section)]\n"
                    + sections[section]!.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(
                        separator: "\n")
            }.joined(separator: "\n\n") + "\n"
        try text.write(to: configFile, atomically: true, encoding: .utf8)
    }

    // MARK: Photos

    @discardableResult
    package func drop(_ bytes: [UInt8], as name: String) throws -> URL {
        let url = incoming.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        return url
    }

    /// Writes the photo in `chunks` pieces with pauses between them, as a slow network copy does.
    package func dropSlowly(_ bytes: [UInt8], as name: String, chunks: Int, pause: Duration) async throws {
        let url = incoming.appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        let size = (bytes.count + chunks - 1) / chunks
        for start in stride(from: 0, to: bytes.count, by: size) {
            try handle.write(contentsOf: Data(bytes[start..<min(bytes.count, start + size)]))
            try await Task.sleep(for: pause)
        }
        try handle.close()
    }

    /// Writes under a sync tool's temporary name, then renames into place.
    package func dropViaRename(_ bytes: [UInt8], as name: String) throws {
        let temp = incoming.appendingPathComponent(".syncthing.\(name).tmp")
        try Data(bytes).write(to: temp)
        try FileManager.default.moveItem(at: temp, to: incoming.appendingPathComponent(name))
    }

    /// Run commands as `nobody` (root reads any file, so a permissions test needs someone else).
    package var asUnprivilegedUser = false

    package func resultDocuments() throws -> [ResultDocument] {
        // The current results only: earlier runs kept under results/.history/ are hidden.
        guard
            let walker = FileManager.default.enumerator(
                at: results, includingPropertiesForKeys: nil,
                options: .skipsHiddenFiles)
        else { return [] }
        var documents: [ResultDocument] = []
        for case let url as URL in walker where url.pathExtension == "json" && !url.lastPathComponent.hasPrefix(".") {
            documents.append(try JSONStyle.decoder().decode(ResultDocument.self, from: Data(contentsOf: url)))
        }
        return documents.sorted { $0.photo.path < $1.photo.path }
    }

    /// The attempts charged to each job, read from the database as shelfd left it.
    package func chargedAttempts() throws -> [Int] {
        guard let store = try Store.openForReading(path: state.appendingPathComponent("shelfd.db").path) else {
            return []
        }
        return try store.read { db in
            try db.query("SELECT attempts FROM job ORDER BY id").map { Int($0.int("attempts") ?? -1) }
        }
    }

    package var review: URL { root.appendingPathComponent("review") }

    /// The files of review/ (the photos' copies as photos/<name>), as a person finds them.
    package func reviewFiles() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: review.path)) ?? []
        let photos =
            (try? FileManager.default.contentsOfDirectory(atPath: review.appendingPathComponent("photos").path)) ?? []
        return Set(names.filter { $0 != "photos" } + photos.map { "photos/\($0)" })
    }

    /// Stands in for the matcher: gives the open review item of the book read as `title` these candidates.
    package func seedCandidates(_ title: String, _ candidates: [MatchCandidate]) throws {
        let db = try SQLiteConnection(path: state.appendingPathComponent("shelfd.db").path)
        for row in try db.query("SELECT id, reading FROM review_item") {
            var book = try JSONDecoder().decode(Book.self, from: Data((row.string("reading") ?? "").utf8))
            guard book.title == title else { continue }
            book.candidates = candidates
            try db.execute(
                "UPDATE review_item SET reading = ? WHERE id = ?",
                [String(decoding: try JSONEncoder().encode(book), as: UTF8.self), row.string("id")])
        }
    }

    /// exports/<format>.csv, where `shelfd export --format <format>` writes by default.
    package func exportFile(_ format: String) -> URL { root.appendingPathComponent("exports/\(format).csv") }

    /// The text of that export.
    package func exported(_ format: String) throws -> String {
        try String(contentsOf: exportFile(format), encoding: .utf8)
    }

    package func library() throws -> LibraryDocument {
        try JSONStyle.decoder().decode(
            LibraryDocument.self, from: Data(contentsOf: root.appendingPathComponent("library.json")))
    }
}
