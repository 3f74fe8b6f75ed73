import Logging
import ShelfOCR

// The offline provider, Tesseract (`[ocr]`, in ShelfOCR): no key, no network, `auto`'s last resort.

extension Configuration {
    package struct OCR: ProviderSection {
        /// Tesseract traineddata names, read together: "eng", "spa", "cat", "deu"… (package tesseract-ocr-<name>).
        package var languages = ["eng"]
        package init() {}
    }

    package var ocr: OCR {
        get { providers[OCR.self] }
        set { providers[OCR.self] = newValue }
    }
}

extension ProviderFacts {
    static let ocr = ProviderFacts(
        kind: .ocr, keys: ["languages"], label: "the offline OCR (Tesseract)", autoRank: 3,
        autoReason: "so the offline OCR (Tesseract) reads the photos; set GEMINI_API_KEY for better results",
        parse: { reader, t, config throws(ConfigError) in
            let languages = try reader.strings(t, "ocr", "languages", config.ocr.languages)
            // Tesseract names: letters, digits and underscores ("chi_sim"); anything else would reach its loader as a path.
            if languages.isEmpty || languages.contains(where: { $0.isEmpty || !$0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") } }) {
                throw reader.invalid("ocr", "languages", "= \(languages) is not a list of Tesseract language names. For example languages = [\"eng\", \"spa\"].")
            }
            config.ocr.languages = languages
        },
        model: { OCRProvider.model(languages: $0.ocr.languages) },
        make: { config, _, _ in
            OCRProvider(settings: OCRSettings(languages: config.ocr.languages), logger: Logger(label: "shelfd.ocr"))
        },
        // The traineddata of each `[ocr] languages` entry: `doctor` checks it even when another provider is in
        // use, since the OCR is the fallback when keys go missing.
        setupCheck: { config in
            let folder = Traineddata.folder()
            let missing = Traineddata.missing(config.ocr.languages, in: folder)
            guard missing.isEmpty else { return .lacking("ocr languages", Traineddata.advice(missing: missing, folder: folder)) }
            return .fine("ocr languages", "\(config.ocr.languages.map { "\($0).traineddata" }.joined(separator: ", ")) in \(folder ?? "?")")
        })
}
