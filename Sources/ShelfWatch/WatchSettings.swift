import Foundation

/// How the incoming folder is watched (`watch.mode`).
package enum WatchMode: String, Sendable {
    /// inotify, unless the folder is on a network or FUSE file system, or the watch limit is reached.
    case auto
    /// inotify without the file-system check.
    case inotify
    /// A full scan every `pollInterval`.
    case poll
}

/// The `[watch]` section of the configuration, with the defaults etc/shelfd.toml gives.
package struct WatchSettings: Sendable {
    package var mode: WatchMode
    /// A file is stable once its size, mtime and inode stay unchanged this long (`watch.settle_ms`).
    package var settle: Duration
    /// Time between full scans in poll mode (`watch.poll_interval_s`).
    package var pollInterval: Duration
    /// Time between full scans with inotify: events are hints, the scan is the truth (`watch.rescan_interval_s`).
    package var rescanInterval: Duration
    /// Globs matched against the file name and the path relative to the root (`watch.ignore`).
    package var extraIgnore: [String]

    package init(
        mode: WatchMode = .auto,
        settle: Duration = .milliseconds(2000),
        pollInterval: Duration = .seconds(30),
        rescanInterval: Duration = .seconds(3600),
        extraIgnore: [String] = []
    ) {
        self.mode = mode
        self.settle = settle
        self.pollInterval = pollInterval
        self.rescanInterval = rescanInterval
        self.extraIgnore = extraIgnore
    }
}

/// A file that has stopped changing and can be queued.
package struct StableFile: Sendable, Hashable {
    /// Absolute path.
    package var path: String
    package var size: Int64
    package var modified: Date
    /// A `*.sync-conflict-*` copy made by Syncthing: taken, but worth a note in the results.
    package var isSyncConflict: Bool
}

package enum WatchEvent: Sendable {
    /// Complete files, ready to be queued: those found stable at one look, so that a burst is recorded together.
    /// The same path may come again (after a change, or in a new process); the consumer dedupes by content.
    case stable([StableFile])
    /// The way the folder is watched, at start and on a fallback; `reason` is meant for a person.
    case modeChanged(effective: WatchMode, reason: String)
    /// A full scan finished (startup, periodic, poll, overflow, request). The first one marks the startup scan.
    case rescanned(fileCount: Int)
}
