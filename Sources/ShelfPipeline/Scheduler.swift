import Foundation
import Logging
import ShelfCore
import ShelfProviders
import ShelfStore

/// How a pass over the queue ended.
package struct PassSummary: Sendable, Equatable {
    package enum Stop: Sendable, Equatable {
        case idle // nothing left that is due
        case shutdown
        case providerPaused(String) // a configuration problem: nothing more can be sent
        case providerWaiting(until: Date, String) // quota or rate limit beyond what a pass waits for
        case providerDown(ProviderHealth) // unreachable or unavailable, and its probe failed too
        case retriesLater(Date) // failed photos are due again after this pass
    }
    package var stop: Stop

    package init(stop: Stop) { self.stop = stop }
}

extension Pipeline {
    /// Claims and processes batches. `untilIdle` (run, scan): returns when nothing due is left, waiting
    /// for short retries and backoffs. Otherwise (watch): runs until shutdown, sleeping while idle.
    ///
    /// Batches are claimed while fewer than `concurrency + batch_size` photos are in hand, so every request
    /// slot has a photo waiting while a batch is being finished; a finished batch wakes the loop.
    /// The leases of the photos in hand are kept alive by this pass (`keepsLeases`), or by the daemon's
    /// `LeaseHeartbeatService`, which outlives the scheduler so that a draining batch keeps its leases.
    package func processQueue(untilIdle: Bool, keepsLeases: Bool = true) async -> PassSummary {
        async let _ = keepsLeases ? heartbeatLoop() : () // cancelled and awaited when the pass returns
        let enough = settings.concurrency + settings.batchSize
        var idleSince: SomeClock.Instant? // nothing to do since then (watch)
        var released = false // memory given back during this idle time
        return await withDiscardingTaskGroup { group in
            while true {
                pulse.beat()
                if shutdown.isSet {
                    slots.close() // photos waiting for a slot go back to the queue
                    return PassSummary(stop: .shutdown)
                }
                let holding = photosInHand
                if holding >= enough {
                    await wake.wait(timeout: .seconds(5))
                    continue
                }

                // Is the provider available at all?
                let gate = gateHealth(now: time.now)
                if let health = gate, health.isInForce(at: time.now) {
                    if holding > 0 { await wake.wait(timeout: .seconds(5)); continue }
                    if health.state == .paused {
                        if untilIdle { return PassSummary(stop: .providerPaused(health.message ?? "provider paused")) }
                        // The daemon keeps watching; it asks again after a while in case the cause was fixed.
                        await wake.wait(timeout: .seconds(900))
                        if !shutdown.isSet { setProviderHealth(ProviderHealth(name: health.name, state: .ok)) }
                        continue
                    }
                    let wait = health.until.map { $0.timeIntervalSince(time.now) } ?? .infinity
                    // A pass gives a provider that is down one probe after the quick retries; then it leaves the
                    // photos queued, uncharged, for the next pass or the daemon.
                    if untilIdle && health.isOutage && (health.probes > 0 || wait > settings.maxWaitInPass) {
                        return PassSummary(stop: .providerDown(health))
                    }
                    if untilIdle && wait > settings.maxWaitInPass {
                        return PassSummary(
                            stop: .providerWaiting(
                                until: health.until ?? time.now, health.message ?? "provider backing off"))
                    }
                    await wake.wait(timeout: .seconds(wait))
                    continue
                }
                recheckAwaitingPhotos(untilIdle: untilIdle)

                // A provider that is down gets one photo at its probe time: the rest stay in the queue.
                let probeOnly = gate?.isOutage == true && lineup.channels.count == 1
                let jobs: [ClaimedJob]
                do {
                    jobs = try store.claim(
                        limit: probeOnly ? 1 : min(settings.batchSize, enough - holding),
                        provider: lineup.name, choice: choice?.rawValue, owner: owner, lease: settings.lease,
                        now: time.now)
                } catch {
                    logger.error("Cannot claim jobs", metadata: ["error": "\(error)"])
                    await wake.wait(timeout: .seconds(5))
                    continue
                }
                if jobs.isEmpty {
                    if holding > 0 { // a batch finishing, or a photo arriving, wakes us
                        await wake.wait(timeout: .seconds(5))
                        continue
                    }
                    let nextRetry = try? store.nextRetryDate()
                    if untilIdle {
                        guard let nextRetry else { return PassSummary(stop: .idle) }
                        let wait = nextRetry.timeIntervalSince(time.now)
                        if wait > settings.maxWaitInPass { return PassSummary(stop: .retriesLater(nextRetry)) }
                        await wake.wait(timeout: .seconds(max(0.05, wait)))
                        continue
                    }
                    // Idle: sleep until woken (a photo queued, shutdown, a job announced on PostgreSQL), the next
                    // retry, or `idlePoll`: another process (`shelfd retry`) may have requeued jobs, and on SQLite
                    // only the database knows.
                    // Idle for a while (start-up, or the last batch, is over): give memory back until work comes.
                    let since = idleSince ?? time.clock.now
                    idleSince = since
                    if !released && since.duration(to: time.clock.now) >= .seconds(9) {
                        released = true
                        onIdle()
                    }
                    let untilRetry = nextRetry.map { max(0.05, $0.timeIntervalSince(time.now)) } ?? 3600
                    await wake.wait(timeout: .seconds(min(untilRetry, settings.idlePoll)))
                    continue
                }
                Failpoint.hit("after_claim")
                await Failpoint.stall("scheduler_hang")
                idleSince = nil
                released = false
                holdLeases(on: jobs.map(\.id))
                group.addTask {
                    await self.process(batch: jobs)
                    self.dropLeases(on: jobs.map(\.id))
                    self.wake.notify()
                }
            }
        }
    }

    /// The health that decides whether photos can be processed at all. Hybrid goes on while either provider
    /// can be asked: the accurate one alone when the fast one is down, the fast one alone (its readings kept
    /// for review) when the accurate one is; with both down, the one expected back first.
    func gateHealth(now: Date) -> ProviderHealth? {
        let healths = lineup.channels.map { try? providers.providerHealth($0.name) }
        if let usable = healths.last(where: { !($0?.isInForce(at: now) ?? false) }) { return usable }
        return healths.compactMap { $0 }.min { ($0.until ?? .distantFuture) < ($1.until ?? .distantFuture) }
    }

    /// Hybrid: photos whose fast reading waits for the accurate provider are asked again once it answers;
    /// while it may be asked (its probe is due, or it is believed fine), one of them goes as the probe. A pass
    /// (`run`) does not probe a provider that is down this way: it would never be idle.
    func recheckAwaitingPhotos(untilIdle: Bool) {
        guard case .hybrid(_, let accurate, _) = lineup, choice == nil else { return }
        guard ((try? store.awaitingCount(provider: accurate.name)) ?? 0) > 0 else { return }
        let health = try? providers.providerHealth(accurate.name)
        do {
            let mayAsk = !(health?.isInForce(at: time.now) ?? false) && !(untilIdle && health?.isOutage == true)
            let jobs = try store.requeueAwaiting(provider: accurate.name, oneMore: mayAsk, now: time.now)
            if !jobs.isEmpty {
                logger.info(
                    "Asking the accurate provider again about fast readings",
                    metadata: [
                        "provider": "\(accurate.name)", "photos": "\(jobs.count)", "event": "recheck",
                    ])
            }
        } catch {
            logger.error("Cannot requeue photos for the accurate provider", metadata: ["error": "\(error)"])
        }
    }
}
