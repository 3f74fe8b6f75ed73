import Foundation
import ShelfCore
import ShelfDigest
import ShelfImaging
import ShelfStore
import ShelfTesting
import Testing

/// What a finished `shelfd` command left behind.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// A temporary home for one test: ~/Shelves-like root, a state folder, a configuration file,
/// and the built `shelfd` binary run against them as a person would.
final class ShelfRoot: @unchecked Sendable {
    let base: URL
    var root: URL { base.appendingPathComponent("Shelves") }
    var incoming: URL { root.appendingPathComponent("incoming") }
    var results: URL { root.appendingPathComponent("results") }
    var state: URL { base.appendingPathComponent("state") }
    var configFile: URL { base.appendingPathComponent("shelfd.toml") }
    var environment: [String: String]

    /// `overrides` replace or add keys per section, as raw TOML values: `["pipeline": ["batch_size": "2"]]`.
    /// A root whose Cloudflare section points at `cloudflareURL`, with the emulator's token and account.
    convenience init(geminiURL: String? = nil, cloudflareURL: String, overrides: [String: [String: String]] = [:])
        throws
    {
        var overrides = overrides
        overrides["cloudflare", default: [:]]["base_url"] = "\"\(cloudflareURL)\""
        try self.init(geminiURL: geminiURL, overrides: overrides)
        environment["CLOUDFLARE_API_TOKEN"] = CloudflareEmulator.defaultToken
        environment["CLOUDFLARE_ACCOUNT_ID"] = CloudflareEmulator.defaultAccount
    }

    init(
        geminiURL: String? = nil, apiKey: String? = GeminiEmulator.defaultKey,
        overrides: [String: [String: String]] = [:]
    ) throws {
        base = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-it-\(UUID().uuidString.prefix(8))")
        environment = ["HOME": base.path, "PATH": "/usr/bin:/bin"]
        if let apiKey { environment["GEMINI_API_KEY"] = apiKey }
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        try writeConfig(geminiURL: geminiURL, overrides: overrides)
    }

    deinit { try? FileManager.default.removeItem(at: base) }

    func writeConfig(geminiURL: String?, overrides: [String: [String: String]] = [:]) throws {
        var sections: [String: [String: String]] = [
            "paths": ["root": "\"\(root.path)\"", "state": "\"\(state.path)\""],
            "pipeline": ["concurrency": "2", "max_attempts": "3"],
            "watch": ["settle_ms": "300", "mode": "\"inotify\""],
            "gemini": ["requests_per_minute": "6000", "timeout_s": "20"],
            // The local catalogue only: no test reaches OpenLibrary or Google Books (their emulators are opted into).
            "enrich": ["sources": "[\"catalogue\"]"],
            // A port of its own for every daemon: tests never meet on 8787 (the address is read with `webURL`).
            "web": ["listen": "\"127.0.0.1:0\""],
        ]
        if let geminiURL { sections["gemini"]?["base_url"] = "\"\(geminiURL)\"" }
        for (section, keys) in overrides { sections[section, default: [:]].merge(keys) { $1 } }
        let text =
            sections.keys.sorted().map { section in
                "[\(section)]\n"
                    + sections[section]!.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(
                        separator: "\n")
            }.joined(separator: "\n\n") + "\n"
        try text.write(to: configFile, atomically: true, encoding: .utf8)
    }

    // MARK: Photos

    @discardableResult
    func drop(_ bytes: [UInt8], as name: String) throws -> URL {
        let url = incoming.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        return url
    }

    /// Writes the photo in `chunks` pieces with pauses between them, as a slow network copy does.
    func dropSlowly(_ bytes: [UInt8], as name: String, chunks: Int, pause: Duration) async throws {
        let url = incoming.appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        let size = (bytes.count + chunks - 1) / chunks
        for start in stride(from: 0, to: bytes.count, by: size) {
            try handle.write(contentsOf: Data(bytes[start..<min(bytes.count, start + size)]))
            try await Task.sleep(for: pause)
        }
        try handle.close()
    }

    /// Writes under a sync tool's temporary name, then renames into place.
    func dropViaRename(_ bytes: [UInt8], as name: String) throws {
        let temp = incoming.appendingPathComponent(".syncthing.\(name).tmp")
        try Data(bytes).write(to: temp)
        try FileManager.default.moveItem(at: temp, to: incoming.appendingPathComponent(name))
    }

