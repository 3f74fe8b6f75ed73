import ArgumentParser
import Foundation
import ShelfConfig
import ShelfDaemon
import ShelfStore
import ShelfWeb

struct Web: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the web page and the API without the daemon (photos are then processed by 'run' or the timer).",
        discussion: "Listens on [web] listen (127.0.0.1:8787 by default) until SIGTERM or SIGINT.")

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Listen here instead of [web] listen (host:port).") var listen: String?

    func run() async throws {
        var (config, secrets, logger) = try global.load()
        if let listen { config.web.listen = listen; config.web.enabled = true }
        guard !config.web.listen.isEmpty, config.web.enabled else {
            throw StartupError("The web page is turned off ([web] listen = \"\" or enabled = false). Set [web] listen, or pass --listen 127.0.0.1:8787.")
        }
        try FileManager.default.createDirectory(atPath: config.paths.state, withIntermediateDirectories: true)
        let store = try Store.open(path: config.paths.database)
        guard let server = try WebServer.forDaemon(config: config, secrets: secrets, store: store, logger: logger,
                                                        isCompanion: false) else { return }
        try await Shutdown.run([server], logger: logger)
    }
}
