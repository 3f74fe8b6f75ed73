import Foundation
import ShelfCore

/// Writes whole files or nothing: a temporary file in the same folder, fsync, rename, fsync the folder.
/// A reader (or a crash) sees the old file or the new one, never half of one.
package enum AtomicFile {
    package struct WriteError: Error, CustomStringConvertible {
        package var path: String
        package var errno: Int32
        package var description: String {
            let reason = String(cString: strerror(errno))
            let hint =
                errno == ENOSPC
                ? " (the disk is full: free some space; nothing was lost, shelfd will write it again)" : ""
            return "cannot write \(path): \(reason)\(hint)"
        }
    }

    /// `afterTemp` runs between the temporary file and the rename: where the crash tests kill the process.
    package static func write(_ data: Data, to url: URL, afterTemp: (() -> Void)? = nil) throws(WriteError) {
        let (fd, temp) = try openTemporary(for: url)
        if let failure = append(data, to: fd) { throw abandon(fd, temp, url, failure) }
        try commit(fd, temp, to: url, afterTemp: afterTemp)
    }

    /// Writes what `body` hands to `append` piece by piece: a large file (library.json, an export) is never whole
    /// in memory. Whatever `body` throws leaves the old file in place.
    package static func write(to url: URL, _ body: (_ append: (Data) throws -> Void) throws -> Void) throws {
        let (fd, temp) = try openTemporary(for: url)
        do {
            try body { data throws(WriteError) in
                if let failure = append(data, to: fd) { throw WriteError(path: url.path, errno: failure) }
            }
        } catch {
            close(fd)
            unlink(temp.path)
            throw error
        }
        try commit(fd, temp, to: url, afterTemp: nil)
    }

    private static func openTemporary(for url: URL) throws(WriteError) -> (Int32, URL) {
        let folder = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            // FileManager reports Cocoa codes; the errno (ENOSPC, EACCES…) is the underlying POSIX error.
            let posix = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            throw WriteError(path: folder.path, errno: posix?.domain == NSPOSIXErrorDomain ? Int32(posix!.code) : EIO)
        }
        let temp = folder.appendingPathComponent(temporaryName(for: url.lastPathComponent))
        let fd = open(temp.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WriteError(path: temp.path, errno: errno) }
        return (fd, temp)
    }

    /// The errno of a failed write, or nil.
    private static func append(_ data: Data, to fd: Int32) -> Int32? {
        data.withUnsafeBytes { raw -> Int32? in
            var written = 0
            while written < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
                if n < 0 { if errno == EINTR { continue }; return errno }
                written += n
            }
            return nil
        }
    }

    private static func abandon(_ fd: Int32, _ temp: URL, _ url: URL, _ failure: Int32) -> WriteError {
        close(fd)
        unlink(temp.path)
        return WriteError(path: url.path, errno: failure)
    }

    /// fsync, rename over `url`, fsync the folder.
    private static func commit(_ fd: Int32, _ temp: URL, to url: URL, afterTemp: (() -> Void)?) throws(WriteError) {
        if fsync(fd) != 0 { throw abandon(fd, temp, url, errno) }
        close(fd)
        afterTemp?()
        guard rename(temp.path, url.path) == 0 else {
            let code = errno
            unlink(temp.path)
            throw WriteError(path: url.path, errno: code)
        }
        let dirFD = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 { fsync(dirFD); close(dirFD) }
    }

    /// A file written whole: `.shelfd-<name>.<pid>.tmp` (`TemporaryFile.prefix`) until it is renamed.
    package static func temporaryName(for name: String, pid: Int32 = getpid()) -> String {
        "\(TemporaryFile.prefix)\(name).\(pid).tmp"
    }

    /// The writer's pid when `name` is one of shelfd's temporary files.
    static func temporaryWriter(of name: String) -> Int32? {
        guard name.hasPrefix(TemporaryFile.prefix), name.hasSuffix(".tmp") else { return nil }
        return Int32(name.dropLast(4).split(separator: ".").last ?? "")
    }

    /// Leftover temporary files of a shelfd process killed mid-write, directly in `folder` (or, `recursive`, in
    /// its sub-folders too, hidden ones such as results/.history included). A file whose writer is still running
    /// (a `watch` while a `run` starts, or this process) is being written, and stays.
    package static func removeLeftovers(in folder: URL, recursive: Bool = false) {
        let names =
            recursive
            ? (FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String]) ?? []
            : (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names {
            guard let pid = temporaryWriter(of: (name as NSString).lastPathComponent),
                kill(pid, 0) != 0 && errno != EPERM
            else { continue } // EPERM: alive, another user's
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }
}
