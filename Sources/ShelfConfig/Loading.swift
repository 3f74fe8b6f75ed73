import Foundation

extension Configuration {
    /// Where a system-wide configuration lives. A parameter of `load` so tests never read the real one.
    package static let systemPath = "/etc/shelfd/shelfd.toml"

    /// Finds and reads the configuration: the first of `--config` (`explicitPath`), `$SHELFD_CONFIG`,
    /// `$XDG_CONFIG_HOME/shelfd/shelfd.toml` (default `~/.config`), `systemPath`; the built-in
    /// defaults when none exists. `source` is the file used, `nil` for the defaults.
    /// A file named by `--config` or `$SHELFD_CONFIG` must exist: a typo should not silently
    /// fall back to another configuration.
    package static func load(
        explicitPath: String?, environment: [String: String],
        systemPath: String = Configuration.systemPath
    )
        throws(ConfigError) -> (Configuration, source: String?)
    {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }

        if let explicitPath {
            let path = try absolute(explicitPath, home: home, key: "--config")
            guard exists(path) else {
                throw ConfigError(
                    .notFound,
                    "No configuration file at \(path) (given with --config). Check the path, or leave "
                        + "out --config to use $SHELFD_CONFIG, ~/.config/shelfd/shelfd.toml or \(systemPath).",
                    file: path)
            }
            return (try parseFile(path, environment: environment), path)
        }
        if let named = environment["SHELFD_CONFIG"], !named.isEmpty {
            let path = try absolute(named, home: home, key: "SHELFD_CONFIG")
            guard exists(path) else {
                throw ConfigError(
                    .notFound,
                    "SHELFD_CONFIG names \(path), which does not exist. Fix the path, or unset "
                        + "SHELFD_CONFIG to use ~/.config/shelfd/shelfd.toml or \(systemPath).", file: path)
            }
            return (try parseFile(path, environment: environment), path)
        }

        // XDG says a relative XDG_CONFIG_HOME is invalid and must be ignored.
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? home.map { PathRules.join($0, ".config") }
        let userPath = configHome.map { PathRules.join($0, "shelfd/shelfd.toml") }
        for path in [userPath, systemPath].compactMap({ $0 }) where exists(path) {
            return (try parseFile(path, environment: environment), path)
        }

        guard let home else {
            throw ConfigError(
                .noHome,
                "No configuration file found (tried $SHELFD_CONFIG and \(systemPath)), and $HOME is "
                    + "not set, so the default folders (~/Shelves) have no place. Pass --config FILE or set HOME.")
        }
        return (defaults(home: home), nil)
    }

    /// Reads and parses one file.
    package static func parseFile(_ path: String, environment: [String: String]) throws(ConfigError) -> Configuration {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw ConfigError(
                .unreadable,
                "\(path) is a folder; the configuration is a file. Pass the file, for example "
                    + "--config \(PathRules.join(path, "shelfd.toml")).", file: path)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(
                .unreadable,
                "Cannot read \(path): check that the user running shelfd may read it "
                    + "(ls -l \(path)).", file: path)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(.unreadable, "\(path) is not UTF-8 text; save it as UTF-8.", file: path)
        }
        return try parse(toml: text, file: path, environment: environment)
    }

    private static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }

    /// A path given on the command line or in the environment: `~` expanded, made absolute.
    private static func absolute(_ path: String, home: String?, key: String) throws(ConfigError) -> String {
        try PathRules.resolve(path, key: key, home: home, base: FileManager.default.currentDirectoryPath, file: nil)
    }
}
