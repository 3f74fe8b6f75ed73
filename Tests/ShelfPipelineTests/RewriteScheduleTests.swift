import ShelfCore
import ShelfOutputs
import Testing

/// When library.json and the exports are rewritten, as a sequence of changes and rewrites would have it.
struct RewriteScheduleTests {
    func at(_ milliseconds: Int) -> SomeClock.Instant { SomeClock.Instant(offset: .milliseconds(milliseconds)) }

    func schedule() -> RewriteSchedule {
        RewriteSchedule(settle: .milliseconds(100), minimumSpacing: .milliseconds(250), maximumSpacing: .seconds(3))
    }

    @Test("Nothing changed, nothing due; one change is written settle after it")
    func oneChange() {
        var schedule = schedule()
        #expect(schedule.due == nil)
        schedule.changed(at: at(0))
        #expect(schedule.due == at(100))
        schedule.writing()
        #expect(schedule.due == nil, "the rewrite carries the change")
    }

    @Test("After a rewrite of a second, a burst of changes is written once it has paused for a second")
    func burstWaitsForAPause() {
        var schedule = schedule()
        schedule.changed(at: at(0)); schedule.writing(); schedule.wrote(at: at(1_000), took: .seconds(1))
        for ms in stride(from: 5_000, through: 5_500, by: 10) { schedule.changed(at: at(ms)) }
        #expect(schedule.due == at(6_500), "a second after the last change of the burst")
    }

    @Test("Changes that never pause are written six seconds after the first, and no sooner than the spacing")
    func steadyChangesAreBounded() {
        var schedule = schedule()
        schedule.changed(at: at(0)); schedule.writing(); schedule.wrote(at: at(2_000), took: .seconds(2))
        for ms in stride(from: 2_000, through: 20_000, by: 500) { schedule.changed(at: at(ms)) }
        #expect(schedule.due == at(8_000), "the first change waiting, plus twice the maximum spacing")
        var small = self.schedule()
        small.changed(at: at(0)); small.writing(); small.wrote(at: at(10), took: .milliseconds(10))
        small.changed(at: at(20))
        #expect(small.due == at(260), "a small library waits the minimum spacing after its last rewrite")
    }
}
