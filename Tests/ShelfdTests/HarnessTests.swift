import Foundation
import ShelfRuntimeTesting
import Testing

@Suite("The binary the tests run")
struct HarnessTests {
    @Test("A missing binary, or one older than a source file, is refused; a fresh one is run")
    func staleBinaryIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shelfd-harness-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sources = folder.appendingPathComponent("Sources/shelfd"), binary = folder.appendingPathComponent("shelfd")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        let source = sources.appendingPathComponent("Main.swift")
        try "print(1)".write(to: source, atomically: true, encoding: .utf8)
        #expect(
            ShelfRoot.staleness(of: binary, sources: folder.appendingPathComponent("Sources"))?.contains(
                "No shelfd binary") == true)

        _ = FileManager.default.createFile(
            atPath: binary.path, contents: Data("#!/bin/sh\n".utf8),
            attributes: [.posixPermissions: 0o755])
        let now = Date()
        try FileManager.default.setAttributes(
            [.modificationDate: now.addingTimeInterval(-60)], ofItemAtPath: binary.path)
        try FileManager.default.setAttributes([.modificationDate: now], ofItemAtPath: source.path)
        let stale = try #require(ShelfRoot.staleness(of: binary, sources: folder.appendingPathComponent("Sources")))
        #expect(stale.contains("Main.swift") && stale.contains("older"))

        try FileManager.default.setAttributes(
            [.modificationDate: now.addingTimeInterval(60)], ofItemAtPath: binary.path)
        #expect(ShelfRoot.staleness(of: binary, sources: folder.appendingPathComponent("Sources")) == nil)
        #expect(ShelfRoot.staleBinary == nil, "the binary under test is built from the current sources")
    }
}
