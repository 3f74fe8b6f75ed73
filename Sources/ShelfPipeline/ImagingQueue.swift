import Dispatch
import Logging
import ShelfCore
import ShelfImaging
import Synchronization

/// Preprocessing is CPU-bound C work: it runs on one queue of its own, never on the cooperative pool,
/// and one photo at a time (a 48-megapixel photo needs tens of megabytes while it is prepared).
private let imagingQueue = DispatchQueue(label: "shelfd.imaging")

/// The ISBN barcodes on a photo, read on the imaging queue; none when libzbar cannot be opened, which the log says
/// once (`shelfd doctor` says it too).
private let barcodeReaderMissing = Mutex(false)

extension PhotoReader {
    static func barcodesOffPool(_ bytes: [UInt8], maxPixels: Int, logger: Logger) async -> [ISBNBarcode] {
        let result = await withCheckedContinuation { continuation in
            imagingQueue.async {
                continuation.resume(
                    returning: Result { () throws(BarcodeReaderUnavailable) in
                        try BarcodeReader.isbns(inPhoto: bytes, maxPixels: maxPixels)
                    })
            }
        }
        switch result {
        case .success(let found):
            if !found.isEmpty { logger.debug("Barcodes read", metadata: ["isbns": "\(found.map(\.isbn.isbn13))"]) }
            return found
        case .failure(let problem):
            let first = barcodeReaderMissing.withLock { said in
                defer { said = true }
                return !said
            }
            if first {
                logger.warning("Photos are read without their barcodes", metadata: ["problem": "\(problem)"])
            }
            return []
        }
    }
}

package func prepareOffPool(_ bytes: [UInt8], preset: ImagePreset, maxPixels: Int) async -> Result<
    PreparedPhoto, PhotoError
> {
    await withCheckedContinuation { continuation in
        imagingQueue.async {
            continuation.resume(
                returning: Result { () throws(PhotoError) in
                    try Preprocessor.prepare(bytes, preset: preset, maxPixels: maxPixels)
                })
        }
    }
}
