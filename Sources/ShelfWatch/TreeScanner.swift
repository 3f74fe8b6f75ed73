import Foundation
import ShelfCore
#if canImport(Glibc)
    import Glibc
#endif

/// Walks the watched tree and lists the candidate photos in it.
struct TreeScanner {
    struct Candidate {
        var path: String
        var snapshot: FileSnapshot
    }

    let root: String
    let rules: IgnoreRules

    /// Candidates under `folder` (an absolute path inside the root; the root itself when nil).
    /// Ignored folders are not entered; symlinked folders are not followed (they can loop).
    func scan(_ folder: String? = nil) -> [Candidate] {
        var found: [Candidate] = []
        walk(folder ?? root, into: &found)
        return found
    }

    func relativePath(_ path: String) -> String {
        path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
    }

    func verdict(_ path: String) -> IgnoreRules.Verdict {
        rules.verdict(forRelativePath: relativePath(path))
    }

    private func walk(_ folder: String, into found: inout [Candidate]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names.sorted() {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue } // gone meanwhile
            if info.st_mode & S_IFMT == S_IFDIR {
                if IgnoreRules.folderReason(name) == nil { walk(path, into: &found) }
                continue
            }
            if case .ignore = verdict(path) { continue }
            if let snapshot = FileSnapshot.of(path: path) { // regular file, or a symlink to one
                found.append(Candidate(path: path, snapshot: snapshot))
            }
        }
    }
}

/// A file last modified this long ago (`now` is the watcher's wall date) is taken as finished when a scan first sees
/// it. The margin is wide because a network share's clock can run behind ours.
func isSettledAlready(_ snapshot: FileSnapshot, settle: Duration, now: Date) -> Bool {
    let age = now.timeIntervalSince(snapshot.modified)
    return age >= max(settle, .seconds(60)).seconds
}

/// The root as an absolute path without symlinks or a trailing slash, so event and scan paths agree.
func canonicalRoot(_ root: URL) -> String {
    var path = root.standardizedFileURL.resolvingSymlinksInPath().path
    while path.count > 1, path.hasSuffix("/") { path.removeLast() }
    return path
}

/// One-shot scan for `shelfd run`: every candidate file under `root`, waiting out `settle` for files changed
/// recently (on `time`'s clock). Files still changing a minute after that are left for the next run.
package func scanOnce(root: URL, settings: WatchSettings, time: TimeSource) async -> [StableFile] {
    let scanner = TreeScanner(root: canonicalRoot(root), rules: IgnoreRules(extra: settings.extraIgnore))
    var tracker = StabilityTracker(settle: settings.settle, now: { time.clock.now })
    for candidate in scanner.scan() {
        tracker.sighted(
            candidate.path, snapshot: candidate.snapshot,
            settledAlready: isSettledAlready(candidate.snapshot, settle: settings.settle, now: time.now))
    }
    let giveUp = time.clock.now + settings.settle + .seconds(60)
    var stable: [StabilityTracker.Stable] = []
    while true {
        stable += tracker.takeStable()
        guard let next = tracker.nextCheck, next <= giveUp else { break }
        do { try await time.clock.sleep(until: next) } catch { break } // cancelled: return what we have
    }
    return stable.map { scanner.stableFile($0) }.sorted { $0.path < $1.path }
}

extension TreeScanner {
    func stableFile(_ stable: StabilityTracker.Stable) -> StableFile {
        StableFile(
            path: stable.path, size: stable.snapshot.size, modified: stable.snapshot.modified,
            isSyncConflict: verdict(stable.path) == .conflict)
    }
}
