import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// The file system a path lives on, from `statfs`'s magic number.
package enum FileSystemKind {
    /// `prefersPolling`: inotify only sees changes made through this kernel, so changes made by another
    /// host (network shares), a FUSE daemon or a container's lower layer would go unnoticed.
    package static func of(path: String) -> (name: String, prefersPolling: Bool) {
        guard let statfs = statfsFunction else { return ("unknown", false) }
        // struct statfs is 120 bytes on 64-bit Linux; f_type, a C long, comes first on every architecture.
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 16)
        defer { buffer.deallocate() }
        guard statfs(path, buffer) == 0 else { return ("unknown", false) }
        let magic = UInt32(truncatingIfNeeded: buffer.load(as: Int.self))
        return known[magic] ?? (String(format: "0x%08x", magic), false)
    }

    private typealias StatFS = @convention(c) (UnsafePointer<CChar>, UnsafeMutableRawPointer) -> Int32

    /// Glibc's Swift module leaves out <sys/statfs.h>, so the function is looked up in the C library.
    private static let statfsFunction: StatFS? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "statfs") else { return nil } // RTLD_DEFAULT
        return unsafeBitCast(symbol, to: StatFS.self)
    }()

    private static let known: [UInt32: (name: String, prefersPolling: Bool)] = [
        0x0000_EF53: ("ext4", false),
        0x9123_683E: ("btrfs", false),
        0x5846_5342: ("xfs", false),
        0x2FC1_2FC1: ("zfs", false),
        0x0102_1994: ("tmpfs", false),
        0xF2F5_2010: ("f2fs", false),
        0x0000_4D44: ("vfat", false),
        0x2011_BAB0: ("exfat", false),
        0x5346_544E: ("ntfs", false),
        0x0000_9FA0: ("proc", false),
        0x6265_6572: ("sysfs", false),
        0x7371_7368: ("squashfs", false),
        0x0000_6969: ("nfs", true),
        0x0000_517B: ("smb", true),
        0xFF53_4D42: ("cifs", true),
        0xFE53_4D42: ("smb2", true),
        0x6573_5546: ("fuse", true),
        0x0102_1997: ("9p", true),
        0x794C_7630: ("overlay", true),
        0x00C3_6400: ("ceph", true),
    ]
}
