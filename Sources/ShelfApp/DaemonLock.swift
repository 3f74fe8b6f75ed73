import Foundation

/// One `shelfd watch` per state folder: an flock held for the daemon's life. `status` tests it to tell
/// whether the daemon runs; the kernel drops it when the process dies, even by kill -9.
package final class DaemonLock {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    package static func path(stateFolder: String) -> String { stateFolder + "/shelfd.lock" }

    /// Takes the lock, or returns nil when another process holds it.
    package static func acquire(stateFolder: String) throws -> DaemonLock? {
        let fd = open(path(stateFolder: stateFolder), O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw StartupError("Cannot open \(path(stateFolder: stateFolder)): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { close(fd); return nil }
        return DaemonLock(fd: fd)
    }

    /// True when a daemon holds the lock right now.
    package static func isHeld(stateFolder: String) -> Bool {
        let fd = open(path(stateFolder: stateFolder), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 { flock(fd, LOCK_UN); return false }
        return errno == EWOULDBLOCK
    }
}
