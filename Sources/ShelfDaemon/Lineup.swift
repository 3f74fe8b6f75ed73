import Foundation
import Logging
import ShelfCore
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

    /// One request, tried again at once for a short outage (5xx, network) within the same attempt, after the
    /// channel's spacing. `record` hears each request's latency and outcome (`ok` or the error's code);
    /// `shouldStop` ends the retries (shutting down).
    func send(_ upload: PhotoUpload, logger: Logger, shouldStop: () -> Bool = { false },
              record: (Duration, String) -> Void = { _, _ in }) async -> Result<RawResponse, PhotoError> {
        var tries = 1
        while true {
            let started = ContinuousClock.now
            do {
                var raw = try await provider.send(upload)
                if raw.latency == nil { raw.latency = ContinuousClock.now - started }
                record(raw.latency ?? .zero, "ok")
                return .success(raw)
            } catch let error {
                record(ContinuousClock.now - started, error.code.rawValue)
                guard tries < Pipeline.triesPerAttempt, !shouldStop(), let delay = Pipeline.quickRetryDelay(for: error, try: tries)
                else { return .failure(error) }
                logger.warning("Provider request failed; trying again", metadata: [
                    "code": "\(error.code.rawValue)", "try": "\(tries)", "delay_s": "\(String(format: "%.1f", delay))"])
                try? await Task.sleep(for: .seconds(delay))
                do { try await limiter.waitForTurn() } catch { return .failure(PhotoError(.network, "stopped", disposition: .retry(after: nil))) }
                tries += 1
            }
        }
    }
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
}
