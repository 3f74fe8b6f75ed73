import Foundation

/// Where the PP-OCR reader's files are: ONNX Runtime's library and the three models scripts/install-deps.sh
/// installs (`<prefix>/lib/shelfd/libonnxruntime.so.<version>`, `<prefix>/share/shelfd/ocr/*.onnx`, the prefix
/// /usr/local as root and ~/.local otherwise).
package struct PPOCRFiles: Sendable, Equatable {
    package static let detector = "PP-OCRv6_det_small.onnx"
    package static let recogniser = "PP-OCRv6_rec_small.onnx"
    package static let classifier = "ch_ppocr_mobile_v2.0_cls_mobile.onnx"
    package static let models = [detector, recogniser, classifier]

    package var library: String
    package var modelsFolder: String

    package init(library: String, modelsFolder: String) { self.library = library; self.modelsFolder = modelsFolder }

    package var detectorPath: String { "\(modelsFolder)/\(Self.detector)" }
    package var recogniserPath: String { "\(modelsFolder)/\(Self.recogniser)" }
    package var classifierPath: String { "\(modelsFolder)/\(Self.classifier)" }

    /// The prefixes looked in, in order: ~/.local, the one the executable is installed in (`<exe>/..`, so a
    /// `make install`-style tree finds its own files), /usr/local, /usr.
    package static func prefixes(
        home: String? = ProcessInfo.processInfo.environment["HOME"],
        executable: String? = Bundle.main.executablePath
    ) -> [String] {
        var prefixes: [String] = []
        if let home, !home.isEmpty { prefixes.append("\(home)/.local") }
        if let executable {
            let bin = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
            prefixes.append(bin.deletingLastPathComponent().standardizedFileURL.path)
        }
        prefixes += ["/usr/local", "/usr"]
        var seen = Set<String>()
        return prefixes.filter { seen.insert($0).inserted }
    }

    /// The files to use: `library` and `modelsFolder` when configured (`[ocr] library`, `[ocr] models_dir`), else
    /// the first prefix that has them (the first prefix when none has, so the error names where they belong).
    package static func locate(
        library: String? = nil, modelsFolder: String? = nil,
        prefixes: [String] = prefixes()
    ) -> PPOCRFiles {
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        let folder =
            modelsFolder ?? prefixes.map { "\($0)/share/shelfd/ocr" }
            .first { folder in models.allSatisfy { exists("\(folder)/\($0)") } }
            ?? "\(prefixes.first ?? "/usr/local")/share/shelfd/ocr"
        let library =
            library ?? prefixes.map { "\($0)/lib/shelfd/\(OnnxRuntime.libraryName)" }.first(where: exists)
            ?? "\(prefixes.first ?? "/usr/local")/lib/shelfd/\(OnnxRuntime.libraryName)"
        return PPOCRFiles(library: library, modelsFolder: folder)
    }

    /// The files that are not there, as a typed error that says how to install them; nil when all are.
    package func missing() -> OCRError? {
        let paths = [library, detectorPath, recogniserPath, classifierPath]
        let absent = paths.filter { !FileManager.default.fileExists(atPath: $0) }
        guard !absent.isEmpty else { return nil }
        return OCRError(
            .missingFiles,
            "The offline reader's files are missing: \(absent.joined(separator: ", ")). "
                + "Install them with scripts/install-deps.sh (or set [ocr] models_dir and [ocr] library to where "
                + "they are), then run 'shelfd doctor'.")
    }
}
