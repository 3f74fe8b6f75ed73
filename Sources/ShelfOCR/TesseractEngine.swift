import Foundation
internal import CTesseract // internal: no Tesseract type reaches a package signature
package import ShelfCore
package import ShelfImaging

/// An offline reader's failure (Tesseract's or ONNX Runtime's), with what to do about it.
package struct OCRError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case missingLanguage = "missing_language", engineInit = "engine_init", recognition
        /// ONNX Runtime or a PP-OCR model is not installed.
        case missingFiles = "missing_files"
        /// A model file that ONNX Runtime cannot load (truncated, not a model).
        case modelLoad = "model_load"
        /// A model that failed on a photo.
        case modelRun = "model_run"
    }
    package var code: Code
    package var message: String
    package init(_ code: Code, _ message: String) { self.code = code; self.message = message }
    package var description: String { message }

    /// As the queue sees it: an engine that cannot start is a configuration problem, a failed reading a retry.
    package var photoError: PhotoError {
        code == .recognition || code == .modelRun
            ? PhotoError(.internal, message, disposition: .retry(after: nil))
            : PhotoError(.providerModel, message, disposition: .providerBroken)
    }
}

/// One word Tesseract read, in the pixels of the picture it was given.
package struct RecognisedWord: Sendable, Equatable {
    package var text: String
    /// 0…100, Tesseract's own.
    package var confidence: Double
    package var left: Int, top: Int, right: Int, bottom: Int

    package init(text: String, confidence: Double, left: Int, top: Int, right: Int, bottom: Int) {
        self.text = text; self.confidence = confidence
        self.left = left; self.top = top; self.right = right; self.bottom = bottom
    }
}

/// Owns one Tesseract engine, loaded with its languages once (it takes a good fraction of a second).
/// Not Sendable: made for a serial queue and used there.
package final class TesseractEngine {
    /// libtesseract's functions: the library is opened on the first engine, not at start (see CTesseract's shim.h).
    private let api: ShelfTesseract
    private let handle: OpaquePointer

    /// Loads `languages` (traineddata names such as "eng", "spa") from `dataPath`.
    package init(languages: [String], dataPath: String) throws(OCRError) {
        guard let api = shelf_tesseract()?.pointee else {
            throw OCRError(
                .engineInit,
                "libtesseract could not be opened (\(String(cString: shelf_tesseract_error()))). "
                    + "Install it: sudo apt-get install libtesseract5")
        }
        guard let handle = api.TessBaseAPICreate() else {
            throw OCRError(.engineInit, "Tesseract could not be started.")
        }
        // The LSTM engine (OEM 1): the only one the packaged "fast/best" traineddata carry.
        let status = api.TessBaseAPIInit2(handle, dataPath, languages.joined(separator: "+"), OEM_LSTM_ONLY)
        guard status == 0 else {
            api.TessBaseAPIDelete(handle)
            throw OCRError(
                .engineInit,
                "Tesseract could not load \(languages.joined(separator: "+")) from \(dataPath); run 'shelfd doctor'.")
        }
        // No debug output on stderr (Tesseract writes warnings there by default).
        _ = api.TessBaseAPISetVariable(handle, "debug_file", "/dev/null")
        self.api = api
        self.handle = handle
    }

    /// The version shelfd was built against, "5.3.0": what results and `status` record as the model. It is
    /// the header's, so that naming the model does not open the library (the one opened has the same major
    /// version, and Debian ships the headers and the library from one source package).
    package static var version: String { TESSERACT_VERSION_STR }

    /// The version of the library that is installed, opening it; nil when it cannot be opened.
    package static var installedVersion: String? {
        shelf_tesseract()?.pointee.TessVersion().map { String(cString: $0) }
    }

    deinit {
        api.TessBaseAPIEnd(handle)
        api.TessBaseAPIDelete(handle)
    }

    /// The words on `image`, found as sparse text (PSM 11: no assumption of columns or paragraphs, which a
    /// shelf does not have).
    package func words(in image: GreyImage) throws(OCRError) -> [RecognisedWord] {
        api.TessBaseAPISetPageSegMode(handle, PSM_SPARSE_TEXT)
        image.pixels.withUnsafeBufferPointer { pixels in
            api.TessBaseAPISetImage(
                handle, pixels.baseAddress, Int32(image.width), Int32(image.height), 1, Int32(image.width))
        }
        // The photo has no meaningful resolution; 300 dpi keeps Tesseract from guessing (and warning).
        api.TessBaseAPISetSourceResolution(handle, 300)
        defer { api.TessBaseAPIClear(handle) }
        guard api.TessBaseAPIRecognize(handle, nil) == 0 else {
            throw OCRError(.recognition, "Tesseract could not read the photo.")
        }
        guard let iterator = api.TessBaseAPIGetIterator(handle) else { return [] }
        defer { api.TessResultIteratorDelete(iterator) }
        var words: [RecognisedWord] = []
        let page = api.TessResultIteratorGetPageIterator(iterator)
        repeat {
            guard let raw = api.TessResultIteratorGetUTF8Text(iterator, RIL_WORD) else { continue }
            let text = String(cString: raw)
            api.TessDeleteText(raw)
            var left: Int32 = 0, top: Int32 = 0, right: Int32 = 0, bottom: Int32 = 0
            guard api.TessPageIteratorBoundingBox(page, RIL_WORD, &left, &top, &right, &bottom) != 0 else { continue }
            words.append(
                RecognisedWord(
                    text: text, confidence: Double(api.TessResultIteratorConfidence(iterator, RIL_WORD)),
                    left: Int(left), top: Int(top), right: Int(right), bottom: Int(bottom)))
        } while api.TessResultIteratorNext(iterator, RIL_WORD) != 0
        return words
    }
}

/// Where Tesseract's language files are, and whether the configured ones are there.
package enum Traineddata {
    /// `TESSDATA_PREFIX` when set, else the first folder Debian, Fedora or a source build uses that exists.
    package static func folder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let prefix = environment["TESSDATA_PREFIX"], !prefix.isEmpty { return prefix }
        let known = [
            "/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata",
            "/usr/share/tessdata", "/usr/local/share/tessdata",
        ]
        return known.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The languages of `languages` whose `<name>.traineddata` is not in `folder`.
    package static func missing(_ languages: [String], in folder: String?) -> [String] {
        languages.filter { language in
            guard let folder else { return true }
            return !FileManager.default.fileExists(atPath: "\(folder)/\(language).traineddata")
        }
    }

    /// What to do about missing languages: the files and the Debian packages that install them.
    package static func advice(missing: [String], folder: String?) -> String {
        let files = missing.map { "\($0).traineddata" }.joined(separator: ", ")
        let packages = missing.map { "tesseract-ocr-\($0.lowercased().replacingOccurrences(of: "_", with: "-"))" }
            .joined(separator: " ")
        let place = folder.map { "in \($0)" } ?? "(no tessdata folder found; set TESSDATA_PREFIX)"
        return "Tesseract language data missing \(place): \(files). Install it: sudo apt-get install \(packages)"
    }
}
