import Foundation
import Synchronization

/// The threads shelfd's tasks run on instead of Swift's cooperative pool (`withTaskExecutorPreference`, around every
/// command in `Shelfd.main`). The store's calls are synchronous and wait on their thread: SQLite's for the disk,
/// PostgreSQL's for each round trip to the server (PostgresNIO answers on its own event loop). The cooperative pool
/// has one thread per core and assumes none of them ever waits, so a few tasks waiting for PostgreSQL would stop every
/// other task of the process meanwhile. These threads may wait: there are several per core, and a waiting one holds
/// up only its own task.
///
/// Child tasks (task groups, `async let`, the service group's services, the web server's connections) inherit the
/// preference; default actors run their work here too. An unstructured `Task {}` does not, so those that call the
/// store must not be written.
package final class DaemonThreads: TaskExecutor, @unchecked Sendable { // unchecked: `jobs` is only used under `wake`
    private let wake = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0
    private let threads = Mutex<Set<pthread_t>>([])

    /// Four threads per core, at least eight: enough for the pipeline's concurrent photos, the web page and the
    /// services to wait for the database at once.
    package static let shared = DaemonThreads(count: max(8, 4 * ProcessInfo.processInfo.activeProcessorCount))

    package init(count: Int, name: String = "shelfd") {
        for index in 0..<count {
            // The threads keep it: it lives as long as the process.
            let thread = Thread {
                self.threads.withLock { _ = $0.insert(pthread_self()) }
                self.work()
            }
            thread.name = "\(name)-\(index)"
            thread.stackSize = 4 << 20 // as a main thread's, for the synchronous depths of SQLite and JSON
            thread.start()
        }
    }

    /// Whether the calling thread is one of these.
    package var isCurrent: Bool { threads.withLock { $0.contains(pthread_self()) } }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        wake.lock()
        jobs.append(job)
        wake.signal()
        wake.unlock()
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            wake.lock()
            while next == jobs.count { wake.wait() }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            wake.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
