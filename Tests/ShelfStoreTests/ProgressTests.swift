import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

/// What the overview reads: each photo's stage and the current pass, as other processes see them.
@Suite(.postgresServer, .serialized) struct ProgressTests {
    func queue(_ store: Store, _ name: String, at time: Double) throws {
        try store.queue.queuePhoto("sha-\(name)", at: name, now: Date(timeIntervalSince1970: time))
    }

    func stage(_ store: Store, _ name: String) throws -> JobStage? {
        try store.queue.progress(now: Date()).photos.first { $0.path == name }?.stage
    }

    @Test(
        "A photo is queued, preparing once claimed, then at each step recorded, then done; another connection sees it",
        arguments: StoreKind.allCases)
    func stagesAsRecorded(kind: StoreKind) throws {
        try withStore(kind) { store, site in
            let other = try #require(try site.openForReading()) // `shelfd web` beside `shelfd watch`
            try queue(store, "a.jpg", at: 100)
            #expect(try stage(other, "a.jpg") == .queued)
            let job = try store.queue.claimOne()
            #expect(try stage(other, "a.jpg") == .preparing)
            for step in [JobStage.asking, .matching, .writing] {
                try store.queue.recordStage(step, jobIDs: [job.id], now: Date())
                #expect(try stage(other, "a.jpg") == step)
            }
            try store.queue.finishReading(job, [])
            #expect(try stage(other, "a.jpg") == .done)
            try store.queue.recordStage(.asking, jobIDs: [job.id], now: Date())
            #expect(try stage(other, "a.jpg") == .done, "only a leased job's step is recorded")
        }
    }

    @Test(
        "The pass counts the photos queued since the queue was last empty, and a retried photo joins it",
        arguments: StoreKind.allCases)
    func passSinceLastEmpty(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            #expect(try store.queue.progress(now: Date()).pass == nil)
            try queue(store, "old.jpg", at: 10)
            let old = try store.queue.claimOne(now: Date(timeIntervalSince1970: 11))
            try store.queue.finish(
                [JobOutcome(job: old, result: .dead(.unreadableImage, message: "not a photo"))], shelfOf: { _ in nil },
                now: Date(timeIntervalSince1970: 12))
            #expect(try store.queue.progress(now: Date()).pass == nil, "the queue is empty again")

            try queue(store, "a.jpg", at: 100)
            try queue(store, "b.jpg", at: 101)
            try store.queue.finishReading(
                try store.queue.claimOne(now: Date(timeIntervalSince1970: 102)), [],
                now: Date(timeIntervalSince1970: 103))
            var pass = try #require(try store.queue.progress(now: Date()).pass)
            #expect(pass.startedAt == Date(timeIntervalSince1970: 100), "a's finish overlaps b's wait: one pass")
            #expect(pass.total == 2 && pass.finished == 1)

            _ = try store.queue.requeue(jobIDs: [old.id], now: Date(timeIntervalSince1970: 104))
            pass = try #require(try store.queue.progress(now: Date()).pass)
            #expect(pass.total == 3 && pass.finished == 1)
            let photos = try store.queue.progress(now: Date()).photos
            #expect(
                photos.map(\.path) == ["old.jpg", "b.jpg", "a.jpg"],
                "waiting first (in claim order), then the newest finished")
            #expect(photos.map(\.stage) == [.queued, .queued, .done])
        }
    }
}
