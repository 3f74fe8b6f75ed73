import Foundation
import ShelfHTTP
import ShelfProviders

/// A provider with its own request spacing (each provider has its own requests-per-minute limit).
package struct ProviderChannel: Sendable {
    package let provider: any VisionProvider
    let limiter: RateLimiter

    package init(_ provider: any VisionProvider, requestsPerMinute: Int, burst: Int) {
        self.provider = provider
        limiter = RateLimiter(requestsPerMinute: requestsPerMinute, burst: burst)
    }

    var name: String { provider.name }
}

/// Who is asked about a photo: one provider, or a fast one first and an accurate one when the fast
/// answer is not good enough (any book below `escalateBelow`, or no answer at all).
package enum Lineup: Sendable {
    case single(ProviderChannel)
    case hybrid(fast: ProviderChannel, accurate: ProviderChannel, escalateBelow: Double)

    /// The name jobs and status use: the provider's, or "hybrid".
    package var name: String {
        switch self {
        case .single(let channel): channel.name
        case .hybrid: "hybrid"
        }
    }

    package var model: String {
        switch self {
        case .single(let channel): channel.provider.model
        case .hybrid(let fast, let accurate, _): "\(fast.name):\(fast.provider.model)+\(accurate.name):\(accurate.provider.model)"
        }
    }

    package var channels: [ProviderChannel] {
        switch self {
        case .single(let channel): [channel]
        case .hybrid(let fast, let accurate, _): [fast, accurate]
        }
    }

    /// The provider whose availability decides whether photos can be processed at all: hybrid works
    /// on the accurate provider alone when the fast one is down, not the other way round.
    var gate: ProviderChannel {
        switch self {
        case .single(let channel): channel
        case .hybrid(_, let accurate, _): accurate
        }
    }
}
