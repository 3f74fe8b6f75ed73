import Logging
import ServiceLifecycle
import ShelfPipeline
import ShelfPostgres

/// `watch` on PostgreSQL: wakes the idle scheduler when any process makes a job due (a photo queued on another
/// machine, `shelfd retry`, a lease given back), so several workers share a queue without polling it every few
/// seconds. SQLite has no such announcement: there the scheduler polls every 5 s (`PipelineSettings.idlePoll`).
struct JobNotificationService: Service {
    let endpoint: PostgresStore.Endpoint
    let pipeline: Pipeline
    let logger: Logger

    func run() async {
        await cancelWhenGracefulShutdown {
            await PostgresStore.listenForJobs(endpoint, logger: logger) { [pipeline] in pipeline.wake.notify() }
        }
    }
}
