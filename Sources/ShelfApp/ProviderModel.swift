import ShelfConfig
import ShelfCore
import ShelfOCR

/// The model results record and `status` shows for each provider kind: the same words the provider itself gives as
/// `model` (for the offline reader, the engine this machine has and its version).
package enum ProviderModel {
    package static func name(of kind: ProviderKind, config: Configuration) -> String {
        switch kind {
        case .gemini: config.gemini.model
        case .cloudflare: config.cloudflare.model
        case .openai: config.openai.model
        case .ocr: OCRProvider.model(config.ocrSettings)
        }
    }
}

extension Configuration {
    /// `[ocr]` as the offline reader takes it, the engine chosen: `auto` is PP-OCR when its files are installed.
    package var ocrSettings: OCRSettings {
        OCRSettings(
            engine: .init(named: ocr.engine, library: ocr.library, modelsFolder: ocr.modelsDir),
            languages: ocr.languages, threads: pipeline.concurrency)
    }
}
