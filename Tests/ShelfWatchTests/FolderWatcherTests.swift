import Foundation
import ShelfCore
import ShelfTesting
import ShelfWatch
import Testing

/// Real watchers on real folders. Serialized: libinotifytools allows one session per process.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct FolderWatcherTests {
    /// Runs `body` with an empty `incoming` folder inside a temporary directory.
    private func withIncoming(_ body: (URL) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let incoming = directory.appendingPathComponent("incoming")
            try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
            try await body(incoming)
        }
    }

    @Test("A photo copied in is emitted once, with its size")
    func copiedPhotoIsEmittedOnce() async throws {
        try await withIncoming { incoming in
            let source = try writeFakePhoto("source.jpg", in: incoming.deletingLastPathComponent(), bytes: 50_000)
            try await withWatcher(incoming) { _, recorder in
                try await recorder.waitForStartupScan()
                try FileManager.default.copyItem(at: source, to: incoming.appendingPathComponent("IMG_1.jpg"))
                try await recorder.waitForStable("IMG_1.jpg")
                try await dropSentinel(in: incoming, recorder)
                let emitted = recorder.stable(named: "IMG_1.jpg")
                #expect(emitted.count == 1)
                #expect(emitted.first?.size == 50_000)
                #expect(emitted.first?.path == incoming.appendingPathComponent("IMG_1.jpg").path)
                #expect(emitted.first?.isSyncConflict == false)
            }
        }
    }

    @Test(
        "A photo copied slowly (a chunk every 3 s, settle 5 s) is emitted once, whole, 5 s after its writer closes it")
    func slowWriteIsEmittedAfterLastChunk() async throws {
        let clock = ManualClock()
        let settings = WatchSettings(mode: .inotify, settle: .seconds(5), rescanInterval: .seconds(3600))
        let gather = Duration.milliseconds(250) // a file's check waits a tenth of settle longer, at most this
        try await withIncoming { incoming in
            try await withWatcher(incoming, settings, time: clock.time) { _, recorder in
                try await recorder.waitForStartupScan()
                let url = incoming.appendingPathComponent("slow.jpg")
                #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
                let handle = try FileHandle(forWritingTo: url)
                let chunk = Data(repeating: 0x42, count: 64 * 1024)
                for index in 0..<4 {
                    if index > 0 { clock.advance(by: .seconds(3)) } // the writer's pace
                    try handle.write(contentsOf: chunk)
                    // Each write restarts the wait; while the writer has the file open, the watcher waits for its close
                    // (at most a minute, in case the close was missed), so it does not look at a half-written photo.
                    try await waitForWatcher(clock, toLookAt: .seconds(3 * index) + .seconds(60) + gather, recorder)
                }
                try handle.close()
                try await waitForWatcher(clock, toLookAt: .seconds(9) + .seconds(5) + gather, recorder)
                clock.advance(by: .seconds(5) + gather)
                try await recorder.waitForStable("slow.jpg")
                #expect(recorder.stable(named: "slow.jpg").map(\.size) == [Int64(4 * chunk.count)])
            }
        }
    }

    @Test("A photo whose writer keeps it open (no close seen) waits a minute, not the settle time, then is emitted")
    func openWriterWaitsAMinute() async throws {
        let clock = ManualClock()
        let settings = WatchSettings(mode: .inotify, settle: .seconds(2), rescanInterval: .seconds(3600))
        let gather = Duration.milliseconds(200)
        try await withIncoming { incoming in
            try await withWatcher(incoming, settings, time: clock.time) { _, recorder in
                try await recorder.waitForStartupScan()
                let url = incoming.appendingPathComponent("open.jpg")
                #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
                let handle = try FileHandle(forWritingTo: url)
                defer { try? handle.close() }
                try handle.write(contentsOf: Data(repeating: 0x42, count: 10_000))
                // Its next look is a minute after the write, not the settle time (2 s) after it.
                try await waitForWatcher(clock, toLookAt: .seconds(60) + gather, recorder)
                clock.advance(by: .seconds(60) + gather)
                try await recorder.waitForStable("open.jpg")
                #expect(recorder.stable(named: "open.jpg").map(\.size) == [10_000])
            }
        }
    }

    /// Waits (in real time) until the watcher has seen the last write and set its next look for `deadline` on the
    /// manual clock.
    private func waitForWatcher(_ clock: ManualClock, toLookAt deadline: Duration, _ recorder: EventRecorder)
        async throws
    {
        try await recorder.wait(for: "the watcher's next look at \(deadline)") { clock.nextDeadline == deadline }
    }

    @Test("A Syncthing temporary renamed into place is emitted under its final name only")
    func syncthingRenameIsEmittedOnce() async throws {
        try await withIncoming { incoming in
            try await withWatcher(incoming) { _, recorder in
                try await recorder.waitForStartupScan()
                let temporary = try writeFakePhoto(".syncthing.x.jpg.tmp", in: incoming, bytes: 10_000)
                try FileManager.default.moveItem(at: temporary, to: incoming.appendingPathComponent("x.jpg"))
                try await recorder.waitForStable("x.jpg")
                try await dropSentinel(in: incoming, recorder)
                #expect(recorder.stable(named: "x.jpg").count == 1)
                #expect(recorder.stable.map(\.file.path).allSatisfy { !$0.contains(".syncthing.") })
            }
        }
    }

    @Test("A photo dropped into a brand-new sub-folder at once is caught")
    func newSubfolderIsWatchedAndScanned() async throws {
        try await withIncoming { incoming in
            try await withWatcher(incoming) { _, recorder in
                try await recorder.waitForStartupScan()
                try writeFakePhoto("a/b/c/deep.jpg", in: incoming) // mkdir -p a/b/c && cp x.jpg a/b/c/
                try await recorder.waitForStable("deep.jpg")
                // The new folders are watched too: a later file in them arrives by event.
                try writeFakePhoto("a/b/later.jpg", in: incoming)
                try await recorder.waitForStable("later.jpg")
                #expect(
                    recorder.stable(named: "deep.jpg").first?.path
                        == incoming.appendingPathComponent("a/b/c/deep.jpg").path)
                #expect(recorder.rescans.count == 1) // found without a full rescan
            }
        }
    }

    @Test("A folder of photos moved in whole is caught")
    func folderMovedInIsScanned() async throws {
        try await withIncoming { incoming in
            let outside = incoming.deletingLastPathComponent().appendingPathComponent("album")
            try writeFakePhoto("one.jpg", in: outside)
            try writeFakePhoto("inner/two.jpg", in: outside)
            try await withWatcher(incoming) { _, recorder in
                try await recorder.waitForStartupScan()
                try FileManager.default.moveItem(at: outside, to: incoming.appendingPathComponent("album"))
                try await recorder.waitForStable("one.jpg")
                try await recorder.waitForStable("two.jpg")
            }
        }
    }

    @Test("Twenty photos copied in at once are emitted together, in one event")
    func burstIsEmittedTogether() async throws {
        try await withIncoming { incoming in
            // A settle time of 2 s gathers for 200 ms: ample for twenty small copies on a busy machine.
            let settings = WatchSettings(
                mode: .inotify, settle: .seconds(2), pollInterval: .milliseconds(300),
                rescanInterval: .seconds(3600), extraIgnore: [])
            try await withWatcher(incoming, settings) { _, recorder in
                try await recorder.waitForStartupScan()
                let names = (0..<20).map { String(format: "IMG_%02d.jpg", $0) }
                for name in names { try writeFakePhoto(name, in: incoming, bytes: 4096) }
                try await recorder.wait(for: "every photo to be stable") {
                    names.allSatisfy { !recorder.stable(named: $0).isEmpty }
                }
                let events = recorder.events.filter { if case .stable = $0 { true } else { false } }
                #expect(events.count == 1, "\(events)")
                #expect(Set(recorder.stable.map { ($0.file.path as NSString).lastPathComponent }) == Set(names))
            }
        }
    }

    @Test("A photo present before start is caught by the startup scan")
    func startupScanFindsExistingPhoto() async throws {
        try await withIncoming { incoming in
            try writeFakePhoto("before/IMG_0.jpg", in: incoming)
            try writeFakePhoto("notes.txt", in: incoming)
            try await withWatcher(incoming) { _, recorder in
                try await recorder.waitForStable("IMG_0.jpg")
                #expect(recorder.rescans.first == 1)
                #expect(recorder.modes.first?.0 == .inotify)
            }
        }
    }

    @Test("Ignored names are never emitted")
    func ignoredNamesAreNeverEmitted() async throws {
        try await withIncoming { incoming in
            try writeFakePhoto("@eaDir/old.jpg", in: incoming)
            try await withWatcher(incoming, .testing(ignore: ["*-edited.jpg"])) { _, recorder in
                try await recorder.waitForStartupScan()
                for name in [
                    ".syncthing.a.jpg.tmp", "~syncthing~b.jpg.tmp", "c.jpg.part", "d.jpg.partial",
                    ".e.jpg.Xy12Z9", "._f.jpg", ".DS_Store", "Thumbs.db", "g.jpg.crdownload",
                    "h.jpg.filepart", "~i.jpg", ".hidden.jpg", "j-edited.jpg", "notes.txt",
                    ".stversions/k.jpg", "@eaDir/l.jpg", ".Trash-1000/m.jpg",
                ] {
                    try writeFakePhoto(name, in: incoming)
                }
                try await dropSentinel(in: incoming, recorder)
                #expect(recorder.stable.map { ($0.file.path as NSString).lastPathComponent } == ["zz-sentinel.jpg"])
            }
        }
    }

    @Test("A Syncthing conflict copy is emitted and flagged")
    func syncConflictIsFlagged() async throws {
        try await withIncoming { incoming in
            try await withWatcher(incoming) { _, recorder in
                try await recorder.waitForStartupScan()
                let name = "IMG_1.sync-conflict-20240101-120000-ABCDEFG.jpg"
                try writeFakePhoto(name, in: incoming)
                try await recorder.waitForStable(name)
                #expect(recorder.stable(named: name).first?.isSyncConflict == true)
            }
        }
    }

    @Test("A photo deleted before it settles is never emitted")
    func deletedBeforeSettleIsNeverEmitted() async throws {
        try await withIncoming { incoming in
            try await withWatcher(incoming) { _, recorder in
                try await recorder.waitForStartupScan()
                let url = try writeFakePhoto("fleeting.jpg", in: incoming)
                try FileManager.default.removeItem(at: url)
                try await dropSentinel(in: incoming, recorder)
                #expect(recorder.stable(named: "fleeting.jpg").isEmpty)
            }
        }
    }

    @Test("Poll mode catches a new photo")
    func pollModeCatchesNewPhoto() async throws {
        try await withIncoming { incoming in
            try await withWatcher(incoming, .testing(.poll)) { _, recorder in
                try await recorder.waitForStartupScan()
                #expect(recorder.modes.map(\.0) == [.poll])
                try writeFakePhoto("sub/polled.jpg", in: incoming)
                try await recorder.waitForStable("polled.jpg")
                #expect(recorder.rescans.count >= 2)
            }
        }
    }

    @Test("Auto mode says which way it watches and why")
    func autoModeExplainsItself() async throws {
        try await withIncoming { incoming in
            let fileSystem = FileSystemKind.of(path: incoming.path)
            try await withWatcher(incoming, .testing(.auto)) { _, recorder in
                try await recorder.waitForStartupScan()
                let mode = try #require(recorder.modes.first)
                #expect(mode.0 == (fileSystem.prefersPolling ? .poll : .inotify))
                #expect(mode.1.contains(fileSystem.name))
            }
        }
    }

    @Test("A requested rescan runs a full scan")
    func requestedRescanRuns() async throws {
        try await withIncoming { incoming in
            try writeFakePhoto("a.jpg", in: incoming)
            try await withWatcher(incoming) { watcher, recorder in
                try await recorder.waitForStartupScan()
                watcher.requestRescan()
                try await recorder.wait(for: "a second scan") { recorder.rescans.count >= 2 }
                #expect(recorder.rescans == [1, 1])
            }
        }
    }
}
