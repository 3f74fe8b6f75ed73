import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfPipeline

@Suite struct WorkSignalTests {
    @Test(
        "A timed-out wait does not end the signal: later waits still wait, and a notify still wakes them",
        .timeLimit(.minutes(1)))
    func timeoutsDoNotEndTheSignal() async throws {
        let clock = ManualClock()
        let signal = WorkSignal(clock: clock.time.clock)
        for _ in 0..<3 {
            let started = clock.now
            async let woken = signal.wait(timeout: .seconds(50))
            while clock.sleepers == 0 { await Task.yield() }
            clock.advance(by: .seconds(49))
            #expect(clock.sleepers == 1, "an idle daemon sleeps its whole timeout, it does not spin")
            clock.advance(by: .seconds(1))
            #expect(await woken == false)
            #expect(started.duration(to: clock.now) == .seconds(50))
        }
        async let woken = signal.wait(timeout: .seconds(600))
        while signal.restingUntil == nil { await Task.yield() }
        signal.notify()
        #expect(await woken, "woken by the notify, not by its timeout")
        #expect(clock.sleepers == 0, "the timeout's sleep ends with the wait")
    }

    @Test("A notify with nobody waiting is kept for the next wait", .timeLimit(.minutes(1)))
    func notifyBeforeWaitIsKept() async {
        let clock = ManualClock()
        let signal = WorkSignal(clock: clock.time.clock)
        signal.notify()
        #expect(await signal.wait(timeout: .seconds(600)), "the kept notify ends the wait at once")
        async let second = signal.wait(timeout: .seconds(20))
        while clock.sleepers == 0 { await Task.yield() }
        clock.advance(by: .seconds(20))
        #expect(await second == false, "a notify is kept for one wait only")
    }

    @Test("A wait in progress tells until when it rests; none is known once it ends", .timeLimit(.minutes(1)))
    func restingUntilFollowsTheWait() async {
        let clock = ManualClock()
        let signal = WorkSignal(clock: clock.time.clock)
        #expect(signal.restingUntil == nil)
        async let woken = signal.wait(timeout: .seconds(600))
        while signal.restingUntil == nil { await Task.yield() }
        #expect(signal.restingUntil == clock.time.clock.now.advanced(by: .seconds(600)))
        signal.notify()
        #expect(await woken)
        #expect(signal.restingUntil == nil)
    }
}

@Suite struct LoopPulseTests {
    @Test("A loop that neither turns nor rests is not alive; a turn or a rest makes it so")
    func pulseTellsALiveLoopFromAStuckOne() async {
        let clock = ManualClock()
        let pulse = LoopPulse(clock: clock.time.clock), signal = WorkSignal(clock: clock.time.clock)
        #expect(!pulse.isAlive(resting: signal, within: .seconds(1)), "never turned")
        pulse.beat()
        #expect(pulse.isAlive(resting: signal, within: .seconds(1)))
        clock.advance(by: .seconds(2))
        #expect(!pulse.isAlive(resting: signal, within: .seconds(1)), "stuck since its last turn")
        async let rest: Bool = signal.wait(timeout: .seconds(600))
        while clock.sleepers == 0 { await Task.yield() }
        clock.advance(by: .seconds(2))
        #expect(pulse.isAlive(resting: signal, within: .seconds(1)), "resting on the signal")
        signal.notify()
        _ = await rest
    }
}

@Suite struct RequestSlotsTests {
    @Test("Closing the slots turns waiters away instead of leaving them waiting", .timeLimit(.minutes(1)))
    func closeReleasesWaiters() async {
        let slots = RequestSlots(limit: 1)
        #expect(await slots.acquire())
        async let second = slots.acquire()
        try? await Task.sleep(for: .milliseconds(20))
        slots.close()
        #expect(await second == false)
        #expect(await slots.acquire() == false)
    }
}
