import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// Which files under the incoming folder are photos to take: an allow-list of image extensions, minus the
/// temporary and metadata files that sync tools, browsers and operating systems leave around.
package struct IgnoreRules: Sendable {
    package enum Verdict: Sendable, Equatable {
        case take
        case ignore(String)
        /// A Syncthing conflict copy: taken, and flagged.
        case conflict
    }

    package static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "heic", "heif", "webp"]

    private let extra: [String]

    package init(extra: [String] = []) {
        self.extra = extra
    }

    /// `path` is relative to the watched root, with `/` between components.
    package func verdict(forRelativePath path: String) -> Verdict {
        let components = path.split(separator: "/").map(String.init)
        guard let name = components.last else { return .ignore("empty path") }
        for folder in components.dropLast() {
            if let reason = Self.folderReason(folder) { return .ignore(reason) }
        }
        if let reason = Self.nameReason(name) { return .ignore(reason) }
        for glob in extra where fnmatch(glob, name, 0) == 0 || fnmatch(glob, path, 0) == 0 {
            return .ignore("matches watch.ignore pattern \(glob)")
        }
        guard let dot = name.lastIndex(of: "."),
            Self.imageExtensions.contains(name[name.index(after: dot)...].lowercased())
        else { return .ignore("not an image file name") }
        return name.contains(".sync-conflict-") ? .conflict : .take
    }

    /// Why a folder (one path component) is never entered, or nil to enter it.
    package static func folderReason(_ name: String) -> String? {
        switch name {
        case "@eaDir", "#recycle", "#snapshot": return "Synology metadata folder"
        case ".stfolder", ".stversions": return "Syncthing folder"
        default:
            if fnmatch(".Trash*", name, 0) == 0 { return "trash folder" }
            if name.hasPrefix(".") { return "hidden folder" }
            return nil
        }
    }

    private static let namePatterns: [(glob: String, reason: String)] = [
        (".syncthing.*.tmp", "Syncthing temporary file"),
        ("~syncthing~*.tmp", "Syncthing temporary file"),
        ("*.part", "partial download"),
        (".*.partial", "partial download"),
        ("*.partial", "partial download"), // rclone: name.XXXXXXXX.partial
        ("*.filepart", "partial upload (WinSCP)"),
        ("*.crdownload", "partial download (Chrome)"),
        ("~*", "temporary or lock file"),
        ("._*", "macOS AppleDouble file"),
        (".DS_Store", "macOS folder metadata"),
        ("Thumbs.db", "Windows thumbnail cache"),
    ]

    private static func nameReason(_ name: String) -> String? {
        for pattern in namePatterns where fnmatch(pattern.glob, name, 0) == 0 {
            return pattern.reason
        }
        if isRsyncTemporary(name) { return "rsync temporary file" }
        if name.hasPrefix(".") { return "hidden file" }
        return nil
    }

    /// rsync writes `.<name>.XXXXXX` (six random letters and digits) and renames it when done.
    private static func isRsyncTemporary(_ name: String) -> Bool {
        guard name.hasPrefix("."), let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        let suffix = name[name.index(after: dot)...]
        return suffix.count == 6 && suffix.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }
}
