import Synchronization
import Foundation

/// Crash points for tests: `SHELFD_FAILPOINT=after_claim` kills this process with SIGKILL the first time
/// that point is reached (`name:N` the N-th time). Points: after_claim, after_response_saved, mid_write,
/// mid_history (a rescan keeping the earlier result), before_commit, after_commit (before library.json and review/ follow);
/// `reading_photo@PATH` kills it as the photo at PATH (relative to incoming/) is read, as a photo that crashes the
/// decoder would; `scheduler_hang` hangs the scheduler's loop after a claim instead. Unset in normal use, where `hit`
/// costs one dictionary lookup.
package enum Failpoint {
    private static let configured: (name: String, count: Int, photo: String?)? = {
        guard let raw = ProcessInfo.processInfo.environment["SHELFD_FAILPOINT"], !raw.isEmpty else { return nil }
        let (point, photo) =
            raw.firstIndex(of: "@").map { (raw[..<$0], String(raw[raw.index(after: $0)...])) } ?? (raw[...], nil)
        let parts = point.split(separator: ":")
        return (String(parts[0]), parts.count > 1 ? Int(parts[1]) ?? 1 : 1, photo)
    }()
    private static let hits = Mutex(0)

    /// The point `name` reached, while `photo` (its path relative to incoming/) is in hand when a point names one.
    package static func hit(_ name: String, photo: String? = nil) {
        guard configured?.photo == nil || configured?.photo == photo, reached(name) else { return }
        FileHandle.standardError.write(Data("shelfd: failpoint \(name) reached, killing process\n".utf8))
        kill(getpid(), SIGKILL)
    }

    /// A hang instead of a crash (`scheduler_hang`): the caller never returns, unless its task is cancelled.
    package static func stall(_ name: String) async {
        guard reached(name) else { return }
        FileHandle.standardError.write(Data("shelfd: failpoint \(name) reached, hanging\n".utf8))
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
    }

    private static func reached(_ name: String) -> Bool {
        guard let configured, configured.name == name else { return false }
        let count = hits.withLock {
            $0 += 1; return $0
        }
        return count >= configured.count
    }
}
