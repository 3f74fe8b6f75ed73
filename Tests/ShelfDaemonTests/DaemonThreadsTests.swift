import Foundation
import ShelfDaemon
import Synchronization
import Testing

/// shelfd's tasks run on threads that may wait for the database (DaemonThreads.swift), so tasks waiting on a store
/// call never stop the rest of the process.
struct DaemonThreadsTests {
    @Test(
        "More tasks waiting on their thread than the machine has cores leave Swift's own threads free",
        .timeLimit(.minutes(1)))
    func waitingTasksLeaveTheCooperativePoolFree() async throws {
        // More than the cooperative pool's width: were they on it, nothing else could run until they were released.
        let waiters = ProcessInfo.processInfo.activeProcessorCount + 2
        let release = DispatchSemaphore(value: 0)
        let seen = Seen()
        try await withTaskExecutorPreference(DaemonThreads.shared) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<waiters {
                    group.addTask {
                        seen.ours.withLock { $0.append(DaemonThreads.shared.isCurrent) }
                        seen.waiting.add(1, ordering: .relaxed)
                        release.wait() // as a store call waits for PostgreSQL's answer
                    }
                }
                // A task of the cooperative pool still runs while they all wait, and lets them go.
                let ran = await Task.detached {
                    while seen.waiting.load(ordering: .relaxed) < waiters { await Task.yield() }
                    for _ in 0..<waiters { release.signal() }
                    return true
                }.value
                #expect(ran)
                try await group.waitForAll()
            }
        }
        let ours = seen.ours.withLock { $0 }
        #expect(ours == Array(repeating: true, count: waiters), "each waited on one of shelfd's threads")
    }
}

/// The waiting tasks counted, and whether each ran on one of shelfd's threads.
private final class Seen: Sendable {
    let waiting = Atomic<Int>(0)
    let ours = Mutex<[Bool]>([])
}
