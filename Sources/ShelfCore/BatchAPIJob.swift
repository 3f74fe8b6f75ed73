import Foundation

/// A Gemini Batch API job as the queue tracks it (`batch_api_job`).
package struct BatchAPIJob: Sendable, Equatable, Codable {
    package var id: Int64
    package var provider: String
    /// Given to the provider with the job: `shelfd-<id>-<token>`. Finds the job again if its name was never saved.
    package var displayName: String
    /// The provider's `batches/{id}`; nil until the submission answered.
    package var name: String?
    /// `submitting`, then the provider's word (`pending`, `running`, `succeeded`, `failed`, `cancelled`,
    /// `expired`), or `unsent` when the submission never reached the provider.
    package var state: String
    package var photos: Int
    package var createdAt: Date
    package var updatedAt: Date
    /// Nil while in flight.
    package var finishedAt: Date?

    package init(
        id: Int64, provider: String, displayName: String, name: String?, state: String, photos: Int,
        createdAt: Date, updatedAt: Date, finishedAt: Date?
    ) {
        self.id = id; self.provider = provider; self.displayName = displayName; self.name = name; self.state = state
        self.photos = photos; self.createdAt = createdAt; self.updatedAt = updatedAt; self.finishedAt = finishedAt
    }
}
