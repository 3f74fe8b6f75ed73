import Foundation
import ShelfCore

/// A temporary Shelves root, state folder and `shelfd.toml` for one benchmark.
struct BenchRoot {
    let base: URL
    var root: URL { base.appendingPathComponent("Shelves") }
    var incoming: URL { root.appendingPathComponent("incoming") }
    var results: URL { root.appendingPathComponent("results") }
    var state: URL { base.appendingPathComponent("state") }
    var configFile: URL { base.appendingPathComponent("shelfd.toml") }
    /// The whole environment of the child: nothing inherited (no NOTIFY_SOCKET, no real key).
    let environment: [String: String]

    /// `requestsPerMinute`: `[gemini] requests_per_minute`; nil leaves it high enough never to pace.
    /// `offline`: the default a new user gets without keys (`auto` → the local OCR provider).
    init(
        geminiURL: String, apiKey: String, concurrency: Int, batchSize: Int, requestsPerMinute: Int? = nil,
        offline: Bool = false
    ) throws {
        base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shelfd-bench-\(UUID().uuidString.prefix(8))")
        environment =
            offline
            ? ["HOME": base.path, "PATH": "/usr/bin:/bin"]
            : ["HOME": base.path, "PATH": "/usr/bin:/bin", "GEMINI_API_KEY": apiKey]
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        let config = """
            [paths]
            root = "\(root.path)"
            state = "\(state.path)"

            [pipeline]
            concurrency = \(concurrency)
            batch_size = \(batchSize)

            [watch]
            mode = "inotify"
            settle_ms = 200

            [gemini]
            base_url = "\(geminiURL)"
            requests_per_minute = \(requestsPerMinute ?? 100_000)
            timeout_s = 120

            [enrich]
            sources = ["catalogue"]

            [web]
            listen = "127.0.0.1:0"

            """
        try config.write(to: configFile, atomically: true, encoding: .utf8)
    }

    func log(_ name: String) -> URL { base.appendingPathComponent("\(name).log") }

    func drop(_ bytes: [UInt8], as name: String) throws {
        try Data(bytes).write(to: incoming.appendingPathComponent(name))
    }

    /// How many results/<prefix>*.json exist (written as each batch finishes, before its commit).
    func resultCount(prefix: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: results.path)) ?? []
        return names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.count
    }

    func resultDocuments(prefix: String) throws -> [ResultDocument] {
        let names = try FileManager.default.contentsOfDirectory(atPath: results.path)
        return try names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.map { name in
            try JSONStyle.decoder().decode(
                ResultDocument.self, from: Data(contentsOf: results.appendingPathComponent(name)))
        }
    }

    func remove() { try? FileManager.default.removeItem(at: base) }
}
