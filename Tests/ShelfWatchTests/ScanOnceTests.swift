import Foundation
import ShelfCore
import ShelfTesting
@testable import ShelfWatch
import Testing

struct ScanOnceTests {
    @Test("scanOnce returns every photo, skips ignored names and flags conflict copies", .timeLimit(.minutes(1)))
    func scanOnceReturnsStablePhotos() async throws {
        try await withTemporaryDirectory { root in
            let old = try writeFakePhoto("old/IMG_1.jpg", in: root, bytes: 1000)
            let anHourAgo = Date(timeIntervalSinceNow: -3600)
            try FileManager.default.setAttributes([.modificationDate: anHourAgo], ofItemAtPath: old.path)
            try writeFakePhoto("new.png", in: root, bytes: 2000) // recent: waits out settle
            try writeFakePhoto("IMG_2.sync-conflict-20240101-120000-ABCDEFG.jpg", in: root)
            try writeFakePhoto(".syncthing.IMG_3.jpg.tmp", in: root)
            try writeFakePhoto("@eaDir/IMG_1.jpg/SYNOFILE_THUMB_M.jpg", in: root)
            try writeFakePhoto("notes.txt", in: root)

            let files = await scanOnce(root: root, settings: .testing(), time: .system)
            let base = root.resolvingSymlinksInPath().path
            #expect(
                files.map(\.path) == [
                    base + "/IMG_2.sync-conflict-20240101-120000-ABCDEFG.jpg", base + "/new.png",
                    base + "/old/IMG_1.jpg",
                ])
            #expect(files.map(\.isSyncConflict) == [true, false, false])
            #expect(files.map(\.size) == [2048, 2000, 1000])
            #expect(abs(try #require(files.last).modified.timeIntervalSince(anHourAgo)) < 1)
        }
    }

    @Test("scanOnce of a missing folder returns nothing")
    func scanOnceOfMissingFolder() async {
        let files = await scanOnce(
            root: URL(fileURLWithPath: "/nonexistent/shelfd-\(UUID().uuidString)"),
            settings: .testing(), time: .system)
        #expect(files.isEmpty)
    }

    @Test("The file system of a path is named; local ones do not ask for polling")
    func fileSystemKind() {
        #expect(FileSystemKind.of(path: "/proc") == ("proc", false))
        #expect(FileSystemKind.of(path: "/nonexistent/\(UUID().uuidString)").name == "unknown")
    }

    @Test("The watch-limit message gives the current limit and the command that raises it")
    func watchLimitMessage() {
        let reason = watchLimitReason(currentLimit: "8192")
        #expect(reason.hasPrefix("polling: inotify watch limit reached (fs.inotify.max_user_watches=8192)"))
        #expect(reason.contains("sudo sysctl fs.inotify.max_user_watches=524288"))
        #expect(watchLimitReason(currentLimit: "1048576").contains("sudo sysctl fs.inotify.max_user_watches=2097152"))
    }

    @Test("Defaults follow the documented configuration")
    func defaults() {
        let settings = WatchSettings()
        #expect(settings.mode == .auto)
        #expect(settings.settle == .milliseconds(2000))
        #expect(settings.pollInterval == .seconds(30))
        #expect(settings.rescanInterval == .seconds(3600))
        #expect(settings.extraIgnore.isEmpty)
    }
}
