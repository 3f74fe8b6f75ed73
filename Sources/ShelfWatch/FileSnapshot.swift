import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// What a `stat` says about a regular file, enough to notice any change to it.
package struct FileSnapshot: Sendable, Hashable {
    package var size: Int64
    package var modifiedSeconds: Int
    package var modifiedNanoseconds: Int
    /// A rename over the file gives a new inode even when size and mtime match (Syncthing keeps mtimes).
    package var inode: UInt64

    package init(size: Int64, modifiedSeconds: Int, modifiedNanoseconds: Int = 0, inode: UInt64) {
        self.size = size
        self.modifiedSeconds = modifiedSeconds
        self.modifiedNanoseconds = modifiedNanoseconds
        self.inode = inode
    }

    package var modified: Date {
        Date(timeIntervalSince1970: Double(modifiedSeconds) + Double(modifiedNanoseconds) / 1e9)
    }

    /// The snapshot of a regular file (symlinks followed), or nil if `path` is missing or is something else.
    package static func of(path: String) -> FileSnapshot? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileSnapshot(
            size: Int64(info.st_size),
            modifiedSeconds: Int(info.st_mtim.tv_sec),
            modifiedNanoseconds: Int(info.st_mtim.tv_nsec),
            inode: UInt64(info.st_ino))
    }
}
