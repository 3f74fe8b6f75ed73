import Foundation
package import ShelfCore
package import ShelfImaging

/// A photo as it goes to a provider: the bytes and their MIME type (judged from the content).
package struct PhotoUpload: Sendable {
    package var bytes: [UInt8]
    package var mimeType: String

    package init(bytes: [UInt8], mimeType: String) { self.bytes = bytes; self.mimeType = mimeType }

    /// The MIME type read from the bytes' magic numbers; "image/jpeg" when unknown.
    package init(bytes: [UInt8]) {
        let format = ImageFormat.sniff(bytes)
        self.init(bytes: bytes, mimeType: format == .unknown ? "image/jpeg" : format.mimeType)
    }
}

/// A provider's answer exactly as received, saved to disk before it is parsed: after a crash
/// it is parsed again instead of paying for the request twice.
package struct RawResponse: Sendable {
    package var body: [UInt8]
    package var receivedAt: Date
    /// Request to complete answer; nil when re-read from disk.
    package var latency: Duration?

    package init(body: [UInt8], receivedAt: Date, latency: Duration? = nil) {
        self.body = body; self.receivedAt = receivedAt; self.latency = latency
    }
}

/// A vision model that reads a shelf photo. `send` pays for the answer; `parse` is pure and repeatable.
package protocol VisionProvider: Sendable {
    /// "gemini", "cloudflare", …: what results record as `source`.
    var name: String { get }
    var model: String { get }
    /// The image this provider works best with (size, quality, bytes).
    var preset: ImagePreset { get }
    func send(_ photo: PhotoUpload) async throws(PhotoError) -> RawResponse
    func parse(_ raw: RawResponse) throws(PhotoError) -> ModelAnswer
    /// A request that costs nothing and proves the key and model work (`shelfd doctor`): a sentence
    /// for a person on success, the classified error otherwise.
    func checkReachable() async -> Result<String, PhotoError>
}
