import ArgumentParser
import ShelfApp
import ShelfConfig
import ShelfDaemon
import ShelfWeb

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the daemon: catalogue photos as they arrive in incoming/, until SIGTERM or SIGINT.",
        discussion:
            "Rescans incoming/ at start, then watches it, and serves the web page on [web] listen. Talks sd_notify when NOTIFY_SOCKET is set."
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        Shutdown.rememberEarlySignals()
        let (config, secrets, logger) = try global.load()
        let runtime = try Runtime.start(config: config, secrets: secrets, logger: logger)
        let desks = Desks(
            config: config, secrets: secrets, store: runtime.store, logger: logger, files: runtime.files,
            time: runtime.time)
        let web = try WebServer.forDaemon(config: config, secrets: secrets, desks: desks, logger: logger)
        try await WatchService(runtime: runtime, logger: logger, companions: web.map { [$0] } ?? []).run()
    }
}
