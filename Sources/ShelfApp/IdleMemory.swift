import CMalloc
import Foundation

/// What the daemon gives back when the queue goes idle. Measured on the release build at 25 s after start
/// (offline default, nothing queued), about half the resident memory is start-up code and read-only data of
/// the binary and its libraries (argument parsing, configuration, Foundation, the dynamic loader's
/// relocations), mapped from the files and not needed again until a photo arrives.
package enum IdleMemory {
    /// `MADV_PAGEOUT` (Linux 5.4): reclaim these pages now; the Glibc module does not export it. Older
    /// kernels answer EINVAL, which changes nothing.
    private static let pageOut: Int32 = 21

    /// The daemon's threads share two malloc arenas instead of up to eight per core: memory a batch freed
    /// on one thread is reused by the next batch instead of staying spread over idle arenas. Called first
    /// thing in `main`: glibc gives each new thread an arena of its own until the limit, and keeps them.
    package static func limitArenas() {
        _ = mallopt(M_ARENA_MAX, 2)
    }

    /// Frees malloc's unused pages, and asks the kernel to reclaim the read-only pages mapped from files.
    /// Safe on any mapping: a page that is used again is read back from the page cache or the file.
    package static func release() {
        malloc_trim(0)
        guard let maps = FileManager.default.contents(atPath: "/proc/self/maps"),
            let text = String(data: maps, encoding: .utf8)
        else { return }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // address perms offset device inode path: only files (not the heap or stacks), never writable ones.
            guard fields.count >= 6, fields[5].hasPrefix("/"), fields[1].hasPrefix("r"), !fields[1].contains("w") else {
                continue
            }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let low = UInt(bounds[0], radix: 16), let high = UInt(bounds[1], radix: 16),
                high > low,
                let start = UnsafeMutableRawPointer(bitPattern: low)
            else { continue }
            _ = madvise(start, Int(high - low), pageOut)
        }
    }
}
