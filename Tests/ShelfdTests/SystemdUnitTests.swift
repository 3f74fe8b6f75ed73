import Foundation
import Testing

@Suite("systemd units")
struct SystemdUnitTests {
    static let analyzer = "/usr/bin/systemd-analyze"

    @Test("The system units pass systemd-analyze verify", .enabled(if: FileManager.default.isExecutableFile(atPath: analyzer)))
    func systemUnitsVerify() async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-units-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var units: [String] = []
        for name in ["shelfd.service", "shelfd-rescan.service", "shelfd-rescan.timer"] {
            // verify checks that ExecStart exists: point it at the binary the tests built.
            let text = try String(contentsOf: repository.appendingPathComponent("systemd/system/\(name)"), encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/shelfd", with: ShelfRoot.binary.path)
            let url = folder.appendingPathComponent(name)
            try text.write(to: url, atomically: true, encoding: .utf8)
            units.append(url.path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.analyzer)
        process.arguments = ["verify"] + units
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
}
