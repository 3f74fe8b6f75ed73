import Foundation
package import ShelfCore

/// A photo as it goes to a provider: the bytes and their MIME type (judged from the content).
package struct PhotoUpload: Sendable {
    package var bytes: [UInt8]
    package var mimeType: String

    package init(bytes: [UInt8], mimeType: String) { self.bytes = bytes; self.mimeType = mimeType }

    /// The MIME type read from the bytes' magic numbers; "image/jpeg" when unknown.
    package init(bytes: [UInt8]) { self.init(bytes: bytes, mimeType: Self.mimeType(of: bytes) ?? "image/jpeg") }

    package static func mimeType(of bytes: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        if starts(Array("ftyp".utf8), at: 4) {
            for brand in ["heic", "heix", "hevc", "heim"] where starts(Array(brand.utf8), at: 8) { return "image/heic" }
            for brand in ["mif1", "msf1"] where starts(Array(brand.utf8), at: 8) { return "image/heif" }
        }
        return nil
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
    func send(_ photo: PhotoUpload) async throws(PhotoError) -> RawResponse
    func parse(_ raw: RawResponse) throws(PhotoError) -> ModelAnswer
}
