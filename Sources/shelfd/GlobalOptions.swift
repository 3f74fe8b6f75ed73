import ArgumentParser
import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfDaemon

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Flags every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Configuration file (default: $SHELFD_CONFIG, then $XDG_CONFIG_HOME/shelfd/shelfd.toml, then /etc/shelfd/shelfd.toml).", valueName: "file"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning or error (default: log.level from the configuration).", valueName: "level"))
    var logLevel: Logger.Level?

    /// Loads the configuration and sets up logging; `quiet` commands log warnings and worse by default.
    func load(quiet: Bool = false) throws -> (Configuration, Secrets, Logger) {
        let environment = ProcessInfo.processInfo.environment
        let configuration = try Configuration.load(explicitPath: config, environment: environment).0
        let level = logLevel ?? (quiet ? .warning : Logger.Level(rawValue: configuration.log.level.rawValue) ?? .info)
        LoggingSystem.bootstrap { StderrLogHandler(label: $0, level: level) }
        return (configuration, Secrets.load(environment: environment), Logger(label: "shelfd"))
    }
}

/// Encodes a value as the one JSON style of shelfd and prints it.
func printJSON(_ value: some Encodable) throws {
    let data = try JSONStyle.encoder().encode(value)
    print(String(decoding: data, as: UTF8.self))
}

/// Says on stderr which provider `pipeline.provider = "auto"` picked and why, as a sentence for the person
/// running `scan` (its logs are quiet); `run` and `watch` log it as `provider_chosen`.
func announce(_ chosen: ProviderChoice, config: Configuration) {
    guard config.pipeline.provider == .auto, !chosen.reason.hasPrefix("--provider") else { return }
    FileHandle.standardError.write(Data("shelfd: reading photos with \(chosen.provider.rawValue) (\(chosen.reason))\n".utf8))
}
