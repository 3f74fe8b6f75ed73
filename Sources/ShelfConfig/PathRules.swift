/// Path arithmetic on plain strings. Lexical on purpose: the folders may not exist yet when the
/// configuration is read, so nothing here touches the disk.
enum PathRules {
    static func join(_ base: String, _ component: String) -> String {
        base.hasSuffix("/") ? base + component : base + "/" + component
    }

    /// Removes `.`, `..`, repeated and trailing slashes from an absolute path.
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// Whether `path` is `folder` or somewhere below it. Both must be normalized.
    static func isInside(_ path: String, _ folder: String) -> Bool {
        path == folder || path.hasPrefix(folder == "/" ? "/" : folder + "/")
    }

    /// `~` and `~/…` from `home`; absolute paths as they are; anything else relative to `base`.
    /// `home == nil` is only an error when the path needs it.
    static func resolve(
        _ raw: String, key: String, home: String?, base: String,
        file: String?
    ) throws(ConfigError) -> String {
        let place = file.map { " in \($0)" } ?? ""
        guard !raw.isEmpty else {
            throw ConfigError(
                .invalidValue, "\(key) is empty\(place). Write a path, for example \"~/Shelves\".",
                file: file, key: key)
        }
        if raw == "~" || raw.hasPrefix("~/") {
            guard let home, home.hasPrefix("/") else {
                throw ConfigError(
                    .noHome,
                    "\(key) = \"\(raw)\"\(place) starts with ~, but $HOME is not set (or not absolute). "
                        + "Set HOME (a systemd unit with User= gets one) or write the full path.",
                    file: file, key: key)
            }
            return normalize(home + "/" + raw.dropFirst())
        }
        if raw.hasPrefix("~") {
            throw ConfigError(
                .invalidValue, "\(key) = \"\(raw)\"\(place): ~user paths are not supported. Write the full path.",
                file: file, key: key)
        }
        return normalize(raw.hasPrefix("/") ? raw : join(base, raw))
    }
}
