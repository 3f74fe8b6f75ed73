import Foundation
import NIOCore
import ShelfTesting
import Testing
@testable import ShelfWeb

@Suite("An upload's file")
struct IncomingPhotoTests {
    @Test("A photo that cannot be put in place closes its descriptor once: the descriptor opened next keeps working")
    func descriptorIsClosedOnce() async throws {
        try await withTemporaryDirectory { incoming in
            let photo = try IncomingPhoto(shelf: "den", name: "IMG_1.jpg", into: incoming, limitMB: 1)
            try await photo.append(ByteBuffer(bytes: JPEGFactory.shelf(seed: 1)))
            // The shelf's folder goes away under the upload: its last steps fail after the file was closed.
            try FileManager.default.removeItem(at: incoming.appendingPathComponent("den"))
            await #expect(throws: UploadPage.UploadError.self) { _ = try await photo.finish() }
            // The number just freed is the lowest: the next open takes it, as another thread's could.
            let other = open("/dev/null", O_RDONLY | O_CLOEXEC)
            defer { close(other) }
            photo.discard()
            #expect(fcntl(other, F_GETFD) != -1, "the descriptor opened after the failure is still open")
        }
    }
}
