import Foundation
import ShelfConfig
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("systemd units", .serialized)
struct SystemdUnitTests {
    static let analyzer = "/usr/bin/systemd-analyze"
    static let repository = ShelfRoot.repository
    static let services = [
        "system/shelfd.service", "system/shelfd-rescan.service",
        "user/shelfd.service", "user/shelfd-rescan.service",
    ]

    static func unit(_ name: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
    }

    /// The values of `key=` lines.
    static func values(of key: String, in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)) : nil
        }
    }

    @Test(
        "The units pass systemd-analyze verify, with the man page they name installed",
        .enabled(if: FileManager.default.isExecutableFile(atPath: analyzer)), arguments: ["system", "user"])
    func unitsVerify(scope: String) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shelfd-units-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let units = folder.appendingPathComponent("units"), home = folder.appendingPathComponent("home")
        let man = folder.appendingPathComponent("man"), runtime = folder.appendingPathComponent("runtime")
        for directory in [
            units, home.appendingPathComponent(".local/bin"), man.appendingPathComponent("man1"), runtime,
        ] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        // verify runs `man` for each Documentation= page: only the manual this repository ships is there.
        try FileManager.default.copyItem(
            at: Self.repository.appendingPathComponent("docs/shelfd.1"),
            to: man.appendingPathComponent("man1/shelfd.1"))
        // verify checks that ExecStart exists: point it at the binary the tests built (user units: %h/.local/bin).
        try FileManager.default.createSymbolicLink(
            at: home.appendingPathComponent(".local/bin/shelfd"),
            withDestinationURL: ShelfRoot.binary)
        var paths: [String] = []
        for name in ["shelfd.service", "shelfd-rescan.service", "shelfd-rescan.timer"] {
            let text = try Self.unit("\(scope)/\(name)").replacingOccurrences(
                of: "/usr/local/bin/shelfd", with: ShelfRoot.binary.path)
            let url = units.appendingPathComponent(name)
            try text.write(to: url, atomically: true, encoding: .utf8)
            paths.append(url.path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.analyzer)
        process.arguments = (scope == "user" ? ["--user"] : []) + ["verify"] + paths
        process.environment = [
            "PATH": "/usr/bin:/bin", "HOME": home.path, "MANPATH": man.path, "XDG_RUNTIME_DIR": runtime.path,
        ]
        let log = folder.appendingPathComponent("verify.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        // Wait without holding one of the test runner's few threads.
        try await waitUntil("systemd-analyze finishes", timeout: .seconds(120)) { !process.isRunning }
        process.waitUntilExit()
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.isEmpty, "\(text)")
    }

    @Test("Every service loads every secret shelfd reads, and a missing file is not an error", arguments: services)
    func servicesLoadEverySecret(unit: String) throws {
        let text = try Self.unit(unit)
        let loaded = Self.values(of: "LoadCredential", in: text), fallbacks = Self.values(of: "SetCredential", in: text)
        for name in Secrets.Name.allCases.map(\.credentialName) {
            #expect(
                loaded.contains { $0.hasPrefix("\(name):") && $0.hasSuffix("/\(name)") },
                "\(unit) does not load \(name)")
            // systemd fails a unit whose LoadCredential= file is missing, unless SetCredential= gives a default
            // for the same name; one newline, which shelfd reads as no secret.
            #expect(fallbacks.contains("\(name):\\n"), "\(unit): a missing \(name) file would stop the unit")
        }
    }

    @Test("Every Documentation= of the units is a shipped page, and the manual names every command")
    func documentationExists() async throws {
        let manual = try String(contentsOf: Self.repository.appendingPathComponent("docs/shelfd.1"), encoding: .utf8)
        for folder in ["system", "user"] {
            for name in try FileManager.default.contentsOfDirectory(
                atPath: Self.repository.appendingPathComponent("systemd/\(folder)").path)
            {
                let pages = Self.values(of: "Documentation", in: try Self.unit("\(folder)/\(name)"))
                    .flatMap { $0.split(separator: " ").map(String.init) }
                #expect(!pages.isEmpty, "\(folder)/\(name) names no documentation")
                for page in pages {
                    #expect(
                        page == "man:shelfd(1)",
                        "\(folder)/\(name) names \(page), which is not shipped (docs/ has shelfd.1)")
                }
            }
        }
        // The manual is generated from the commands (scripts/make-manual.sh): a command added since is missing.
        let help = try await ShelfRoot().shelfd("--help")
        let commands =
            help.stdout.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n")
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
            .filter { $0 != "See" } ?? []
        #expect(commands.count >= 10, "\(help.stdout)")
        for command in commands {
            #expect(
                manual.contains(".It Em \(command)\n"), "docs/shelfd.1 lacks '\(command)': run scripts/make-manual.sh")
        }
    }

    @Test(
        "With only some credential files present (the others are systemd's one-newline default), shelfd reads with the key it has",
        .timeLimit(.minutes(1)))
    func startsWithSomeCredentialsAbsent() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL, apiKey: nil)
            let credentials = root.base.appendingPathComponent("credentials")
            try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
            for name in Secrets.Name.allCases.map(\.credentialName) {
                let value = name == "gemini_api_key" ? GeminiEmulator.defaultKey : "\n"
                try value.write(to: credentials.appendingPathComponent(name), atomically: true, encoding: .utf8)
            }
            try root.drop(JPEGFactory.shelf(seed: 900), as: "a.jpg")
            let run = try await root.shelfd("run", environment: ["CREDENTIALS_DIRECTORY": credentials.path])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(gemini.requests.map(\.status) == [200], "the key came from its credential file")
            #expect(try root.resultDocuments().first?.books.map(\.title) == ["Dune"])
        }
    }
}
