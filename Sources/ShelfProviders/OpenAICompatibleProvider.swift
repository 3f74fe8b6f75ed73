import Foundation
package import Logging
package import ShelfCore
package import ShelfHTTP
package import ShelfImaging

/// `[openai]` as the provider needs it.
package struct OpenAICompatibleSettings: Sendable {
    package var model: String
    /// The server's OpenAI base, `/v1` included: `http://127.0.0.1:11434/v1` (Ollama),
    /// `http://127.0.0.1:8080/v1` (llama-server), `http://127.0.0.1:8000/v1` (vLLM).
    package var baseURL: String
    /// Sent as `Authorization: Bearer` when set (llama-server `--api-key`, vLLM `--api-key`); Ollama ignores it.
    package var apiKey: Secret?
    /// A local model on a CPU can take minutes for one photo.
    package var timeout: Duration
    /// Longest side of the image sent (`[openai] max_side`).
    package var maxSide: Int
    /// JPEG quality to start from (`[openai] jpeg_quality`).
    package var quality: Int
    /// `max_tokens`: room for a full shelf (a server default can be as low as 256).
    package var maxTokens: Int

    /// Model, base URL, timeout, size and quality have no defaults here: `[openai]`'s are the ones (ShelfConfig).
    package init(
        model: String, baseURL: String, apiKey: Secret? = nil, timeout: Duration, maxSide: Int, quality: Int,
        maxTokens: Int = 4096
    ) {
        self.model = model; self.baseURL = baseURL; self.apiKey = apiKey; self.timeout = timeout
        self.maxSide = maxSide; self.quality = quality; self.maxTokens = maxTokens
    }
}

