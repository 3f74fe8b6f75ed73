import Logging
import ServiceLifecycle
import ShelfApp
import ShelfCore
import ShelfHardcover
import ShelfPipeline
import ShelfStore

/// `watch`'s background push to Hardcover (`[hardcover] push = "background"`): every `interval` on the daemon's clock,
/// the works changed since its last look that are verified and not yet there are added. It starts with the whole
/// library (what changed while no daemon ran), then reads only what changed. A refused token pauses it until the
/// configuration changes (a restart with a new token) or `shelfd hardcover push` succeeds; a rate limit or an outage
/// until its end. The queue of photos never waits for it.
struct HardcoverService: Service {
    let desk: HardcoverDesk
    let time: TimeSource
    /// Notified when a commit of this process changed works: the pass comes sooner than `interval`.
    let worksChanged: WorkSignal
    let logger: Logger
    /// The look for what other processes changed (a decision on the web page, another worker's commit).
    var interval: Duration = .seconds(30)
    /// Commits come in bursts: a pass waits this long after the first so that one pass takes them together.
    var gather: Duration = .seconds(2)

    func run() async {
        // A new start may bring a new token: a pause for a refused one is lifted, as a provider's is.
        try? desk.pusher.health.liftPause(HardcoverPusher.name, now: desk.pusher.time.now)
        await cancelWhenGracefulShutdown {
            var cursor: HardcoverCursor?
            while !Task.isCancelled {
                if desk.pusher.mayAsk(now: time.now) {
                    do {
                        let (reached, report) = try await desk.pushChanged(after: cursor)
                        cursor = reached
                        if !report.added.isEmpty || !report.there.isEmpty {
                            logger.notice(
                                "Hardcover brought up to date",
                                metadata: [
                                    "added": "\(report.added.count)", "already_there": "\(report.there.count)",
                                    "unknown_isbn": "\(report.unknown.count)",
                                ])
                        }
                    } catch {
                        logger.error("Could not read the works to add to Hardcover", metadata: ["error": "\(error)"])
                    }
                }
                if await worksChanged.wait(timeout: interval) {
                    do { try await time.sleep(for: gather) } catch { return }
                }
            }
        }
    }
}
