import Foundation
import ShelfConfig

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
        return FileManager.default.fileExists(atPath: config.paths.root) && !FileManager.default.fileExists(atPath: mark)
    }

    /// At the start of `watch`, `run` or `scan`, before their folders are made: decides, and remembers a "no".
    static func decideAtStart(config: Configuration, shared: Bool) -> Bool {
        let writes = writesFiles(config: config, shared: shared)
        if !writes && config.store.writesFiles == nil {
            try? FileManager.default.createDirectory(atPath: config.paths.state, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: URL(fileURLWithPath: config.paths.state).appendingPathComponent(markName).path,
                                           contents: Data("[paths] root did not exist at the first start: another node writes the files\n".utf8))
        }
        return writes
    }
}
