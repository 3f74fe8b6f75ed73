import Dispatch
import Foundation
package import ShelfCore
package import ShelfImaging

/// The PP-OCR models of the process, on a serial queue of their own: loaded on the first photo (a second or so),
/// kept while photos come, and released after `idleRelease` without one on `time`'s clock, so an idle daemon holds
/// none of their memory. Photos are read one at a time; each model spreads its work over `threads` threads.
package final class PPOCREngine: @unchecked Sendable { // unchecked: `models` and `lastUse` are only touched on `queue`
    package let files: PPOCRFiles
    package let threads: Int
    package let idleRelease: Duration
    private let time: TimeSource
    private let queue = DispatchQueue(label: "shelfd.ppocr")
    private var models: PPOCRModels?
    private var lastUse: SomeClock.Instant

    /// `threads`: at most the machine's cores (the caller gives `[pipeline] concurrency`).
    package init(files: PPOCRFiles, threads: Int, idleRelease: Duration = .seconds(300), time: TimeSource = .system) {
        self.files = files; self.idleRelease = idleRelease; self.time = time
        self.threads = max(1, min(threads, ProcessInfo.processInfo.activeProcessorCount))
        lastUse = time.clock.now
    }

    /// Whether the models are loaded now.
    package var isLoaded: Bool { queue.sync { models != nil } }

    /// Runs `body` on the queue with the models, loading them first if they are not.
    package func run<T: Sendable>(_ body: @escaping @Sendable (PPOCRModels) throws(OCRError) -> T) async -> Result<
        T, OCRError
    > {
        await withCheckedContinuation { continuation in
            queue.async {
                let result = Result { () throws(OCRError) -> T in
                    let models: PPOCRModels
                    if let loaded = self.models {
                        models = loaded
                    } else {
                        models = try PPOCRModels(files: self.files, threads: self.threads)
                        self.models = models
                    }
                    return try body(models)
                }
                self.lastUse = self.time.clock.now
                self.scheduleRelease()
                continuation.resume(returning: result)
            }
        }
    }

    /// The lines on `image`, read on the queue.
    package func lines(
        in image: RGBImage, detectorSide: Int = PPOCRReader.detectorSide,
        lookCloser: Bool = true
    ) async throws(OCRError) -> [TextLine] {
        try await read(image, detectorSide: detectorSide, lookCloser: lookCloser).lines
    }

    /// The lines on `image`, read on the queue, and how long each model took.
    package func read(
        _ image: RGBImage, detectorSide: Int = PPOCRReader.detectorSide,
        lookCloser: Bool = true
    ) async throws(OCRError) -> (lines: [TextLine], times: PPOCRReader.StageTimes) {
        try await run { models throws(OCRError) in
            try PPOCRReader.read(image, models: models, detectorSide: detectorSide, lookCloser: lookCloser)
        }.get()
    }

    /// After a use (on the queue): the models go at `idleRelease` from now unless another use comes first. The
    /// deadline is taken here, so a wake that starts late still counts from the use.
    private func scheduleRelease() {
        let deadline = lastUse.advanced(by: idleRelease)
        Task { [weak self, time] in
            try? await time.clock.sleep(until: deadline)
            self?.releaseIfIdle()
        }
    }

    private func releaseIfIdle() {
        queue.async {
            guard self.models != nil, self.lastUse.duration(to: self.time.clock.now) >= self.idleRelease else { return }
            self.models = nil
        }
    }
}
