import Foundation

/// The sd_notify protocol without libsystemd: one datagram to `$NOTIFY_SOCKET` per message.
package enum SystemdNotify {
    @discardableResult
    package static func send(_ state: String) -> Bool {
        guard var path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !path.isEmpty else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let abstract = path.hasPrefix("@")              // a leading @ means the abstract namespace
        if abstract { path.removeFirst() }
        var bytes = Array(path.utf8)
        if abstract { bytes.insert(0, at: 0) }
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let sent = state.utf8CString.withUnsafeBufferPointer { message in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, message.baseAddress, message.count - 1, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
        return sent >= 0
    }

    /// Half of `$WATCHDOG_USEC`, when systemd asked for watchdog pings.
    package static var watchdogInterval: Duration? {
        guard let raw = ProcessInfo.processInfo.environment["WATCHDOG_USEC"], let usec = Int(raw), usec > 0 else { return nil }
        return .microseconds(usec / 2)
    }
}
