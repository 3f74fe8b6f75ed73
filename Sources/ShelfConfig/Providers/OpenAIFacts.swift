internal import ShelfCore

// Any OpenAI-compatible server: Ollama, llama.cpp, vLLM (`[openai]`, wire format in
// ShelfProviders/OpenAICompatibleProvider.swift).

extension Configuration {
    package struct OpenAI: ModelServerSection {
        package var model = "qwen2.5vl:7b"
        package var baseURL = "http://127.0.0.1:11434/v1"
        package var timeoutS = 300
        /// Longest side of the image sent, in pixels, 256…8192 (never upscaled).
        package var maxSide = 1536
        /// JPEG quality to start from, 50…100; it steps down when the image is over its byte target.
        package var jpegQuality = 85
        package init() {}
    }

    package var openai: OpenAI {
        get { providers[OpenAI.self] }
        set { providers[OpenAI.self] = newValue }
    }
}

extension Secrets.Name {
    package static let openAIAPIKey = Secrets.Name("openai_api_key")
}

extension ProviderFacts {
    static let openai = ProviderFacts(
        kind: .openai, keys: ["model", "base_url", "timeout_s", "max_side", "jpeg_quality"],
        label: "an OpenAI-compatible server", optional: [.openAIAPIKey], secretsLabel: "OpenAI-compatible key",
        parse: { s, config throws(ConfigError) in
            var o = try config.openai.readingServer(s)
            o.maxSide = try s.int("max_side", o.maxSide, 256...8192)
            o.jpegQuality = try s.int("jpeg_quality", o.jpegQuality, 50...100)
            config.openai = o
        })
}
