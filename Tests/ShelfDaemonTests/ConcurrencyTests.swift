import Foundation
import Testing
@testable import ShelfDaemon

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
        await signal.wait(timeout: .seconds(600))     // returns only through the notify
        try? await waker.value
    }

    @Test("A notify with nobody waiting is kept for the next wait", .timeLimit(.minutes(1)))
    func notifyBeforeWaitIsKept() async {
        let signal = WorkSignal()
        signal.notify()
        await signal.wait(timeout: .seconds(600))
    }

    @Test("The shutdown flag wakes a task waiting for it", .timeLimit(.minutes(1)))
    func shutdownWakesWaiters() async {
        let flag = ShutdownFlag()
        async let waited: Void = flag.wait()
        try? await Task.sleep(for: .milliseconds(20))
        flag.set()
        await waited
        #expect(flag.isSet)
        await flag.wait()                                // already set: returns at once
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
