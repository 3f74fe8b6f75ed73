import Foundation
import Logging
import ShelfConfig
import ShelfCore
import ShelfHardcover
import ShelfHTTP
import ShelfStore

/// Hardcover as the doors meet it: `shelfd hardcover push`, the background push of `watch`, and doctor's check of the
/// token. One pusher, whichever door asked (docs/library.md, "Hardcover").
package struct HardcoverDesk: Sendable {
    package let pusher: HardcoverPusher
    let pushes: HardcoverPushes

    /// nil when the secret `hardcover_token` is not set: nothing goes to Hardcover.
    package init?(
        config: Configuration, secrets: Secrets, store: Store, time: TimeSource = .system,
        logger: Logger = Logger(label: "shelfd.hardcover")
    ) {
        guard let token = secrets.hardcoverToken else { return nil }
        let client = HardcoverClient(
            url: config.hardcover.url, token: token, http: HTTPClient(maxConcurrent: 1), time: time,
            logger: logger, turn: HardcoverClient.sharedTurns(store.providers, time: time))
        pushes = store.hardcover
        pusher = HardcoverPusher(
            client: client, pushes: pushes, health: store.providers, status: config.export.exclusiveShelf,
            shelvesAsLists: config.hardcover.shelvesAsLists, time: time, logger: logger)
    }

    /// `shelfd hardcover push`: every verified work not yet on Hardcover for its edition, those Hardcover did not
    /// know before asked again. It goes ahead whatever stopped the background push (a person running it has perhaps
    /// just set a new token); what stops it is in `stopped`.
    package func pushAll(dryRun: Bool) async throws -> HardcoverPushDocument {
        var works: [HardcoverWork] = []
        try pushes.pendingWorks(retryUnknown: true) { works += $0 }
        var report = HardcoverPushDocument(dryRun: dryRun)
        do {
            try await pusher.push(works, dryRun: dryRun, into: &report)
        } catch {
            report.stopped = .init(code: error.code, message: error.description)
        }
        return report
    }

    /// One background pass: the works changed after `cursor` (all of them when nil), a page at a time. Returns where
    /// to look from next time and the pass's report. The cursor moves past a page only once it is pushed, and the next
    /// pass starts `overlap` before it: a commit's time is taken before it waits for the write lock, so a work may be
    /// committed a moment after a later-stamped one (what was pushed is skipped).
    package func pushChanged(after cursor: HardcoverCursor?) async throws -> (HardcoverCursor?, HardcoverPushDocument) {
        var report = HardcoverPushDocument(dryRun: false)
        var from = cursor.map { HardcoverCursor(changed: $0.changed - Self.overlap, bookID: 0) }
        var reached = cursor
        while true {
            // A work without an ISBN is the command's to list: asking Hardcover about it here would only cost a request.
            let works = try pushes.changedWorks(after: from)
            let pushable = works.works.filter { $0.isbn13 != nil }
            let (last, more) = (works.last, works.more)
            do {
                if !pushable.isEmpty { try await pusher.push(pushable, dryRun: false, into: &report) }
            } catch {
                report.stopped = .init(code: error.code, message: error.description)
                return (reached, report)
            }
            if let last, last.changed >= reached?.changed ?? -.infinity { reached = last }
            guard more else { return (reached, report) }
            from = last
        }
    }

    /// How far before its cursor a background pass looks again: a commit takes its time a moment before it has the
    /// write lock (well under a second), and workers' clocks on one PostgreSQL differ by what NTP leaves. Each pass
    /// reads again the works changed in this window, so it is kept short: during a burst of commits it is what a
    /// pass reads twice.
    static let overlap: TimeInterval = 10

    /// doctor: whom the token belongs to (`me`, one request, outside the shared budget: doctor opens no database), or
    /// why Hardcover refused it; nil when no token is set.
    package static func checkToken(config: Configuration, secrets: Secrets) async -> Result<String, HardcoverError>? {
        guard let token = secrets.hardcoverToken else { return nil }
        let client = HardcoverClient(
            url: config.hardcover.url, token: token, http: HTTPClient(maxConcurrent: 1), time: .system,
            logger: Logger(label: "shelfd.hardcover"), turn: {})
        do { return .success(try await client.me().username) } catch { return .failure(error) }
    }
}
