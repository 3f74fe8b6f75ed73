import CInotifyTools
import Foundation
import Logging
#if canImport(Glibc)
    import Glibc
#endif

/// libinotifytools keeps process-global state: one session at a time, every call on the session's thread.
private let inotifyLibrary = NSLock()

/// The inotify side of a `FolderWatcher`: a dedicated thread that turns events into `Inbox` posts.
struct InotifySession: Sendable {
    let root: String
    let mailbox: Mailbox
    let logger: Logger
    let shouldStop: @Sendable () -> Bool

    private static let mask = Int32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_MODIFY | IN_DELETE)

    func start() {
        let thread = Thread { run() }
        thread.name = "shelfd.inotify"
        thread.start()
    }

    private func run() {
        // A previous session in this process may still be winding down (≤ 1 s).
        while !inotifyLibrary.lock(before: Date(timeIntervalSinceNow: 0.5)) {
            if shouldStop() { return }
        }
        defer { inotifyLibrary.unlock() }
        let before = Self.inotifyDescriptors()
        guard inotifytools_initialize() == 1 else {
            fail(errno: inotifytools_error(), path: root)
            return
        }
        defer { inotifytools_cleanup() }
        // libinotifytools waits with select(), which aborts the process on a descriptor past FD_SETSIZE (1024): a
        // process holding that many files and connections polls instead.
        if let descriptor = Self.inotifyDescriptors().subtracting(before).max(), descriptor >= FD_SETSIZE {
            mailbox.post {
                $0.watch = .failed(
                    reason:
                        "polling: this process holds over \(FD_SETSIZE) open files, more than inotify can be waited on with"
                )
            }
            return
        }
        guard inotifytools_watch_recursively(root, Self.mask) == 1 else {
            fail(errno: inotifytools_error(), path: root)
            return
        }
        mailbox.post { $0.watch = .ready(watches: Int(inotifytools_get_num_watches())) }

        var movedFolder: (path: String, cookie: UInt32)?
        var quickFailures = 0
        while !shouldStop() {
            let started = ContinuousClock.now
            // 1 s: next_event(0) would block forever, and the timeout bounds how long stop() takes.
            guard let event = inotifytools_next_event(1) else {
                // A timeout takes the full second; an immediate nil with an error is a broken descriptor.
                let error = inotifytools_error()
                if error != 0, error != EINTR, ContinuousClock.now - started < .milliseconds(200) {
                    quickFailures += 1
                    if quickFailures >= 3 {
                        fail(errno: error, path: root)
                        return
                    }
                } else {
                    quickFailures = 0
                }
                continue
            }
            quickFailures = 0
            let mask = event.pointee.mask
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                mailbox.post { $0.overflowed = true }
                continue
            }
            // The event points into the library's static buffer: copy what we need now.
            var name: UnsafePointer<CChar>?
            var folderLength = 0
            guard let folder = inotifytools_filename_from_event(event, &name, &folderLength), let name,
                name.pointee != 0
            else { continue } // an event on a watched folder itself
            let path = String(cString: folder) + String(cString: name) // the folder ends with "/"

            if mask & UInt32(IN_ISDIR) == 0 {
                let hint: Inbox.WriterHint =
                    mask & UInt32(IN_CREATE | IN_MODIFY) != 0
                    ? .open
                    : mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 ? .closed : .unknown
                mailbox.post { $0.file(path, hint: hint) }
                continue
            }
            if mask & UInt32(IN_MOVED_FROM) != 0 {
                movedFolder = (path, event.pointee.cookie)
            } else if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                if mask & UInt32(IN_MOVED_TO) != 0, let moved = movedFolder, moved.cookie == event.pointee.cookie,
                    inotifytools_wd_from_filename(moved.path + "/") != -1
                {
                    // Renamed inside the tree: its watches stay, under the new name (as inotifywait does).
                    inotifytools_replace_filename(moved.path + "/", path + "/")
                } else if inotifytools_watch_recursively(path, Self.mask) != 1 {
                    let error = inotifytools_error()
                    if error == ENOSPC {
                        fail(errno: error, path: path)
                        return
                    }
                    logger.warning(
                        "Cannot watch new folder",
                        metadata: [
                            "watch.path": "\(path)", "watch.error": "\(String(cString: strerror(error)))",
                        ])
                }
                movedFolder = nil
                mailbox.post { $0.folders.append(path) } // files may have landed before the watch
            }
        }
    }

    /// The inotify descriptors this process holds (libinotifytools does not say which one it opened).
    private static func inotifyDescriptors() -> Set<Int32> {
        let folder = "/proc/self/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return Set(
            entries.compactMap { entry in
                guard let descriptor = Int32(entry),
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(entry)"))
                        == "anon_inode:inotify"
                else { return nil }
                return descriptor
            })
    }

    private func fail(errno error: Int32, path: String) {
        let reason =
            error == ENOSPC
            ? watchLimitReason(currentLimit: currentWatchLimit())
            : "polling: cannot watch \(path) with inotify (\(String(cString: strerror(error))))"
        mailbox.post { $0.watch = .failed(reason: reason) }
    }
}

func currentWatchLimit() -> String {
    let text = try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8)
    return text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
}

/// What a person needs when the watch limit is hit: the limit and the commands that raise it.
func watchLimitReason(currentLimit: String) -> String {
    let suggested = max(524_288, (Int(currentLimit) ?? 0) * 2)
    return "polling: inotify watch limit reached (fs.inotify.max_user_watches=\(currentLimit)); "
        + "raise it with: sudo sysctl fs.inotify.max_user_watches=\(suggested) "
        + "and keep it across reboots with: echo fs.inotify.max_user_watches=\(suggested) "
        + "| sudo tee /etc/sysctl.d/90-shelfd-inotify.conf"
}
