import ArgumentParser
import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Flags every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Configuration file (default: $SHELFD_CONFIG, then $XDG_CONFIG_HOME/shelfd/shelfd.toml, then /etc/shelfd/shelfd.toml).",
            valueName: "file"))
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "trace, debug, info, notice, warning or error (default: log.level from the configuration).",
            valueName: "level"))
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

extension Configuration.Provider: ExpressibleByArgument {}

/// How `scan` and `rescan` read their photos.
struct ReadingOptions: ParsableArguments {
    @Option(help: "gemini, cloudflare, openai, hybrid or ocr (default: pipeline.provider).") var provider:
        Configuration.Provider?
    @Flag(name: .long, help: "Ask OpenLibrary and Google Books again instead of using their cached answers.")
    var refresh = false
    @Flag(name: .long, help: "Print one result document per photo, as JSON.") var json = false

    /// Loads the configuration (quiet: these commands print books, not logs) and starts a runtime that reads so.
    func start(_ global: GlobalOptions) throws -> (Runtime, Logger) {
        let (config, secrets, logger) = try global.load(quiet: true)
        return (
            try Runtime.start(
                config: config, secrets: secrets, logger: logger, choice: provider, refreshLookups: refresh),
            logger
        )
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
    FileHandle.standardError.write(
        Data("shelfd: reading photos with \(chosen.provider.rawValue) (\(chosen.reason))\n".utf8))
}
