import ArgumentParser
import Foundation
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the configuration, keys, folders, inotify limits and the provider. Keys are never printed.",
        discussion: "Exits 0 when every check passes, 1 otherwise.")

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print the checks as JSON.") var json = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let loaded: (Configuration, String?)
        do { loaded = try Configuration.load(explicitPath: global.config, environment: environment) } catch {
            print("✗ configuration: \(error)")
            throw ExitCode(1)
        }
        let (config, _, logger) = try global.load(quiet: true)
        let checks = await DoctorChecks.run(
            config: config, configSource: loaded.1, secrets: Secrets.load(environment: environment),
            logger: logger)
        if json {
            try printJSON(checks)
        } else {
            for check in checks {
                print("\(check.ok ? "✓" : (check.severity == "warning" ? "!" : "✗")) \(check.name): \(check.message)")
            }
        }
        if checks.contains(where: { !$0.ok && $0.severity == "error" }) { throw ExitCode(1) }
    }
}
