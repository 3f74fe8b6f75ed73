import Foundation
import ShelfConfig
import ShelfOutputs
import ShelfPipeline

/// Whether this node keeps the files for people (results/, library.json, review/, exports/) current. On SQLite
/// (one machine) every process does, after its own commits. On a shared store, `[store] writes_files` says; unset
/// ("auto"), a node writes them when `[paths] root` existed when it first started: a machine set up for people
/// (the folder made, or shared from a NAS) writes, a worker added only to read photos does not.
package enum FilesRole {
    /// `root`'s existence is judged before `watch` creates `incoming/` in it; a node that found no root leaves
    /// this mark in its state folder, so that the `incoming/` it made does not turn it into a writer at its next start.
    static let markName = "files-elsewhere"

    package static func writesFiles(config: Configuration, shared: Bool) -> Bool {
        guard shared else { return true }
        if let set = config.store.writesFiles { return set }
        let mark = URL(fileURLWithPath: config.paths.state).appendingPathComponent(markName).path
        return FileManager.default.fileExists(atPath: config.paths.root)
            && !FileManager.default.fileExists(atPath: mark)
    }

    /// This node's name on a shared store: the host and a random part, made at the first start and kept in the state
    /// folder, so that `watch`, `run` and `scan` of one machine share it. A photo names the node that ingested it
    /// first, and its results are written there when that node writes files. Not the host and root alone: two
    /// machines may have both alike (`raspberrypi`, `/home/pi/Shelves`) and would write each other's results.
    package static func node(stateFolder: String) throws -> String {
        let file = URL(fileURLWithPath: stateFolder).appendingPathComponent("node-id")
        func kept() -> String? {
            let id = (try? String(contentsOf: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            return id?.isEmpty == false ? id : nil
        }
        if let id = kept() { return id }
        // Written aside, then linked in place: the link fails if another process starting now made one first, and
        // a reader never sees half a name.
        let made = "\(ProcessIdentity.host)-\(String(UInt64.random(in: 1 << 60 ..< UInt64.max), radix: 16))"
        let aside = file.deletingLastPathComponent().appendingPathComponent(AtomicFile.temporaryName(for: "node-id"))
        try Data((made + "\n").utf8).write(to: aside)
        defer { unlink(aside.path) }
        link(aside.path, file.path)
        guard let id = kept() else {
            throw StartupError("Cannot keep this node's name in \(file.path): check that the state folder is writable.")
        }
        return id
    }

    /// At the start of `watch`, `run` or `scan`, before their folders are made: decides, and remembers a "no".
    package static func decideAtStart(config: Configuration, shared: Bool) -> Bool {
        let writes = writesFiles(config: config, shared: shared)
        if !writes && config.store.writesFiles == nil {
            try? FileManager.default.createDirectory(atPath: config.paths.state, withIntermediateDirectories: true)
            _ = FileManager.default.createFile( // without the mark, the next start decides again
                atPath: URL(fileURLWithPath: config.paths.state).appendingPathComponent(markName).path,
                contents: Data("[paths] root did not exist at the first start: another node writes the files\n".utf8))
        }
        return writes
    }
}
