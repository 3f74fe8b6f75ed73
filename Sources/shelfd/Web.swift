import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfDaemon
import ShelfWeb

struct Web: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Serve the web page and the API without the daemon (photos are then processed by 'run' or the timer).",
        discussion: "Listens on [web] listen (127.0.0.1:8787 by default) until SIGTERM or SIGINT.")

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Listen here instead of [web] listen (host:port).") var listen: String?
    @Flag(name: .long, help: "Print a link that logs one browser in to the page, once, within ten minutes; then exit.")
    var printLoginURL = false

    func run() async throws {
        var (config, secrets, logger) = try global.load(quiet: printLoginURL)
        if let listen { config.web.listen = listen; config.web.enabled = true }
        if printLoginURL {
            try FileManager.default.createDirectory(atPath: config.paths.state, withIntermediateDirectories: true)
            return print(
                try LoginLink.make(
                    config: config, secrets: secrets, store: try StoreAccess.open(config: config, secrets: secrets)))
        }
        Shutdown.rememberEarlySignals()
        guard !config.web.listen.isEmpty, config.web.enabled else {
            throw StartupError(
                "The web page is turned off ([web] listen = \"\" or enabled = false). Set [web] listen, or pass --listen 127.0.0.1:8787."
            )
        }
        try FileManager.default.createDirectory(atPath: config.paths.state, withIntermediateDirectories: true)
        let store = try StoreAccess.open(config: config, secrets: secrets)
        let desks = Desks(config: config, secrets: secrets, store: store, logger: logger)
        guard
            let server = try WebServer.forDaemon(
                config: config, secrets: secrets, desks: desks, logger: logger,
                isCompanion: false)
        else { return }
        try await Shutdown.run([server], logger: logger)
        server.flushFiles()
    }
}
