// Interim copy of the provider interface until the provider branch lands.
import Foundation
import ShelfCore
package struct PhotoUpload: Sendable { package var bytes: [UInt8]; package var mimeType: String
    package init(bytes: [UInt8], mimeType: String) { self.bytes = bytes; self.mimeType = mimeType } }
package struct RawResponse: Sendable { package var body: [UInt8]; package var receivedAt: Date; package var latency: Duration?
    package init(body: [UInt8], receivedAt: Date, latency: Duration?) { self.body = body; self.receivedAt = receivedAt; self.latency = latency } }
package protocol VisionProvider: Sendable {
    var name: String { get }
    var model: String { get }
    func send(_ photo: PhotoUpload) async throws(PhotoError) -> RawResponse
    func parse(_ raw: RawResponse) throws(PhotoError) -> ModelAnswer
}