    // MARK: Running shelfd

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The `shelfd` the tests run: the one `SHELFD_BINARY` names (`scripts/test.sh` names README's release build when
    /// it is built from the current sources), otherwise the one built beside this test bundle (ShelfdTests depends on
    /// the executable, so `swift build --build-tests` builds it first). `staleBinary` refuses either if it is old.
    static let binary: URL = {
        if let named = ProcessInfo.processInfo.environment["SHELFD_BINARY"] { return URL(fileURLWithPath: named) }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("shelfd")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return repository.appendingPathComponent(".build/debug/shelfd")
    }()

    /// Why `binary` must not be run: missing, or older than a source file (it would test old code).
    static let staleBinary: String? = staleness(of: binary, sources: repository.appendingPathComponent("Sources"))

    static func staleness(of binary: URL, sources: URL) -> String? {
        func modified(_ url: URL) -> Date? {
            (try? url.resourceValues(forKeys: [.contentModificationDateKey]))?.contentModificationDate
        }
        guard FileManager.default.isExecutableFile(atPath: binary.path), let built = modified(binary) else {
            return "No shelfd binary at \(binary.path): run 'swift build' (or 'swift test' without --skip-build)."
        }
        let walker = FileManager.default.enumerator(
            at: sources, includingPropertiesForKeys: [.contentModificationDateKey])
        while let url = walker?.nextObject() as? URL {
            if let changed = modified(url), changed > built, !url.hasDirectoryPath {
                return
                    "\(binary.path) is older than \(url.path): the tests would run old code. Run 'swift build' first."
            }
        }
        return nil
    }

    /// Run commands as `nobody` (root reads any file, so a permissions test needs someone else).
    var asUnprivilegedUser = false

    func process(_ arguments: [String], environment extra: [String: String] = [:], logName: String) throws -> (
        Process, URL, URL
    ) {
        if let problem = Self.staleBinary { throw StaleBinary(description: problem) }
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments + ["--config", configFile.path]
        if asUnprivilegedUser && getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments =
                ["--reuid=65534", "--regid=65534", "--clear-groups", Self.binary.path] + process.arguments!
        }
        process.environment = environment.merging(extra) { $1 }
        let out = base.appendingPathComponent("\(logName).out"), err = base.appendingPathComponent("\(logName).err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        return (process, out, err)
    }

    /// Runs a command to completion (killed after `timeout`).
    func shelfd(_ arguments: String..., environment extra: [String: String] = [:], timeout: Duration = .seconds(60))
        async throws -> CommandResult
    {
        try await shelfd(arguments, environment: extra, timeout: timeout)
    }

    func shelfd(_ arguments: [String], environment extra: [String: String] = [:], timeout: Duration = .seconds(60))
        async throws -> CommandResult
    {
        let (process, out, err) = try self.process(
            arguments, environment: extra, logName: "cmd-\(UUID().uuidString.prefix(6))")
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate(); Issue.record("shelfd \(arguments) timed out"); break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    /// Starts `shelfd watch` in the background.
    func startDaemon(environment extra: [String: String] = [:]) throws -> Daemon {
        let (process, _, err) = try self.process(
            ["watch"], environment: extra, logName: "daemon-\(UUID().uuidString.prefix(6))")
        try process.run()
        return Daemon(process: process, log: err)
    }

    func status() async throws -> StatusDocument {
        let result = try await shelfd("status", "--json")
        do {
            return try JSONStyle.decoder().decode(StatusDocument.self, from: Data(result.stdout.utf8))
        } catch {
            Issue.record("status --json was not a status document: \(result.stdout) \(result.stderr)")
            throw error
        }
    }

    func resultDocuments() throws -> [ResultDocument] {
        // The current results only: earlier runs kept under results/.history/ are hidden.
        guard
            let walker = FileManager.default.enumerator(
                at: results, includingPropertiesForKeys: nil,
                options: .skipsHiddenFiles)
        else { return [] }
        var documents: [ResultDocument] = []
        for case let url as URL in walker where url.pathExtension == "json" && !url.lastPathComponent.hasPrefix(".") {
            documents.append(try JSONStyle.decoder().decode(ResultDocument.self, from: Data(contentsOf: url)))
        }
        return documents.sorted { $0.photo.path < $1.photo.path }
    }

    /// The web page's address, once the server of `watch` or `shelfd web` listens.
    func webURL(timeout: Duration = .seconds(30)) async throws -> String {
        var url: String?
        try await waitUntil("the web server listens", timeout: timeout) {
            url = try Store.openForReading(path: state.appendingPathComponent("shelfd.db").path)?.settings.value(
                "web.url")
            return url?.isEmpty == false
        }
        return url!.hasSuffix("/") ? String(url!.dropLast()) : url!
    }

    /// Starts `shelfd web` in the background.
    func startWeb(environment extra: [String: String] = [:]) throws -> Daemon {
        let (process, _, err) = try self.process(
            ["web"], environment: extra, logName: "web-\(UUID().uuidString.prefix(6))")
        try process.run()
        return Daemon(process: process, log: err)
    }

    func library() throws -> LibraryDocument {
        try JSONStyle.decoder().decode(
            LibraryDocument.self, from: Data(contentsOf: root.appendingPathComponent("library.json")))
    }
}

/// A running `shelfd watch`.
final class Daemon: @unchecked Sendable {
    let process: Process
    let log: URL

    init(process: Process, log: URL) { self.process = process; self.log = log }

    /// A test that failed before stopping its daemon does not leave it running after the suite.
    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// SIGTERM, then wait for the exit; returns the exit status.
    func stop(timeout: Duration = .seconds(40)) async throws -> Int32 {
        process.terminate()
        return try await waitForExit(timeout: timeout)
    }

    func kill9() async throws {
        kill(process.processIdentifier, SIGKILL)
        _ = try await waitForExit(timeout: .seconds(10))
    }

    func waitForExit(timeout: Duration) async throws -> Int32 {
        try await waitUntil("the daemon exits", timeout: timeout) { !self.process.isRunning }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// The binary the tests would run is not the one built from the current sources.
struct StaleBinary: Error, CustomStringConvertible { var description: String }

/// The sha256 of what shelfd sends a provider for this photo (upright, resized to the preset, re-encoded):
/// how an emulator's request log names it.
func sentSHA256(_ photo: [UInt8], preset: ImagePreset = .gemini) -> String {
    (try? Preprocessor.prepare(photo, preset: preset)).map { SHA256.hex(of: $0.jpeg) } ?? "unpreparable"
}
