/// What a provider is sent: the longest side, the JPEG quality to start from, and the encoded size to aim
/// for (the phone app's numbers). Quality steps down to `minQuality`, then the size shrinks, until the
/// JPEG lands in `targetBytes`; a photo already small enough is never upscaled.
package struct ImagePreset: Sendable, Hashable, Codable {
    package var maxSide: Int
    package var quality: Int
    package var targetBytes: ClosedRange<Int>
    package var minQuality: Int

    package init(maxSide: Int, quality: Int, targetBytes: ClosedRange<Int>, minQuality: Int) {
        self.maxSide = maxSide; self.quality = quality; self.targetBytes = targetBytes; self.minQuality = minQuality
    }

    /// Gemini: accurate, reads small spine text; 3072 px, quality 0.90, 400–600 KB.
    package static let gemini = ImagePreset(maxSide: 3072, quality: 90, targetBytes: 400_000...600_000, minQuality: 70)
    /// Cloudflare Workers AI: 1536 px, quality 0.85, 150–300 KB.
    package static let cloudflare = ImagePreset(
        maxSide: 1536, quality: 85, targetBytes: 150_000...300_000, minQuality: 65)
    /// A local OpenAI-compatible model: the side and quality `[openai]` sets, 150–400 KB.
    package static func openAICompatible(maxSide: Int, quality: Int) -> ImagePreset {
        ImagePreset(maxSide: maxSide, quality: quality, targetBytes: 150_000...400_000, minQuality: min(65, quality))
    }
}
