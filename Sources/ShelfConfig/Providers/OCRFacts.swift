internal import ShelfCore

// The offline provider (`[ocr]`, in ShelfOCR): PP-OCR through ONNX Runtime, or Tesseract; no key, no network,
// `auto`'s last resort.

extension Configuration {
    package struct OCR: ProviderSection {
        /// "ppocr" or "tesseract"; nil (`engine = "auto"`): PP-OCR when its files are installed, else Tesseract.
        package var engine: String?
        /// Tesseract traineddata names, read together: "eng", "spa", "cat", "deu"… (package tesseract-ocr-<name>).
        package var languages = ["eng"]
        /// The folder of PP-OCR's models; nil: where scripts/install-deps.sh puts them (`PPOCRFiles.prefixes`).
        package var modelsDir: String?
        /// ONNX Runtime's library; nil: where scripts/install-deps.sh puts it.
        package var library: String?
        package init() {}
    }

    package var ocr: OCR {
        get { providers[OCR.self] }
        set { providers[OCR.self] = newValue }
    }
}

extension ProviderFacts {
    static let ocr = ProviderFacts(
        kind: .ocr, keys: ["engine", "languages", "models_dir", "library"], label: "the offline OCR", autoRank: 3,
        autoReason: "so the offline OCR reads the photos; set GEMINI_API_KEY for better results",
        parse: { s, config throws(ConfigError) in
            let engine = try s.string("engine", config.ocr.engine ?? "auto")
            guard ["auto", "ppocr", "tesseract"].contains(engine) else {
                throw s.invalid(
                    "engine",
                    "= \"\(engine)\" is not an OCR engine. Use engine = \"ppocr\" (PP-OCR, installed by scripts/install-deps.sh), \"tesseract\" or \"auto\"."
                )
            }
            config.ocr.engine = engine == "auto" ? nil : engine
            let languages = try s.strings("languages", config.ocr.languages)
            // Tesseract names: letters, digits and underscores ("chi_sim"); anything else would reach its loader as a path.
            if languages.isEmpty
                || languages.contains(where: {
                    $0.isEmpty || !$0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
                })
            {
                throw s.invalid(
                    "languages",
                    "= \(languages) is not a list of Tesseract language names. For example languages = [\"eng\", \"spa\"]."
                )
            }
            config.ocr.languages = languages
            for (key, keyPath) in [
                ("models_dir", \Configuration.OCR.modelsDir), ("library", \Configuration.OCR.library),
            ] where s[key] != nil {
                let path = try s.string(key, "")
                guard path.isEmpty || path.hasPrefix("/") else {
                    throw s.invalid(
                        key,
                        "= \"\(path)\" is not an absolute path. Set it to \"\" to use where scripts/install-deps.sh installs."
                    )
                }
                config.ocr[keyPath: keyPath] = path.isEmpty ? nil : path
            }
        })
}
