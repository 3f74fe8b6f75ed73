import Foundation
import Testing
@testable import ShelfPipeline

@Suite struct WorkSignalTests {
    @Test("A timed-out wait does not end the signal: later waits still wait, and a notify still wakes them",
          .timeLimit(.minutes(1)))
    func timeoutsDoNotEndTheSignal() async {
        let signal = WorkSignal()
        for _ in 0..<3 {
            let started = ContinuousClock.now
            await signal.wait(timeout: .milliseconds(50))
            #expect(ContinuousClock.now - started >= .milliseconds(50), "an idle daemon must sleep, not spin")
        }
        let waker = Task {
            try await Task.sleep(for: .milliseconds(100))
            signal.notify()
        }
        #expect(await signal.wait(timeout: .seconds(600)), "woken by the notify, not by its timeout")
        try? await waker.value
    }

    @Test("A notify with nobody waiting is kept for the next wait", .timeLimit(.minutes(1)))
    func notifyBeforeWaitIsKept() async {
        let signal = WorkSignal()
        signal.notify()
        #expect(await signal.wait(timeout: .seconds(600)), "the kept notify ends the wait at once")
        #expect(await signal.wait(timeout: .milliseconds(20)) == false, "a notify is kept for one wait only")
    }

    @Test("A wait in progress tells until when it rests; none is known once it ends", .timeLimit(.minutes(1)))
    func restingUntilFollowsTheWait() async {
        let signal = WorkSignal()
        #expect(signal.restingUntil == nil)
        async let woken = signal.wait(timeout: .seconds(600))
        while signal.restingUntil == nil { await Task.yield() }
        #expect(signal.restingUntil.map { $0 > .now + .seconds(500) } == true)
        signal.notify()
        #expect(await woken)
        #expect(signal.restingUntil == nil)
    }
}

@Suite struct LoopPulseTests {
    @Test("A loop that neither turns nor rests is not alive; a turn or a rest makes it so")
    func pulseTellsALiveLoopFromAStuckOne() async {
        let pulse = LoopPulse(), signal = WorkSignal()
        #expect(!pulse.isAlive(resting: signal, within: .seconds(1)), "never turned")
        pulse.beat()
        #expect(pulse.isAlive(resting: signal, within: .seconds(1)))
        #expect(!pulse.isAlive(resting: signal, within: .seconds(1), now: .now + .seconds(2)), "stuck since its last turn")
        async let rest: Bool = signal.wait(timeout: .seconds(600))
        while signal.restingUntil == nil { await Task.yield() }
        #expect(pulse.isAlive(resting: signal, within: .seconds(1), now: .now + .seconds(2)), "resting on the signal")
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
