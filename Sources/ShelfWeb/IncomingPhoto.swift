import Foundation
import HTTPTypes
#if canImport(Glibc)
    import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import ShelfCore

/// One uploaded photo on its way into incoming/, written as its bytes arrive:
/// `.shelfd-<name>.upload-<random>` while it is written (`TemporaryFile.prefix`, the one prefix of shelfd's
/// temporary files; hidden: the watcher ignores it), checked to be a JPEG or HEIC by its first bytes and stopped as
/// soon as it passes `[web] max_upload_mb`; fsynced and renamed to
/// `.shelfd-<name>.upload-<random>.synced` (whole on disk: a leftover of that name can be finished); renamed to a free
/// name, and the folder fsynced so that the name survives a power cut. The one owner of the file's descriptor:
/// it is closed once, whatever fails.
final class IncomingPhoto {
    let shelf: String
    let folder: URL
    let base: String
    let givenExtension: String?
    let limitMB: Int
    private let madeFolder: Bool
    /// Where the bytes are now: the temporary name, then the synced one.
    private var path: String
    private var fd: Int32
    private(set) var written = 0
    private var head: [UInt8] = []
    private var format: ImageFormat?

    static let syncedSuffix = ".synced"

    /// Opens the temporary file for `name` under incoming/<shelf>/ (the folder made when missing).
    init(shelf: String, name: String, into incoming: URL, limitMB: Int) throws(UploadPage.UploadError) {
        if let problem = UploadPage.shelfProblem(shelf) {
            throw UploadPage.UploadError(status: .badRequest, message: problem)
        }
        self.shelf = shelf
        self.limitMB = limitMB
        (base, givenExtension) = UploadPage.safeName(name)
        folder = shelf.isEmpty ? incoming : incoming.appendingPathComponent(shelf, isDirectory: true)
        madeFolder = !FileManager.default.fileExists(atPath: folder.path)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw UploadPage.UploadError(
                status: .internalServerError,
                message:
                    "Cannot make the folder \(shelf.isEmpty ? "incoming/" : "incoming/\(shelf)/"): \(error.localizedDescription)."
            )
        }
        path = folder.appendingPathComponent(UploadPage.temporaryName(base)).path
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            if madeFolder { rmdir(folder.path) }
            throw Self.fileError(code, "Cannot write into incoming/")
        }
    }

    deinit { closeOnce() }

    /// Writes the next bytes; refuses past the limit and, once 64 bytes are in, anything but a photo.
    func append(_ buffer: ByteBuffer) async throws(UploadPage.UploadError) {
        written += buffer.readableBytes
        if written > limitMB * 1_048_576 { throw .tooLarge(bytes: nil, limitMB: limitMB) }
        if head.count < 64 {
            head += buffer.getBytes(at: buffer.readerIndex, length: min(64 - head.count, buffer.readableBytes)) ?? []
        }
        if format == nil, head.count >= 64 { format = try Self.checked(head) }
        try await Self.writeAll(buffer, to: fd)
    }

    /// On disk, then in place: returns where it landed, relative to incoming/.
    func finish() async throws(UploadPage.UploadError) -> String {
        guard written > 0 else { throw UploadPage.UploadError(status: .badRequest, message: "The file is empty.") }
        let kind: ImageFormat
        if let format { kind = format } else { kind = try Self.checked(head) }
        // On disk before it gets its real name: a crash never leaves a cut photo for the watcher (a full disk
        // may only show here).
        let descriptor = fd
        let synced: Int32
        do { synced = try await NIOThreadPool.singleton.runIfActive { fsync(descriptor) == 0 ? 0 : errno } } catch {
            throw UploadPage.UploadError(
                status: .serviceUnavailable, message: "The server is stopping; send the photo again.")
        }
        if synced != 0 { throw Self.fileError(synced, "Cannot finish writing the photo") }
        if closeOnce() != 0 { throw Self.fileError(errno, "Cannot finish writing the photo") }
        guard rename(path, path + Self.syncedSuffix) == 0 else {
            throw Self.fileError(errno, "Cannot finish writing the photo")
        }
        path += Self.syncedSuffix
        let name = try Self.place(path, in: folder, base: base, extension: givenExtension, format: kind)
        path = ""
        Self.syncFolder(folder)
        return shelf.isEmpty ? name : "\(shelf)/\(name)"
    }

    /// Removes what was written (and the shelf's folder when this upload made it and it is still empty).
    func discard() {
        closeOnce()
        if !path.isEmpty { unlink(path); path = "" }
        if madeFolder { rmdir(folder.path) }
    }

    /// Closes the descriptor the first time only: a second close could close one another thread has just opened.
    @discardableResult
    private func closeOnce() -> Int32 {
        guard fd >= 0 else { return 0 }
        let result = close(fd)
        fd = -1
        return result
    }

    // MARK: Rules and system calls

    /// Only JPEG and HEIC: what phones and cameras write, and what shelfd reads.
    static func checked(_ head: [UInt8]) throws(UploadPage.UploadError) -> ImageFormat {
        let format = ImageFormat.sniff(head)
        guard format == .jpeg || format == .heic else {
            let what = format == .unknown ? "not a photo" : "a \(format.displayName) image"
            throw UploadPage.UploadError(
                status: .unsupportedMediaType,
                message: "This file is \(what): shelfd takes JPEG or HEIC photos (as phones and cameras save them).")
        }
        return format
    }

    /// Writes a whole buffer on NIO's thread pool, so a slow disk never holds the server's threads.
    private static func writeAll(_ buffer: ByteBuffer, to fd: Int32) async throws(UploadPage.UploadError) {
        let failure: Int32
        do {
            failure = try await NIOThreadPool.singleton.runIfActive {
                buffer.withUnsafeReadableBytes { bytes -> Int32 in
                    var offset = 0
                    while offset < bytes.count {
                        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                        if n < 0 {
                            if errno == EINTR { continue }
                            return errno
                        }
                        offset += n
                    }
                    return 0
                }
            }
        } catch {
            throw UploadPage.UploadError(
                status: .serviceUnavailable, message: "The server is stopping; send the photo again.")
        }
        if failure != 0 { throw fileError(failure, "Cannot write the photo") }
    }

    static func fileError(_ code: Int32, _ what: String) -> UploadPage.UploadError {
        if code == ENOSPC || code == EDQUOT {
            return UploadPage.UploadError(
                status: .init(code: 507, reasonPhrase: "Insufficient Storage"),
                message:
                    "The disk holding incoming/ is full: nothing was kept. Free some space and send the photo again.")
        }
        return UploadPage.UploadError(
            status: .internalServerError, message: "\(what): \(String(cString: strerror(code))).")
    }

    /// Renames the finished upload to `<base>.<ext>`, or `<base>-2.<ext>`… when that is taken: never over a file.
    static func place(
        _ temporary: String, in folder: URL, base: String, extension given: String?,
        format: ImageFormat
    ) throws(UploadPage.UploadError) -> String {
        let ext =
            given.flatMap { given in
                (format == .jpeg ? ["jpg", "jpeg"] : ["heic", "heif"]).contains(given) ? given : nil
            } ?? (format == .jpeg ? "jpg" : "heic")
        for n in 1...1000 {
            let name = n == 1 ? "\(base).\(ext)" : "\(base)-\(n).\(ext)"
            let target = folder.appendingPathComponent(name).path
            if renameNoReplace(temporary, target) == 0 { return name }
            guard errno == EEXIST else { throw fileError(errno, "Cannot put the photo in place") }
        }
        throw UploadPage.UploadError(
            status: .conflict,
            message: "Too many photos are called \(base) on this shelf: rename the file and send it again.")
    }

    /// A rename is kept through a power cut only once its folder is on disk too.
    static func syncFolder(_ folder: URL) {
        let fd = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// rename(2) that fails with EEXIST instead of replacing: `renameat2(RENAME_NOREPLACE)`, looked up at run time
    /// because Glibc's Swift module does not show it.
    private static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
        typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") { // RTLD_DEFAULT
            let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
            let result = renameat2(AT_FDCWD, from, AT_FDCWD, to, 1) // RENAME_NOREPLACE
            if result == 0 || errno != EINVAL && errno != ENOSYS { return result } // else: the file system cannot
        }
        if access(to, F_OK) == 0 { errno = EEXIST; return -1 }
        return rename(from, to)
    }

    // MARK: Leftovers

    /// How old a leftover must be before it is touched: another process (a `shelfd web` beside `watch`) may be
    /// receiving it right now.
    static let leftoverAge: TimeInterval = 5 * 60

    /// At start: every upload temporary under incoming/ (and its shelves) older than `leftoverAge`, from a
    /// server that stopped in the middle of an upload (a crash, a power cut). One that was synced whole is
    /// finished (put in place, as its upload would have); one that was still being written is removed.
    /// Each is named in the log.
    static func tidyLeftovers(incoming: URL, logger: Logger, now: Date) {
        let files = FileManager.default
        let folders =
            [incoming]
            + ((try? files.contentsOfDirectory(atPath: incoming.path)) ?? [])
            .filter { !$0.hasPrefix(".") }.map { incoming.appendingPathComponent($0, isDirectory: true) }
        for folder in folders {
            for name in (try? files.contentsOfDirectory(atPath: folder.path)) ?? [] {
                guard name.hasPrefix(TemporaryFile.prefix), let marker = name.range(of: ".upload-") else { continue }
                let path = folder.appendingPathComponent(name).path
                guard let attributes = try? files.attributesOfItem(atPath: path),
                    attributes[.type] as? FileAttributeType == .typeRegular,
                    let modified = attributes[.modificationDate] as? Date,
                    now.timeIntervalSince(modified) >= leftoverAge
                else { continue }
                let relative = folder == incoming ? name : "\(folder.lastPathComponent)/\(name)"
                if name.hasSuffix(syncedSuffix),
                    let finished = finishLeftover(
                        path, in: folder, base: String(name.dropFirst(TemporaryFile.prefix.count)[..<marker.lowerBound])
                    )
                {
                    let placed = folder == incoming ? finished : "\(folder.lastPathComponent)/\(finished)"
                    logger.notice(
                        "An upload that stopped before its last step was finished",
                        metadata: ["event": "upload_finished", "path": "\(placed)", "leftover": "\(relative)"])
                } else {
                    unlink(path)
                    logger.notice(
                        "An upload that stopped before it was whole was removed; send the photo again",
                        metadata: ["event": "upload_removed", "leftover": "\(relative)"])
                }
            }
        }
    }

    /// A synced leftover put in place: its name, or nil when it is not a photo after all.
    private static func finishLeftover(_ path: String, in folder: URL, base: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        let head = (try? handle.read(upToCount: 64)).map { Array($0) } ?? []
        try? handle.close()
        guard let format = try? checked(head),
            let name = try? place(path, in: folder, base: base, extension: nil, format: format)
        else {
            return nil
        }
        syncFolder(folder)
        return name
    }
}
