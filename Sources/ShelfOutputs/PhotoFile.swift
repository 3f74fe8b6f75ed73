import Foundation
import ShelfCore

/// A photo's bytes from disk, read once, with the errors that say what to do (the file is gone, its
/// permissions, a failed read). The pipeline reads a job's photo with it; the review crops read originals.
package enum PhotoFile {
    package static func read(_ path: String) -> Result<[UInt8], PhotoError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT {
                return .failure(PhotoError(.photoVanished, "the file is gone", disposition: .dead))
            }
            let hint =
                code == EACCES
                ? " (check its permissions: shelfd runs as user \(ProcessInfo.processInfo.userName))" : ""
            return .failure(
                PhotoError(
                    .permissionDenied, "cannot open: \(String(cString: strerror(code)))\(hint)", disposition: .dead))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(
                    PhotoError(.unreadableImage, "read failed: \(String(cString: strerror(errno)))", disposition: .dead)
                )
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return .success(bytes)
    }
}
