import Foundation
import ShelfCore
import ShelfDigest
import ShelfOutputs
import ShelfStore

/// Reading a photo again: `shelfd rescan` and the web page's "read again with …" queue it here, the one way.
/// The photo gets a new job that asks `providerChoice` (nil: the configured provider); earlier results are
/// kept under results/.history/ when it is read. A job that names a provider no running process holds is
/// taken by `watch` (within a minute) or the next `run`, with the provider it asked for.
package enum PhotoRescan {
    package enum Outcome: Sendable, Equatable {
        case queued(jobID: Int64, sha256: String)
        /// A job for the photo is already waiting or running: it is read then, by the provider that job asked for.
        case alreadyQueued(sha256: String)
    }

    /// `photo`: a path, or the start of the photo's sha256 (at least 6 hex digits). `now`: the date the job is queued at.
    package static func queue(_ photo: String, providerChoice: String?, store: Store, now: Date) throws -> Outcome {
        var sha = photo
        if FileManager.default.fileExists(atPath: photo) {
            switch PhotoFile.read(photo) {
            case .success(let bytes): sha = SHA256.hex(of: bytes)
            case .failure(let error): throw StartupError("\(photo): \(error.message)")
            }
        } else if photo.count < 6 || !photo.allSatisfy(\.isHexDigit) {
            throw StartupError(
                "\(photo): no such file, and not a photo hash (give a path, or at least 6 characters of the sha256 that 'shelfd status' or a result file shows)."
            )
        }
        return try queue(sha256: sha, providerChoice: providerChoice, store: store, naming: photo, now: now)
    }

    /// A photo by its hash, or the start of it; `naming` is how the person gave it, for the error.
    package static func queue(
        sha256 sha: String, providerChoice: String?, store: Store,
        naming: String? = nil, now: Date
    ) throws -> Outcome {
        if let job = try store.queue.rescan(sha256: sha, providerChoice: providerChoice, now: now) {
            return .queued(jobID: job.jobID, sha256: job.sha256)
        }
        // No new job: either one is open already, or the photo is unknown (a prefix is looked up whole here).
        if try store.queue.finishedJob(sha256: sha) == nil {
            throw StartupError(
                "\(naming ?? sha): shelfd has not seen this photo (or the hash prefix matches several); 'shelfd scan' queues a new one."
            )
        }
        return .alreadyQueued(sha256: sha)
    }
}
