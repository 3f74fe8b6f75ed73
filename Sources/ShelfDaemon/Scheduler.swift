import CMalloc
import Foundation
import Logging
import ShelfCore
import ShelfProviders
import ShelfStore

/// How a pass over the queue ended.
package struct PassSummary: Sendable, Equatable {
    package enum Stop: Sendable, Equatable {
        case idle                               // nothing left that is due
        case shutdown
        case providerPaused(String)             // a configuration problem: nothing more can be sent
        case providerWaiting(until: Date, String)   // quota or rate limit beyond what a pass waits for
        case retriesLater(Date)                 // failed photos are due again after this pass
    }
    package var stop: Stop
}

extension Pipeline {
    /// Claims and processes batches. `untilIdle` (run, scan): returns when nothing due is left, waiting
    /// for short retries and backoffs. Otherwise (watch): runs until shutdown, sleeping while idle.
    ///
    /// Batches are claimed while fewer than `concurrency + batch_size` photos are in hand, so every request
    /// slot has a photo waiting while a batch is being finished; a finished batch wakes the loop.
    package func processQueue(untilIdle: Bool) async -> PassSummary {
        let heartbeat = Task { await heartbeatLoop() }
        defer { heartbeat.cancel() }
        let enough = settings.concurrency + settings.batchSize
        var idle = false
        return await withDiscardingTaskGroup { group in
            while true {
                pulse.beat()
                if shutdown.isSet {
                    slots.close()                    // photos waiting for a slot go back to the queue
                    return PassSummary(stop: .shutdown)
                }
                let holding = photosInHand
                if holding >= enough {
                    await wake.wait(timeout: .seconds(5))
                    continue
                }

                // Is the provider available at all?
                if let health = try? store.providerHealth(lineup.gate.name), health.isInForce(at: Date()) {
                    if holding > 0 { await wake.wait(timeout: .seconds(5)); continue }
                    if health.state == .paused {
                        if untilIdle { return PassSummary(stop: .providerPaused(health.message ?? "provider paused")) }
                        // The daemon keeps watching; it asks again after a while in case the cause was fixed.
                        await wake.wait(timeout: .seconds(900))
                        if !shutdown.isSet { setProviderHealth(ProviderHealth(name: lineup.gate.name, state: .ok)) }
                        continue
                    }
                    let wait = health.until.map { $0.timeIntervalSinceNow } ?? .infinity
                    if untilIdle && wait > settings.maxWaitInPass {
                        return PassSummary(stop: .providerWaiting(until: health.until ?? Date(), health.message ?? "provider backing off"))
                    }
                    await wake.wait(timeout: .seconds(wait))
                    continue
                }

                let jobs: [ClaimedJob]
                do {
                    jobs = try store.claim(limit: min(settings.batchSize, enough - holding), provider: lineup.name, choice: choice,
                                           owner: owner, lease: settings.lease)
                } catch {
                    logger.error("Cannot claim jobs", metadata: ["error": "\(error)"])
                    await wake.wait(timeout: .seconds(5))
                    continue
                }
                if jobs.isEmpty {
                    if holding > 0 {                 // a batch finishing, or a photo arriving, wakes us
                        await wake.wait(timeout: .seconds(5))
                        continue
                    }
                    let nextRetry = try? store.nextRetryDate()
                    if untilIdle {
                        guard let nextRetry else { return PassSummary(stop: .idle) }
                        let wait = nextRetry.timeIntervalSinceNow
                        if wait > settings.maxWaitInPass { return PassSummary(stop: .retriesLater(nextRetry)) }
                        await wake.wait(timeout: .seconds(max(0.05, wait)))
                        continue
                    }
                    // Idle: sleep until woken (a photo queued, shutdown), the next retry, or a short while:
                    // another process (`shelfd retry`) may have requeued jobs, and only the database knows.
                    if !idle {
                        idle = true
                        malloc_trim(0)          // give the decoded photos' memory back while nothing is to be done
                    }
                    let untilRetry = nextRetry.map { max(0.05, $0.timeIntervalSinceNow) } ?? 3600
                    await wake.wait(timeout: .seconds(min(untilRetry, 5)))
                    continue
                }
                Failpoint.hit("after_claim")
                await Failpoint.stall("scheduler_hang")
                idle = false
                holdLeases(on: jobs.map(\.id))
                group.addTask {
                    await self.process(batch: jobs)
                    self.dropLeases(on: jobs.map(\.id))
                    self.wake.notify()
                }
            }
        }
    }
}
