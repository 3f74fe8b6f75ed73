import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfProviders
import ShelfWatch

/// One line of `shelfd doctor`.
package struct DoctorCheck: Codable, Sendable {
    package var name: String
    package var ok: Bool
    /// error | warning
    package var severity: String
    package var message: String

    static func pass(_ name: String, _ message: String) -> DoctorCheck { .init(name: name, ok: true, severity: "info", message: message) }
    static func fail(_ name: String, _ message: String) -> DoctorCheck { .init(name: name, ok: false, severity: "error", message: message) }
    static func warn(_ name: String, _ message: String) -> DoctorCheck { .init(name: name, ok: false, severity: "warning", message: message) }
}

/// The checks behind `shelfd doctor`: configuration, keys (never their values), folders, inotify, provider.
package enum DoctorChecks {
    package static func run(config: Configuration, configSource: String?, secrets: Secrets, logger: Logger) async -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        checks.append(.pass("configuration", configSource.map { "read \($0)" } ?? "no file found; built-in defaults"))
        checks.append(keyCheck(config: config, secrets: secrets))
        for (name, folder) in [("root", config.paths.root), ("incoming", config.paths.incoming),
                               ("results", config.paths.results), ("state", config.paths.state)] {
            checks.append(folderCheck(name: name, path: folder))
        }
        checks.append(contentsOf: watchChecks(config: config))
        checks.append(await providerCheck(config: config, secrets: secrets, logger: logger))
        return checks
    }

    static func keyCheck(config: Configuration, secrets: Secrets) -> DoctorCheck {
        if let problem = Runtime.missingKeyProblem(config: config, secrets: secrets) { return .fail("key", problem) }
        guard config.pipeline.provider == .gemini else { return .pass("key", "no key needed") }
        let origin = secrets.origins[.geminiAPIKey].map { $0 == .credential ? "a systemd credential" : "the environment" } ?? "?"
        return .pass("key", "Gemini API key present (from \(origin))")
    }

    static func folderCheck(name: String, path: String) -> DoctorCheck {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            return .warn("folder \(name)", "\(path) does not exist yet; shelfd creates it at start")
        }
        guard isFolder.boolValue else { return .fail("folder \(name)", "\(path) is not a folder") }
        guard access(path, W_OK | X_OK) == 0 else {
            return .fail("folder \(name)", "\(path) is not writable by user \(ProcessInfo.processInfo.userName): \(String(cString: strerror(errno)))")
        }
        return .pass("folder \(name)", "\(path) is writable")
    }

    static func watchChecks(config: Configuration) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        let kind = FileSystemKind.of(path: FileManager.default.fileExists(atPath: config.paths.incoming) ? config.paths.incoming : config.paths.root)
        if kind.prefersPolling {
            checks.append(.warn("watch", "incoming/ is on \(kind.name): inotify does not see changes made by other machines there, so shelfd polls every \(config.watch.pollIntervalS) s"))
        } else {
            checks.append(.pass("watch", "incoming/ is on \(kind.name); watch.mode = \(config.watch.mode.rawValue)"))
        }
        if let raw = try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8),
           let limit = Int(raw.trimmingCharacters(in: .whitespacesAndNewlines)) {
            let folders = countFolders(under: config.paths.incoming)
            if folders * 5 > limit * 4 {
                checks.append(.warn("inotify", "incoming/ has \(folders) folders and the limit is \(limit) watches; raise it: echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/90-shelfd.conf && sudo sysctl --system"))
            } else {
                checks.append(.pass("inotify", "\(folders) folder\(folders == 1 ? "" : "s") to watch; fs.inotify.max_user_watches = \(limit)"))
            }
        }
        return checks
    }

    static func countFolders(under path: String) -> Int {
        guard let walker = FileManager.default.enumerator(at: URL(fileURLWithPath: path), includingPropertiesForKeys: [.isDirectoryKey])
        else { return 0 }
        var count = 1
        for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true { count += 1 }
        return count
    }

    static func providerCheck(config: Configuration, secrets: Secrets, logger: Logger) async -> DoctorCheck {
        guard Runtime.missingKeyProblem(config: config, secrets: secrets) == nil else {
            return .fail("provider", "not asked: no key")
        }
        do {
            let provider = try Runtime.makeProvider(config: config, secrets: secrets, logger: logger)
            switch await provider.checkReachable() {
            case .success(let message): return .pass("provider", message)
            case .failure(let error): return .fail("provider", error.message)
            }
        } catch {
            return .fail("provider", "\(error)")
        }
    }
}
