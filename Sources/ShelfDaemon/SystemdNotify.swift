import CSystemd

/// The sd_notify protocol through libsystemd: readiness, status, stopping and watchdog pings to `$NOTIFY_SOCKET`.
package enum SystemdNotify {
    /// Sends one notification; false when there is no `$NOTIFY_SOCKET` or it could not be sent.
    @discardableResult
    package static func send(_ state: String) -> Bool {
        sd_notify(0, state) > 0
    }

    /// Half of `$WATCHDOG_USEC`, when systemd asked for watchdog pings (and `$WATCHDOG_PID`, if set, is this process).
    package static var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(usec / 2)
    }
}
