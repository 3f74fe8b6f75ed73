import Foundation

/// The project's shared data (`shared/` beside the repository, or beside one of its parents for a git worktree):
/// real photos and their lists, which stay out of the repository. Tests that read it are skipped without it.
package enum SharedData {
    /// `path` inside `shared/`, when it is there.
    package static func file(_ path: String) -> URL? {
        var directory = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() // the repository
        for _ in 0..<3 {
            directory = directory.deletingLastPathComponent()
            let file = directory.appendingPathComponent("shared").appendingPathComponent(path)
            if FileManager.default.fileExists(atPath: file.path) { return file }
        }
        return nil
    }
}
