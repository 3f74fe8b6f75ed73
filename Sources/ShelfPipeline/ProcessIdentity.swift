import Foundation

/// Names a lease owner so that another process can tell whether it is still alive:
/// the boot id, the pid and the pid's start time (pids are reused, start times are not).
package enum ProcessIdentity {
    package static let current: String = owner(pid: getpid())

    package static func owner(pid: Int32) -> String {
        "\(bootID):\(pid):\(startTime(pid: pid) ?? "0")"
    }

    /// True when the process that made `owner` is still running.
    package static func isAlive(_ owner: String) -> Bool {
        let parts = owner.split(separator: ":").map(String.init)
        guard parts.count == 3, let pid = Int32(parts[1]) else { return false }
        guard parts[0] == bootID else { return false } // a reboot ended every old owner
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        return startTime(pid: pid) == parts[2]
    }

    /// For a store other machines share: an owner counts as gone only when it ran on this machine, since this boot,
    /// and has stopped; another machine's lease (or one from before a reboot) runs out on its own.
    package static func isAliveOrElsewhere(_ owner: String) -> Bool {
        let parts = owner.split(separator: ":").map(String.init)
        guard parts.count == 3, parts[0] == bootID else { return true }
        return isAlive(owner)
    }

    /// How to tell whether a lease's or a choice's owner is gone: on one machine's store, `isAlive`; on a store
    /// other machines share, `isAliveOrElsewhere`.
    package static func aliveCheck(sharedStore: Bool) -> @Sendable (String) -> Bool {
        sharedStore ? isAliveOrElsewhere : isAlive
    }

    /// This machine's name, for `status`'s list of workers.
    package static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    static let bootID: String = {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown-boot"
    }()

    /// Field 22 of /proc/PID/stat (after the parenthesised command name, which may hold spaces).
    static func startTime(pid: Int32) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }
}
