import Foundation

/// The states of ARCHITECTURE.md, "The queue's states".
package enum JobState: String, Sendable, Codable, CaseIterable {
    case pending, leased, done, review, failedRetryable = "failed_retryable", dead
}

/// How many jobs are in each state.
package struct QueueCounts: Sendable, Equatable, Codable {
    package var pending = 0, leased = 0, done = 0, review = 0, failed = 0, dead = 0
    /// Age of the oldest job waiting to be claimed.
    package var oldestPendingSeconds: Int?
    package init() {}
}

/// Where a photo is on its way through the pipeline, as the web page's overview shows it: queued, the four
/// steps of a leased job (recorded by the pipeline as it gets there), then how it ended.
package enum JobStage: String, Sendable, Codable, CaseIterable {
    case queued, preparing, asking, matching, writing
    /// Failed, and tried again at its `not_before`.
    case retrying
    case done, review, failed

    /// The stage of a job in `state`; a leased job is at the step it recorded (`preparing` when claimed).
    package init(state: JobState, recorded: String?) {
        switch state {
        case .pending: self = .queued
        case .leased: self = recorded.flatMap(JobStage.init(rawValue:)) ?? .preparing
        case .failedRetryable: self = .retrying
        case .done: self = .done
        case .review: self = .review
        case .dead: self = .failed
        }
    }

    /// In words, for a person.
    package var words: String {
        switch self {
        case .queued: "queued"
        case .preparing: "preparing"
        case .asking: "asking the provider"
        case .matching: "matching"
        case .writing: "writing"
        case .retrying: "waiting to retry"
        case .done: "done"
        case .review: "to review"
        case .failed: "failed"
        }
    }

    /// A step of a photo being processed now.
    package var isInProgress: Bool { [.preparing, .asking, .matching, .writing].contains(self) }
}

/// The queue as the overview shows it: the counts, the current pass and the photos on their way.
package struct QueueProgress: Sendable, Equatable {
    /// One photo's job.
    package struct Photo: Sendable, Equatable {
        package var jobID: Int64
        package var sha256: String
        package var path: String
        package var stage: JobStage
        /// Since when it is at this stage (for a finished photo: when it finished).
        package var since: Date?
        /// Waiting to retry: when.
        package var retryAt: Date?

        package init(
            jobID: Int64, sha256: String, path: String, stage: JobStage, since: Date? = nil,
            retryAt: Date? = nil
        ) {
            self.jobID = jobID; self.sha256 = sha256; self.path = path; self.stage = stage; self.since = since
            self.retryAt = retryAt
        }
    }

    /// The photos queued since the queue was last empty (no photo waiting, in hand or waiting to retry), and
    /// how many of them are finished (done, to review or failed): what the progress bar shows.
    package struct Pass: Sendable, Equatable {
        package var startedAt: Date
        package var total: Int
        package var finished: Int

        package init(startedAt: Date, total: Int, finished: Int) {
            self.startedAt = startedAt; self.total = total; self.finished = finished
        }
    }

    package var counts: QueueCounts
    /// Nil when the queue is empty.
    package var pass: Pass?
    /// The photos in hand, then queued, then waiting to retry (up to `openLimit`), then the newest finished.
    package var photos: [Photo]

    package init(counts: QueueCounts, pass: Pass? = nil, photos: [Photo]) {
        self.counts = counts; self.pass = pass; self.photos = photos
    }
}
