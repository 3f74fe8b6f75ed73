import Foundation

/// A PostgreSQL server of the tests' own: initdb into a temporary folder, `postgres` on a free loopback port
/// (its unix socket in the same folder), trust authentication for the superuser `postgres`. No system service
/// is used or started. `close()` stops it (fast shutdown) and deletes the folder.
///
/// PostgreSQL refuses to run as root: when the tests run as root, initdb and the server run as `nobody`
/// (through setpriv), in a folder given to `nobody`. The binaries come from Debian's `postgresql` package,
/// which scripts/install-deps.sh installs; `SHELFD_PG_BIN` names another folder of them.
package final class PostgresServer: @unchecked Sendable { // unchecked: `process` is only touched by close()
    package let host = "127.0.0.1"
    package let port: Int
    package let user = "postgres"
    /// The folder of the data directory, the socket and the log.
    package let directory: URL
    private let binaries: URL
    private let process: Process
    private var closed = false
    private let databases = DatabaseNumbers()

    private init(port: Int, directory: URL, binaries: URL, process: Process) {
        self.port = port; self.directory = directory; self.binaries = binaries; self.process = process
    }

    /// Makes and starts a server; waits until it accepts connections.
    package static func start() async throws -> PostgresServer {
        let binaries = try findBinaries()
        let directory = URL(fileURLWithPath: "/tmp/shelfd-pg-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        do {
            try giveToServerUser(directory)
            let data = directory.appendingPathComponent("data").path
            try run(
                binaries.appendingPathComponent("initdb"),
                [
                    "-D", data, "-U", "postgres", "--auth=trust", "--no-locale",
                    "-E", "UTF8", "--no-sync",
                ], asServerUser: true)
            // A port free a moment ago may be taken by the time the server binds it: try another.
            var lastError: (any Error)?
            for _ in 0..<3 {
                let port = try freeLoopbackPort()
                let process = try launch(
                    binaries.appendingPathComponent("postgres"),
                    [
                        "-D", data, "-p", "\(port)", "-k", directory.path, "-c", "listen_addresses=127.0.0.1",
                        // A throwaway server: durability is not wanted, speed is.
                        "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                        "-c", "max_connections=100",
                    ], log: directory.appendingPathComponent("server.log"))
                let server = PostgresServer(port: port, directory: directory, binaries: binaries, process: process)
                do {
                    try await server.waitUntilReady()
                    return server
                } catch {
                    lastError = error
                    server.stopProcess()
                }
            }
            throw lastError ?? PostgresServerError("PostgreSQL did not start")
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// A new, empty database on this server; returns its name. Each test takes its own.
    package func createDatabase() throws -> String {
        let name = "shelfd_\(databases.next())"
        try Self.run(
            binaries.appendingPathComponent("createdb"), ["-h", host, "-p", "\(port)", "-U", user, name],
            asServerUser: false)
        return name
    }

    /// Runs SQL in `database` with psql, as an administrator would (a test's way to break or inspect a database).
    @discardableResult
    package func psql(_ sql: String, database: String) throws -> String {
        try Self.run(
            binaries.appendingPathComponent("psql"),
            ["-h", host, "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-tA", "-c", sql],
            asServerUser: false)
    }

    /// Runs a file of SQL in `database` with psql (a dump to restore).
    package func psql(file: URL, database: String) throws {
        try Self.run(
            binaries.appendingPathComponent("psql"),
            ["-h", host, "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-q", "-f", file.path],
            asServerUser: false)
    }

    /// The URL `[store] url` would hold for `database` (no password: trust authentication).
    package func url(database: String) -> String { "postgresql://\(user)@\(host):\(port)/\(database)" }

    /// Stops the server (fast shutdown: open connections are ended) and deletes its folder.
    package func close() {
        guard !closed else { return }
        closed = true
        stopProcess()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { close() }

    private func stopProcess() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGINT) // PostgreSQL's fast shutdown
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    private func waitUntilReady() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                throw PostgresServerError("postgres exited at start (port \(port)): \(serverLog())")
            }
            if (try? Self.run(
                binaries.appendingPathComponent("pg_isready"),
                ["-q", "-h", host, "-p", "\(port)", "-U", user, "-d", "postgres"], asServerUser: false)) != nil
            {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PostgresServerError("postgres did not accept connections within 60 s: \(serverLog())")
    }

    private func serverLog() -> String {
        let text = (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
        return String(text.suffix(2000))
    }

    // MARK: - Processes

    /// The newest /usr/lib/postgresql/<version>/bin with initdb in it, or `SHELFD_PG_BIN`.
    private static func findBinaries() throws -> URL {
        if let folder = ProcessInfo.processInfo.environment["SHELFD_PG_BIN"], !folder.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: "\(folder)/initdb") else {
                throw PostgresServerError(
                    "SHELFD_PG_BIN=\(folder) has no initdb: name the bin folder of a PostgreSQL server")
            }
            return URL(fileURLWithPath: folder, isDirectory: true)
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .filter { FileManager.default.isExecutableFile(atPath: "\(root)/\($0)/bin/initdb") }
            .sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        guard let newest = versions.first else {
            throw PostgresServerError(
                "No PostgreSQL server found in \(root)/<version>/bin: run scripts/install-deps.sh "
                    + "(it installs Debian's postgresql package), or set SHELFD_PG_BIN to a folder with initdb and postgres"
            )
        }
        return URL(fileURLWithPath: "\(root)/\(newest)/bin", isDirectory: true)
    }

    private static var runningAsRoot: Bool { getuid() == 0 }

    /// The account the server runs as when the tests run as root.
    private static func serverAccount() throws -> (uid: uid_t, gid: gid_t) {
        guard let entry = getpwnam("nobody") else {
            throw PostgresServerError("No user `nobody` to run PostgreSQL as (it refuses root)")
        }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    private static func giveToServerUser(_ directory: URL) throws {
        guard runningAsRoot else { return }
        let account = try serverAccount()
        guard chown(directory.path, account.uid, account.gid) == 0, chmod(directory.path, 0o700) == 0 else {
            throw PostgresServerError("Could not give \(directory.path) to nobody: \(String(cString: strerror(errno)))")
        }
    }

    /// The command line that runs `tool` as the server's account: itself, or through setpriv when root.
    private static func commandLine(_ tool: URL, _ arguments: [String], asServerUser: Bool) throws -> (URL, [String]) {
        guard asServerUser && runningAsRoot else { return (tool, arguments) }
        let account = try serverAccount()
        return (
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=\(account.uid)", "--regid=\(account.gid)", "--clear-groups", "--", tool.path] + arguments
        )
    }

    private static func launch(_ tool: URL, _ arguments: [String], log: URL) throws -> Process {
        let (executable, arguments) = try commandLine(tool, arguments, asServerUser: true)
        try Data().write(to: log)
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        process.currentDirectoryURL = log.deletingLastPathComponent()
        try process.run()
        return process
    }

    /// Runs a tool to its end; throws with its output when it fails.
    @discardableResult
    private static func run(_ tool: URL, _ arguments: [String], asServerUser: Bool) throws -> String {
        let (executable, arguments) = try commandLine(tool, arguments, asServerUser: asServerUser)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        // initdb and createdb change to the current folder's parent paths: start them somewhere anyone may read.
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PostgresServerError("\(tool.lastPathComponent) failed (exit \(process.terminationStatus)): \(output)")
        }
        return output
    }
}

/// Runs `body` with a started PostgreSQL server, stopped and deleted afterwards, whether `body` throws or not.
package func withPostgres<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (PostgresServer) async throws -> T
) async throws -> T {
    let server = try await PostgresServer.start()
    defer { server.close() }
    return try await body(server)
}

package struct PostgresServerError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}

private final class DatabaseNumbers: @unchecked Sendable { // unchecked: `value` only under `lock`
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.withLock {
            value += 1; return value
        }
    }
}
