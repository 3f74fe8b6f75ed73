import Synchronization
import Foundation

/// Crash points for tests: `SHELFD_FAILPOINT=after_claim` kills this process with SIGKILL the first time
/// that point is reached (`name:N` the N-th time). Points: after_claim, after_response_saved, mid_write,
/// before_commit. Unset in normal use, where `hit` costs one dictionary lookup.
package enum Failpoint {
    private static let configured: (name: String, count: Int)? = {
        guard let raw = ProcessInfo.processInfo.environment["SHELFD_FAILPOINT"], !raw.isEmpty else { return nil }
        let parts = raw.split(separator: ":")
        return (String(parts[0]), parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
    }()
    private static let hits = Mutex(0)

    package static func hit(_ name: String) {
        guard let configured, configured.name == name else { return }
        let count = hits.withLock { $0 += 1; return $0 }
        guard count >= configured.count else { return }
        FileHandle.standardError.write(Data("shelfd: failpoint \(name) reached, killing process\n".utf8))
        kill(getpid(), SIGKILL)
    }
}
