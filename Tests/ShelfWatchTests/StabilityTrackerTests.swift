import ShelfCore
import ShelfWatch
import Testing

/// Time and files that the test moves by hand.
private final class FakeWorld {
    var now = SomeClock.Instant(offset: .seconds(1_000))
    var files: [String: FileSnapshot] = [:]
    private var nextInode: UInt64 = 1
    private var writes = 0

    func advance(_ duration: Duration) { now += duration }

    /// Each write gets a new mtime; the inode stays for an existing file.
    func write(_ path: String, size: Int64) {
        writes += 1
        let inode = files[path]?.inode ?? nextInode
        if files[path] == nil { nextInode += 1 }
        files[path] = FileSnapshot(size: size, modifiedSeconds: 1_700_000_000 + writes, inode: inode)
    }

    func tracker(settle: Duration = .seconds(2), openWriterLimit: Duration = .seconds(60)) -> StabilityTracker {
        StabilityTracker(
            settle: settle, openWriterLimit: openWriterLimit,
            now: { self.now }, stat: { self.files[$0] })
    }
}

struct StabilityTrackerTests {
    @Test("A file is stable only after settle has passed without change")
    func stableAfterSettle() {
        let world = FakeWorld()
        var tracker = world.tracker()
        world.write("/in/a.jpg", size: 100)
        tracker.activity(at: "/in/a.jpg", writerOpen: false)
        world.advance(.milliseconds(1999))
        #expect(tracker.takeStable().isEmpty)
        world.advance(.milliseconds(1))
        #expect(tracker.takeStable().map(\.path) == ["/in/a.jpg"])
        #expect(tracker.pendingCount == 0)
    }

    @Test("A change seen on re-stat restarts the quiet period")
    func changeRestartsQuietPeriod() throws {
        let world = FakeWorld()
        var tracker = world.tracker()
        world.write("/in/a.jpg", size: 100)
        tracker.sighted("/in/a.jpg", snapshot: try #require(world.files["/in/a.jpg"]))
        world.advance(.seconds(1))
        world.write("/in/a.jpg", size: 200) // grew with no event, as when polling
        world.advance(.seconds(1))
        #expect(tracker.takeStable().isEmpty) // the re-stat saw the change
        world.advance(.seconds(2))
        #expect(tracker.takeStable().map(\.snapshot.size) == [200])
    }

    @Test("Every event restarts the quiet period")
    func eventRestartsQuietPeriod() {
        let world = FakeWorld()
        var tracker = world.tracker()
        world.write("/in/a.jpg", size: 100)
        tracker.activity(at: "/in/a.jpg", writerOpen: nil)
        world.advance(.milliseconds(1500))
        tracker.activity(at: "/in/a.jpg", writerOpen: nil)
        world.advance(.milliseconds(1500))
        #expect(tracker.takeStable().isEmpty)
        #expect(tracker.nextCheck == world.now + .milliseconds(500))
    }

    @Test("A file that disappears before it is stable is dropped silently")
    func vanishedFileIsDropped() {
        let world = FakeWorld()
        var tracker = world.tracker()
        world.write("/in/a.jpg", size: 100)
        tracker.activity(at: "/in/a.jpg", writerOpen: false)
        world.files["/in/a.jpg"] = nil
        world.advance(.seconds(3))
        #expect(tracker.takeStable().isEmpty)
        #expect(tracker.pendingCount == 0)
        #expect(tracker.nextCheck == nil)
    }

    @Test("A file still open for writing waits for its close, even when quiet longer than settle")
    func openWriterHoldsFile() {
        let world = FakeWorld()
        var tracker = world.tracker(settle: .milliseconds(300))
        world.write("/in/a.jpg", size: 100)
        tracker.activity(at: "/in/a.jpg", writerOpen: true) // IN_CREATE / IN_MODIFY
        world.advance(.seconds(5))
        #expect(tracker.takeStable().isEmpty)
        world.write("/in/a.jpg", size: 200)
        tracker.activity(at: "/in/a.jpg", writerOpen: false) // IN_CLOSE_WRITE
        world.advance(.milliseconds(300))
        #expect(tracker.takeStable().map(\.snapshot.size) == [200])
    }

    @Test("A file whose close event was lost is released after the open-writer limit")
    func lostCloseEventIsBounded() {
        let world = FakeWorld()
        var tracker = world.tracker(settle: .milliseconds(300), openWriterLimit: .seconds(10))
        world.write("/in/a.jpg", size: 100)
        tracker.activity(at: "/in/a.jpg", writerOpen: true)
        world.advance(.milliseconds(9999))
        #expect(tracker.takeStable().isEmpty)
        world.advance(.milliseconds(1))
        #expect(tracker.takeStable().count == 1)
    }

    @Test("A rescan or a stray event does not emit an unchanged file again; a change does")
    func emittedOnceUntilChanged() throws {
        let world = FakeWorld()
        var tracker = world.tracker()
        world.write("/in/a.jpg", size: 100)
        tracker.sighted("/in/a.jpg", snapshot: try #require(world.files["/in/a.jpg"]))
        world.advance(.seconds(2))
        #expect(tracker.takeStable().count == 1)
        tracker.sighted("/in/a.jpg", snapshot: try #require(world.files["/in/a.jpg"]))
        tracker.activity(at: "/in/a.jpg", writerOpen: false)
        world.advance(.seconds(2))
        #expect(tracker.takeStable().isEmpty)
        world.write("/in/a.jpg", size: 300)
        tracker.sighted("/in/a.jpg", snapshot: try #require(world.files["/in/a.jpg"]))
        world.advance(.seconds(2))
        #expect(tracker.takeStable().map(\.snapshot.size) == [300])
    }

    @Test("A file missing from a full scan is emitted again when it comes back")
    func keepEmittedPrunes() throws {
        let world = FakeWorld()
        var tracker = world.tracker()
        world.write("/in/a.jpg", size: 100)
        let snapshot = try #require(world.files["/in/a.jpg"])
        tracker.sighted("/in/a.jpg", snapshot: snapshot)
        world.advance(.seconds(2))
        #expect(tracker.takeStable().count == 1)
        tracker.keepEmitted(only: [])
        tracker.sighted("/in/a.jpg", snapshot: snapshot)
        world.advance(.seconds(2))
        #expect(tracker.takeStable().count == 1)
    }

    @Test("An old file found by a scan is due at once")
    func settledAlreadyIsDueNow() throws {
        let world = FakeWorld()
        var tracker = world.tracker()
        world.write("/in/old.jpg", size: 100)
        tracker.sighted("/in/old.jpg", snapshot: try #require(world.files["/in/old.jpg"]), settledAlready: true)
        #expect(tracker.takeStable().map(\.path) == ["/in/old.jpg"])
    }

    @Test("Files come out in path order")
    func sortedOutput() {
        let world = FakeWorld()
        var tracker = world.tracker()
        for name in ["/in/c.jpg", "/in/a.jpg", "/in/b.jpg"] {
            world.write(name, size: 1)
            tracker.activity(at: name, writerOpen: false)
        }
        world.advance(.seconds(2))
        #expect(tracker.takeStable().map(\.path) == ["/in/a.jpg", "/in/b.jpg", "/in/c.jpg"])
    }
}
