import Hummingbird
import ShelfCore
import ShelfDaemon

/// `/`: the queue's counts, each provider's state, the problems and what fixes them.
enum OverviewPage {
    static func register(on router: Router<WebContext>, site: WebSite) {
        router.get("/") { _, context in
            let status = try StatusReport.build(config: site.config, secrets: site.secrets)
            return site.templates.page("overview", title: "Overview", Overview(status), context: context)
        }
    }

    struct Overview {
        let pending, inProgress, done, review, failed: Int
        init(_ status: StatusDocument) {
            pending = status.queue.pending; inProgress = status.queue.leased; done = status.queue.done
            review = status.queue.review; failed = status.queue.dead
        }
    }
}
