import Foundation
import Testing

/// ARCHITECTURE.md's code map says which project targets (and C modules) each target may import. This reads that
/// table and every `import` line under Sources/, so the page stays true and a layer cannot reach past its rule
/// unnoticed: a new import either fits the table or changes it, on purpose.
struct ArchitectureTests {
    /// The repository: this file is Tests/RepositoryTests/ArchitectureTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Each target of the code map with the modules its "may import" column allows, as module names.
    static func allowedImports(targets: [String]) throws -> [String: Set<String>] {
        let page = try String(contentsOf: root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        var allowed: [String: Set<String>] = [:]
        var above: [String] = []
        for line in page.split(separator: "\n") where line.hasPrefix("| `") {
            let columns = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard columns.count >= 5 else { continue }
            let target = columns[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let column = columns[3]
            let names: Set<String>
            if column.hasPrefix("all of the above but ") {
                let except = Set(
                    column.dropFirst("all of the above but ".count).split(separator: ",")
                        .map { "Shelf" + $0.trimmingCharacters(in: .whitespaces) })
                names = Set(above).subtracting(except)
                    .union(targets.filter { $0.hasPrefix("C") && !$0.hasPrefix("Shelf") })
            } else {
                names = Set(
                    column.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                        .filter { $0 != "—" }
                        .map { targets.contains($0) ? $0 : "Shelf" + $0 })
            }
            allowed[target] = names
            above.append(target)
        }
        return allowed
    }

    /// The project modules the sources of `target` import.
    static func imports(of target: String, among targets: Set<String>) throws -> Set<String> {
        let folder = root.appendingPathComponent("Sources/\(target)")
        guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
        var found: Set<String> = []
        for case let file as URL in files where file.pathExtension == "swift" {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
                guard let at = words.firstIndex(of: "import"), at + 1 < words.count,
                    words[..<at].allSatisfy({
                        ["package", "internal", "public", "private", "fileprivate"].contains($0)
                    })
                else { continue }
                let module = String(words[at + 1])
                if targets.contains(module) && module != target { found.insert(module) }
            }
        }
        return found
    }

    @Test("Every target imports only what ARCHITECTURE.md's code map allows it, and every target is in the map")
    func importsFollowTheCodeMap() throws {
        let targets = try FileManager.default.contentsOfDirectory(
            atPath: Self.root.appendingPathComponent("Sources").path
        )
        .filter { !$0.hasPrefix(".") }.sorted()
        #expect(targets.contains("ShelfCore") && targets.contains("shelfd"), "the sources were found: \(targets)")
        let allowed = try Self.allowedImports(targets: targets)
        for target in targets {
            let rule = target.hasPrefix("C") ? allowed["C*"] : allowed[target]
            guard let rule else {
                Issue.record("\(target) has no row in ARCHITECTURE.md's code map")
                continue
            }
            let beyond = try Self.imports(of: target, among: Set(targets)).subtracting(rule)
            #expect(beyond.isEmpty, "\(target) imports \(beyond.sorted()), which ARCHITECTURE.md does not allow it")
        }
    }

    @Test(
        "The layers below the doors do not import the doors or the wiring; the web door meets only the application layer"
    )
    func lowerLayersStayBelow() throws {
        let targets = Set(
            try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path))
        for lower in [
            "ShelfCore", "ShelfStore", "ShelfPipeline", "ShelfOutputs", "ShelfProviders", "ShelfEnrichment", "ShelfApp",
        ] {
            let reached = try Self.imports(of: lower, among: targets).intersection([
                "ShelfDaemon", "ShelfWeb", "shelfd",
            ])
            #expect(reached.isEmpty, "\(lower) imports \(reached.sorted())")
        }
        let web = try Self.imports(of: "ShelfWeb", among: targets).subtracting(["ShelfApp", "ShelfCore", "ShelfConfig"])
        #expect(web.isEmpty, "ShelfWeb imports \(web.sorted())")
    }

    @Test("The configuration reads and builds nothing: no wire format; the pipeline does not read the configuration")
    func configurationStaysValues() throws {
        let targets = Set(
            try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path))
        let config = try Self.imports(of: "ShelfConfig", among: targets)
        #expect(config.subtracting(["ShelfCore"]).isEmpty, "ShelfConfig imports \(config.sorted())")
        #expect(try !Self.imports(of: "ShelfPipeline", among: targets).contains("ShelfConfig"))
    }

    @Test("The command line meets the machinery only through the application layer and the wiring")
    func commandLineStaysAtTheDoor() throws {
        let targets = Set(
            try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path))
        let machinery = try Self.imports(of: "shelfd", among: targets)
            .subtracting(["ShelfApp", "ShelfDaemon", "ShelfWeb", "ShelfCore", "ShelfConfig"])
        #expect(machinery.isEmpty, "shelfd imports \(machinery.sorted())")
    }
}