/// Any server speaking OpenAI's chat completions with images: Ollama, llama.cpp `llama-server`, vLLM
/// (docs/reading.md, "Choosing a provider"). The photo goes as a data-URI `image_url` part, the answer is constrained with a
/// `json_schema` response format, and each book's box is asked for as `box: [x1, y1, x2, y2]` in
/// fractions 0–1 of the width and height, x first: the order open vision models are trained on.
package struct OpenAICompatibleProvider: VisionProvider {
    package let name = "openai"
    package let settings: OpenAICompatibleSettings
    private let link: HTTPLink

    package init(settings: OpenAICompatibleSettings, http: HTTPClient, logger: Logger, time: TimeSource = .system) {
        self.settings = settings
        link = HTTPLink(provider: name, model: settings.model, http: http, logger: logger, time: time)
    }

    package var model: String { settings.model }

    package var preset: ImagePreset { .openAICompatible(maxSide: settings.maxSide, quality: settings.quality) }

    /// The base URL without trailing slashes.
    private var base: String { settings.baseURL.withoutTrailingSlashes }

    /// `{base}/chat/completions`.
    package var endpoint: String { base + "/chat/completions" }

    private func headers(json: Bool) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = json ? [("Content-Type", "application/json")] : []
        if let key = settings.apiKey, !key.value.isEmpty { headers.append(("Authorization", "Bearer \(key.value)")) }
        return headers
    }

    // MARK: Sending

    package func send(_ photo: PhotoUpload) async throws(PhotoError) -> RawResponse {
        let body = try requestBody(for: photo)
        let request = HTTPRequest(
            method: "POST", url: endpoint, headers: headers(json: true), body: body,
            timeout: settings.timeout)
        return try await link.answer(request, networkError: networkError, classify: classify)
    }

    /// `GET {base}/models`: the server is up and lists the configured model. Generates nothing.
    package func checkReachable() async -> Result<String, PhotoError> {
        let request = HTTPRequest(
            method: "GET", url: base + "/models", headers: headers(json: false), timeout: .seconds(15))
        let response: HTTPResponse
        do {
            response = try await link.http.send(request)
        } catch {
            return .failure(networkError(error))
        }
        guard response.status == 200 else { return .failure(classify(response, now: link.time.now)) }
        guard let ids = Self.modelIDs(in: response.body) else {
            return .failure(
                PhotoError(
                    .providerNonsense,
                    "The server at \(base) answered GET /models with something that is not a model list. Check that "
                        + "[openai] base_url is the server's OpenAI endpoint, ending in /v1.",
                    disposition: .retry(after: nil)))
        }
        if ids.contains(where: { Self.sameModel($0, settings.model) }) {
            return .success("The server at \(base) answers; model \(settings.model) is available")
        }
        let offered = ids.isEmpty ? "none" : ids.prefix(10).joined(separator: ", ") + (ids.count > 10 ? ", …" : "")
        return .failure(
            PhotoError(
                .providerModel,
                "The server at \(base) does not list the model '\(settings.model)' (it offers: \(offered)). Set [openai] model "
                    + "to one of those, or load it (Ollama: 'ollama pull \(settings.model)'), then run 'shelfd doctor'.",
                disposition: .providerBroken))
    }

    /// Ollama lists `name:latest` for a model pulled as `name`.
    private static func sameModel(_ listed: String, _ configured: String) -> Bool {
        listed == configured || listed == configured + ":latest" || listed + ":latest" == configured
    }

    /// The ids of `{"data": [{"id": …}, …]}`; nil when the body is not that shape.
    private static func modelIDs(in body: [UInt8]) -> [String]? {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let data = root["data"] as? [[String: Any]]
        else { return nil }
        return data.compactMap { $0["id"] as? String }
    }

    /// The JSON body: a system message, a user message with the image part then the text part,
    /// a `json_schema` response format, explicit `max_tokens`, low temperature, no streaming.
    package func requestBody(for photo: PhotoUpload) throws(PhotoError) -> [UInt8] {
        let dataURI = "data:\(photo.mimeType);base64," + Data(photo.bytes).base64EncodedString()
        let body: [String: Any] = [
            "model": settings.model,
            "messages": [
                ["role": "system", "content": Self.systemInstruction],
                [
                    "role": "user",
                    "content": [
                        ["type": "image_url", "image_url": ["url": dataURI]],
                        ["type": "text", "text": Self.prompt],
                    ],
                ],
            ],
            "response_format": [
                "type": "json_schema",
                "json_schema": ["name": "shelf", "schema": Self.responseSchema] as [String: Any],
            ],
            "max_tokens": settings.maxTokens,
            "temperature": 0.1,
            "stream": false,
        ]
        do {
            return [UInt8](try JSONSerialization.data(withJSONObject: body, options: [.withoutEscapingSlashes]))
        } catch {
            throw PhotoError(.internal, "Could not build the OpenAI-compatible request: \(error)", disposition: .dead)
        }
    }

    static let systemInstruction = CataloguePrompt.instruction(
        box: "Give box for the spine as [x1, y1, x2, y2]: left, top, right, bottom as fractions from 0 to 1 of the "
            + "image width and height, x first.",
        answer: "Answer only with the JSON object described by the schema.")

    static let prompt = CataloguePrompt.userText

    /// Standard JSON Schema, lower-case types; every property required (null where unknown) so
    /// grammar-constrained servers (llama.cpp, Ollama, vLLM) always emit the same shape.
    static var responseSchema: [String: Any] {
        let book: [String: Any] = [
            "type": "object",
            "properties": [
                "title": ["type": "string"],
                "author": ["type": ["string", "null"]],
                "isbn": ["type": ["string", "null"]],
                "confidence": ["type": "number", "minimum": 0, "maximum": 1],
                "box": [
                    "type": "array", "items": ["type": "number", "minimum": 0, "maximum": 1],
                    "minItems": 4, "maxItems": 4,
                ] as [String: Any],
            ] as [String: Any],
            "required": ["title", "author", "isbn", "confidence", "box"],
            "additionalProperties": false,
        ]
        return CataloguePrompt.answerSchema(book: book, closed: true)
    }

    // MARK: Parsing

    package func parse(_ raw: RawResponse) throws(PhotoError) -> ModelAnswer {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(raw.body))) as? [String: Any],
            let choices = root["choices"] as? [[String: Any]]
        else {
            throw PhotoError(
                .providerNonsense,
                "The answer from \(base) (\(raw.body.count) bytes) was not a chat completion. It will be retried; "
                    + "if it keeps happening, check that [openai] base_url is the server's /v1 endpoint.",
                disposition: .retry(after: nil))
        }
        guard let choice = choices.first, let message = choice["message"] as? [String: Any] else {
            throw PhotoError(
                .providerNonsense, "The model answered with no choices. It will be retried.",
                disposition: .retry(after: nil))
        }
        let text = Self.content(of: message)
        if let answer = AnswerParser.answer(from: text, boxes: .corners) { return answer }

        if let refusal = message["refusal"] as? String, !refusal.isEmpty {
            throw PhotoError(
                .providerBlocked,
                "The model refused to read this photo. It will not be retried; if it is "
                    + "a bookshelf, retake the photo and drop the new one in.", disposition: .dead)
        }
        switch choice["finish_reason"] as? String ?? "stop" {
        case "length":
            throw PhotoError(
                .providerTruncated,
                "The model ran out of output tokens before finishing its answer (max_tokens \(settings.maxTokens)). "
                    + "It will be retried; if it keeps happening, photograph the shelf in two halves.",
                disposition: .retry(after: nil))
        case "content_filter":
            throw PhotoError(
                .providerBlocked,
                "The server's content filter stopped the answer. It will not be retried; "
                    + "if it is a bookshelf, retake the photo and drop the new one in.", disposition: .dead)
        default:
            let what =
                text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
                ? "no text" : "text that is not the JSON asked for"
            throw PhotoError(
                .providerNonsense,
                "The model answered with \(what). It will be retried; if it keeps "
                    + "happening, check that [openai] model is a vision model that follows instructions.",
                disposition: .retry(after: nil))
        }
    }

    /// `message.content` as a string, or the text parts of a content array joined.
    private static func content(of message: [String: Any]) -> String {
        if let text = message["content"] as? String { return text }
        let parts = message["content"] as? [[String: Any]] ?? []
        return parts.compactMap { $0["text"] as? String }.joined()
    }

    // MARK: Errors

    private func networkError(_ error: HTTPError) -> PhotoError { failure().network(error) }

    /// The local server's words for the failures every provider has; `rejectedHint` follows a refused request.
    private func failure(rejectedHint: String = "") -> ProviderHTTPFailure {
        let model = settings.model
        return ProviderHTTPFailure(
            wording: .init(
                name: "The server at \(base)", section: "openai", secrets: [settings.apiKey?.value ?? ""],
                target: base, address: base, timeoutSubject: "The model at \(base)", timeout: settings.timeout,
                timeoutNote: "; a local model on a CPU can need several minutes",
                unreachable: .init(
                    lead: "The local server at \(base) isn't answering",
                    tail: ". Is Ollama (or llama-server, vLLM) running? Start it, or fix [openai] base_url; "
                        + "it will be retried."),
                unauthorized: .init(
                    lead: "The server at \(base) refused the credential",
                    tail: ". Set OPENAI_API_KEY (or the openai_api_key credential) to the key the server was started "
                        + "with (--api-key), then run 'shelfd doctor'."),
                missingModel: .init(
                    lead: "The server at \(base) has no model '\(model)'",
                    tail: ". Pull it ('ollama pull \(model)') or set [openai] model to a model the server has; check "
                        + "too that [openai] base_url ends in /v1. Then run 'shelfd doctor'."),
                tooLarge: .init(
                    lead: "The server at \(base) refused the photo as too large",
                    tail: ". Lower [openai] max_side, or raise the server's request size limit.", quotesServer: false),
                rateLimitAdvice: "lower [pipeline] concurrency", unavailable: "The server at \(base) failed",
                rejectedHint: rejectedHint))
    }

    /// Turns a non-200 answer into what the queue should do.
    package func classify(_ response: HTTPResponse, now: Date) -> PhotoError {
        let status = response.status
        let error = OpenAIErrorBody.decode(response.body)
        let said = serverMessage(error?.message)
        let message = error?.message?.lowercased() ?? ""
        let retryAfter = ProviderHTTPFailure.retryAfter(response, now: now)

        // A text-only model, or llama-server started without the model's multimodal projector (HTTP 500).
        if message.contains("image input is not supported") || message.contains("does not support vision")
            || message.contains("mmproj")
        {
            return PhotoError(
                .providerModel,
                "The model '\(settings.model)' at \(base) cannot read images (HTTP \(status)"
                    + "\(said)). Pick a vision model in [openai] model, or for llama-server load the model's multimodal "
                    + "projector (--mmproj FILE, or -hf with a vision GGUF), then run 'shelfd doctor'.",
                disposition: .providerBroken)
        }
        if status == 503 && message.contains("loading model") {
            return PhotoError(
                .providerUnavailable,
                "The server at \(base) is still loading the model (HTTP 503). It "
                    + "will be retried.", disposition: .retry(after: retryAfter ?? 5))
        }
        let hint =
            error?.type == "exceed_context_size_error"
            ? " The image does not fit the model's context: lower [openai] max_side or start the server with a larger context."
            : ""
        let wait = response.header("retry-after-ms").flatMap(Double.init).map { max(0, $0 / 1000) } ?? retryAfter ?? 60
        return failure(rejectedHint: hint).status(response, said: said, wait: wait, now: now)
    }

    /// ", message" from the server, shortened, with the key scrubbed should it ever appear.
    private func serverMessage(_ message: String?) -> String {
        serverText(message ?? "", redacting: [settings.apiKey?.value ?? ""])
    }
}

/// An OpenAI-compatible server's error, from any of the shapes they send:
/// `{"error": {"message", "type", "param", "code"}}` (`code` an int, a string or null),
/// `{"error": "message"}` (Ollama native, vLLM's auth check) and vLLM's older flat
/// `{"object": "error", "message", "type", "param", "code"}`.
struct OpenAIErrorBody: Equatable {
    var message: String?
    var type: String?
    /// As text whatever its JSON type; nil when absent or null.
    var code: String?

    static func decode(_ bytes: [UInt8]) -> OpenAIErrorBody? {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else { return nil }
        if let text = root["error"] as? String { return OpenAIErrorBody(message: text) }
        let object = root["error"] as? [String: Any] ?? (root["object"] as? String == "error" ? root : nil)
        guard let object else { return nil }
        let code: String?
        switch object["code"] {
        case let text as String: code = text
        case let number as NSNumber: code = number.stringValue
        default: code = nil
        }
        return OpenAIErrorBody(message: object["message"] as? String, type: object["type"] as? String, code: code)
    }
}
