import Foundation
import ShelfCore
import ShelfHTTP
import ShelfRuntimeTesting
import ShelfStore
import ShelfTesting
import Testing

/// What a finished `shelfd` command left behind.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

extension ShelfRoot {
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

    /// The session a browser gets from a page: its cookie and the CSRF token its forms carry.
    func session(_ url: String, _ path: String = "/library") async throws -> (cookie: String, token: String) {
        let response = try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(url: url + path))
        let cookie = try #require(
            response.header("Set-Cookie")?.split(separator: ";").first.map(String.init), "a session cookie")
        return (cookie, String(decoding: response.body, as: UTF8.self).csrfToken)
    }

    /// Starts `shelfd web` in the background.
    func startWeb(environment extra: [String: String] = [:]) throws -> Daemon {
        let (process, _, err) = try self.process(
            ["web"], environment: extra, logName: "web-\(UUID().uuidString.prefix(6))")
        try process.run()
        return Daemon(process: process, log: err)
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
