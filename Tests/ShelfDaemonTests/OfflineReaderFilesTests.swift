import Foundation
import ShelfCore
import ShelfDaemon
import ShelfOCR
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// The offline reader's own files (the PP-OCR models, ONNX Runtime's library) broken or missing: what a run makes of
/// it, in-process. That a drawn shelf is read with no key and no network, through the binary, is in ShelfdTests.
@Suite("The offline reader's files, in-process", .serialized)
struct OfflineReaderFilesTests {
    @Test(
        "A truncated model or a missing ONNX Runtime pauses the reader with the command that mends it; the photo waits, and is read once the files are whole",
        .timeLimit(.minutes(3)))
    func brokenFilesLeaveThePhotoWaiting() async throws {
        let installed = PPOCRFiles.locate()
        let root = try ShelfRoot(apiKey: nil)
        let models = root.base.appendingPathComponent("models")
        let (detector, whole) = try copyFiles(
            PPOCRFiles.models, from: installed.modelsFolder, to: models, truncating: PPOCRFiles.detector)
        func configure(library: String) throws {
            try root.writeConfig(
                geminiURL: nil,
                overrides: [
                    "pipeline": ["provider": "\"ocr\""],
                    "ocr": ["engine": "\"ppocr\"", "models_dir": "\"\(models.path)\"", "library": "\"\(library)\""],
                ])
        }
        try root.importCatalogue(sampleCatalogue)
        try root.drop(DrawnShelf.jpeg(["DUNE HERBERT"]), as: "shelf.jpg")

        for (broken, library) in [
            (PPOCRFiles.detector, installed.library), ("libonnxruntime", "/nonexistent/\(OnnxRuntime.libraryName)"),
        ] {
            try configure(library: library)
            let status = try await InProcessSite(root).run().status
            #expect(status.provider.state == "paused")
            let problem = status.problems.first { $0.code == "provider_model" }
            #expect(
                problem?.message.contains(broken) == true
                    && problem?.message.contains("scripts/install-deps.sh") == true,
                "\(status.problems.map(\.message))")
            #expect(
                status.queue.pending == 1 && status.queue.failed == 0 && status.queue.dead == 0,
                "the photo waits, uncharged")
            #expect(try root.resultDocuments().isEmpty)
        }

        try whole.write(to: detector)
        try configure(library: installed.library)
        let report = try await InProcessSite(root).run()
        #expect(report.status.queue.done == 1 && report.warning == nil, "\(report.warning ?? "")")
        #expect(try root.resultDocuments().first?.books.map(\.title) == ["Dune"])
    }
}
