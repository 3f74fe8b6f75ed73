import Foundation
import ShelfCore
import ShelfDigest

/// A loopback stand-in for an OpenAI-compatible server with vision (Ollama's `/v1`, llama.cpp's
/// `llama-server`, vLLM): `POST /v1/chat/completions` and `GET /v1/models`, each flavour with its own
/// error bodies and quirks (as each server documents its API). It checks each request the way shelfd must send it and
/// answers from a script that can key on the photo.
package final class OpenAIEmulator: ModelEmulator {
    package enum Flavour: String, Sendable, CaseIterable {
        /// Takes `image_url` as an object or a plain string; errors have `code: null`; ignores the API key;
        /// an unknown model is 404 "model 'x' not found, try pulling it first".
        case ollama
        /// Errors have an integer `code`; serves whatever model it loaded, whatever the request names.
        case llamaServer
        /// Errors have an integer `code` and a `param`; an unknown model is 404; a bad key is `{"error": "Unauthorized"}`.
        case vllm
    }

    // Declared here: ShelfCore's `Book` would win over a protocol's name in the nested types.
    package typealias Book = EmulatedBook
    package typealias Suggestion = EmulatedSuggestion

    /// What one request is answered with.
    package enum Reply: WrittenReply {
        /// 200, `finish_reason: "stop"`, the model's answer as `message.content` (`.books`, `.fenced`, `.garbage`),
        /// each book's box as `box`.
        case written(EmulatedText)
        /// The answer with a sentence of prose before and after it.
        case proseWrapped([Book])
        /// `finish_reason: "length"` with the answer cut off mid-JSON.
        case cut([Book])
        /// Any content with any finish reason.
        case text(String, finishReason: String = "stop")
        /// The flavour's 404 for an unknown model.
        case modelNotFound
        /// llama-server without the model's projector: 500 "image input is not supported - hint: … mmproj".
        case imageNotSupported
        /// llama-server starting up: 503 `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`.
        case loadingModel(retryAfter: String? = nil)
        /// 429 in the flavour's error shape, with `retry-after-ms` and/or `retry-after` when given.
        case rateLimited(retryAfter: String? = nil, retryAfterMs: String? = nil)
        /// `{"error": {...}}` in the flavour's shape (`code` null for Ollama, the status otherwise).
        case error(status: Int, message: String)
        /// The older flat body, `{"error": "message"}` (Ollama's native API, vLLM's key check).
        case flatError(status: Int, message: String)
        /// Older vLLM: `{"object": "error", "message", "type", "param", "code"}` at the top level.
        case legacyVLLMError(status: Int, message: String)
        /// Anything at all.
        case raw(status: Int, headers: [(name: String, value: String)] = [], body: String)
    }

    package typealias Script = EmulatorScript<Reply, Setup>

    /// What a script says of this server beyond its replies.
    package struct Setup: Sendable {
        package var flavour: Flavour
        /// The Bearer token the server requires; nil: no key (Ollama never checks one).
        package var apiKey: String?
        /// What `GET /v1/models` lists; chat requests for other models get the flavour's 404 (not llama-server's).
        package var models: [String]
        /// When set, `GET /v1/models` is answered with it instead of the list.
        package var modelsReply: Reply?
    }

    /// How the request carried the image.
    package enum ImageURLForm: String, Sendable { case object, string }

    package typealias LoggedRequest = EmulatedRequest<RequestDetails>

    /// What a logged request says of the OpenAI wire format; its `model` is the request's, for chat requests.
    package struct RequestDetails: Sendable {
        /// The token of `Authorization: Bearer …`, if any.
        package var bearer: String?
        package var imageURLForm: ImageURLForm?
    }

    package static let defaultModel = "qwen2.5vl:7b"

    package typealias State = ModelEmulatorState<Reply, Setup, RequestDetails, NoWorld<Setup>>

    package let host: ScriptedServer<State>

    package init(host: ScriptedServer<State>) { self.host = host }

    /// Starts on 127.0.0.1 with a free port.
    package static func start(script: Script = Script()) throws -> OpenAIEmulator {
        try started(ScriptedServer(script: script, respond: handle))
    }

    /// `http://127.0.0.1:PORT/v1`, what shelfd's `[openai] base_url` should be.
    package var baseURL: String { host.baseURL + "/v1" }

    // MARK: - Handling

    private static func handle(_ request: RecordedRequest, shared: ScriptedServer<State>.Shared) -> HTTPServer.Response
    {
        let script = shared.script
        let flavour = script.flavour
        let authorization = request.header("authorization")
        let bearer = authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        var entry = LoggedRequest(request, details: RequestDetails(bearer: bearer))
        func answer(_ response: HTTPServer.Response) -> HTTPServer.Response {
            entry.status = response.status
            shared.log(entry)
            return response
        }

        let isChat = request.method == "POST" && request.path == "/v1/chat/completions"
        let isModels = request.method == "GET" && request.path == "/v1/models"
        guard isChat || isModels else {
            return answer(
                flavour == .ollama
                    ? HTTPServer.Response(status: 404, text: "404 page not found")
                    : errorResponse(flavour, 404, "File Not Found"))
        }
        if let key = script.apiKey, flavour != .ollama, bearer != key {
            return answer(
                flavour == .vllm ? flatError(401, "Unauthorized") : errorResponse(flavour, 401, "Invalid API Key"))
        }
        if isModels {
            if let reply = script.modelsReply { return answer(render(reply, flavour: flavour, model: "")) }
            return answer(modelList(script.models, flavour: flavour))
        }

        let chat: Chat
        switch validate(request.body, flavour: flavour) {
        case .failure(let violation): return answer(errorResponse(flavour, 400, violation.message))
        case .success(let valid): chat = valid
        }
        entry.model = chat.model
        entry.imageURLForm = chat.form
        if flavour != .llamaServer && !script.models.contains(chat.model) {
            return answer(render(.modelNotFound, flavour: flavour, model: chat.model))
        }
        let sha256 = SHA256.hex(of: chat.image)
        entry.photoSHA256 = sha256

        let (reply, latency): (Reply, Duration) = shared.update { s in
            s.reply(image: chat.image, sha256: sha256)
        }
        var response = render(reply, flavour: flavour, model: chat.model)
        response.delay = latency
        return answer(response)
    }

    // MARK: - Request validation

    private struct Chat { var model: String, image: [UInt8], form: ImageURLForm }
    private struct Violation: Error { var message: String }

    /// Checks the request the way shelfd must build it; returns the model, the decoded image and its form.
    private static func validate(_ body: [UInt8], flavour: Flavour) -> Result<Chat, Violation> {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return .failure(Violation(message: "invalid JSON in request body"))
        }
        guard let model = root["model"] as? String, !model.isEmpty else {
            return .failure(Violation(message: "model is required"))
        }
        guard let messages = root["messages"] as? [[String: Any]], !messages.isEmpty else {
            return .failure(Violation(message: "'messages' is required and must be a non-empty array"))
        }
        if root["stream"] as? Bool == true {
            return .failure(Violation(message: "emulator: shelfd must send \"stream\": false"))
        }
        let parts = messages.filter { $0["role"] as? String == "user" }
            .flatMap { $0["content"] as? [[String: Any]] ?? [] }
        guard let imagePart = parts.first(where: { $0["type"] as? String == "image_url" }) else {
            return .failure(Violation(message: "emulator: no image_url content part in a user message"))
        }
        guard parts.contains(where: { $0["type"] as? String == "text" && $0["text"] is String }) else {
            return .failure(Violation(message: "emulator: no text content part in the user message"))
        }
        let url: String, form: ImageURLForm
        if let object = imagePart["image_url"] as? [String: Any], let value = object["url"] as? String {
            url = value; form = .object
        } else if flavour == .ollama, let value = imagePart["image_url"] as? String {
            url = value; form = .string
        } else {
            return .failure(Violation(message: "image_url must be an object with a url"))
        }
        if url.hasPrefix("http://") || url.hasPrefix("https://") {
            return .failure(
                Violation(message: "image URLs are not currently supported, please use base64 encoded data instead"))
        }
        let prefixes = ["jpeg", "jpg", "png", "webp"].map { "data:image/\($0);base64," }
        guard let prefix = prefixes.first(where: url.hasPrefix),
            let image = Data(base64Encoded: String(url.dropFirst(prefix.count))), !image.isEmpty
        else {
            return .failure(Violation(message: "invalid image input"))
        }
        guard let format = root["response_format"] as? [String: Any], format["type"] as? String == "json_schema" else {
            return .failure(Violation(message: "emulator: response_format must be {\"type\": \"json_schema\", …}"))
        }
        guard let wrapper = format["json_schema"] as? [String: Any], let schema = wrapper["schema"] as? [String: Any],
            !schema.isEmpty
        else {
            // llama-server silently ignores the README's flat {"type":"json_schema","schema":…}; refuse it here.
            return .failure(Violation(message: "emulator: response_format.json_schema.schema is missing"))
        }
        if flavour == .vllm, (wrapper["name"] as? String ?? "").isEmpty {
            return .failure(Violation(message: "response_format.json_schema.name: Field required"))
        }
        if let problem = schemaProblem(schema, at: "response_format.json_schema.schema") { return .failure(problem) }
        let maxTokens = (root["max_tokens"] ?? root["max_completion_tokens"]) as? Int
        guard let maxTokens, maxTokens > 0 else {
            return .failure(
                Violation(message: "emulator: max_tokens must be set: server defaults are too small for a shelf"))
        }
        return .success(Chat(model: model, image: [UInt8](image), form: form))
    }

    /// Standard JSON Schema: lower-case types (a string or an array of them), objects with properties.
    private static func schemaProblem(_ schema: [String: Any], at path: String) -> Violation? {
        let known: Set<String> = ["string", "number", "integer", "boolean", "array", "object", "null"]
        let types = (schema["type"] as? String).map { [$0] } ?? schema["type"] as? [String] ?? []
        if schema["type"] != nil && (types.isEmpty || !types.allSatisfy(known.contains)) {
            return Violation(message: "\(path).type: not a JSON Schema type: \(schema["type"] ?? "")")
        }
        for (name, value) in schema["properties"] as? [String: Any] ?? [:] {
            guard let child = value as? [String: Any] else { continue }
            if let problem = schemaProblem(child, at: "\(path).properties.\(name)") { return problem }
        }
        if let items = schema["items"] as? [String: Any] { return schemaProblem(items, at: "\(path).items") }
        return nil
    }

    // MARK: - Answers

    private static func render(_ reply: Reply, flavour: Flavour, model: String) -> HTTPServer.Response {
        switch reply {
        case .written(let answer):
            return completion(answer.text(corners: true), finishReason: "stop", flavour: flavour, model: model)
        case .proseWrapped(let books):
            return completion(
                "Here are the books I can read on the shelf:\n\n" + answerJSON(books, [])
                    + "\n\nLet me know if you need anything else!", finishReason: "stop", flavour: flavour, model: model
            )
        case .cut(let books):
            let full = answerJSON(books, [])
            return completion(
                String(full.prefix(max(1, full.count * 3 / 5))), finishReason: "length", flavour: flavour,
                model: model)
        case .text(let text, let finishReason):
            return completion(text, finishReason: finishReason, flavour: flavour, model: model)
        case .modelNotFound:
            switch flavour {
            case .ollama: return errorResponse(flavour, 404, "model '\(model)' not found, try pulling it first")
            case .llamaServer: return errorResponse(flavour, 404, "model not found")
            case .vllm: return errorResponse(flavour, 404, "The model `\(model)` does not exist.", param: "model")
            }
        case .imageNotSupported:
            return .json(
                json([
                    "error": [
                        "code": 500, "type": "server_error",
                        "message":
                            "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
                    ]
                ]),
                status: 500)
        case .loadingModel(let retryAfter):
            return .json(
                json(["error": ["code": 503, "message": "Loading model", "type": "unavailable_error"]]), status: 503,
                headers: retryAfter.map { [("Retry-After", $0)] } ?? [])
        case .rateLimited(let retryAfter, let retryAfterMs):
            var response = errorResponse(flavour, 429, "Rate limit exceeded. Please slow down.")
            if let retryAfterMs { response.headers.append(("retry-after-ms", retryAfterMs)) }
            if let retryAfter { response.headers.append(("Retry-After", retryAfter)) }
            return response
        case .error(let status, let message):
            return errorResponse(flavour, status, message)
        case .flatError(let status, let message):
            return flatError(status, message)
        case .legacyVLLMError(let status, let message):
            return .json(
                json([
                    "object": "error", "message": message, "type": vllmType(status), "param": NSNull(),
                    "code": status,
                ]), status: status)
        case .raw(let status, let headers, let body):
            return HTTPServer.Response(status: status, headers: headers, text: body)
        }
    }

    /// The answer shelfd asks for, as the model would write it.
    private static func answerJSON(_ books: [Book], _ suggestions: [Suggestion]) -> String {
        EmulatedText.answerJSON(books, suggestions, corners: true)
    }

    /// A `chat.completion` with the flavour's extra fields.
    private static func completion(
        _ content: String, finishReason: String, flavour: Flavour,
        model: String
    ) -> HTTPServer.Response {
        let completionTokens = max(1, content.utf8.count / 4)
        var message: [String: Any] = ["role": "assistant", "content": content]
        var choice: [String: Any] = ["index": 0, "finish_reason": finishReason]
        var body: [String: Any] = [
            "object": "chat.completion", "created": Int(Date().timeIntervalSince1970), "model": model,
            "usage": [
                "prompt_tokens": 1290, "completion_tokens": completionTokens, "total_tokens": 1290 + completionTokens,
            ],
        ]
        switch flavour {
        case .ollama:
            body["id"] = "chatcmpl-\(Int.random(in: 0..<999))"
            body["system_fingerprint"] = "fp_ollama"
        case .llamaServer:
            body["id"] = "chatcmpl-" + randomID(32)
            body["system_fingerprint"] = "b6000-emulator"
            body["timings"] = [
                "prompt_n": 1290, "prompt_ms": 2104.5, "predicted_n": completionTokens, "predicted_ms": 5310.2,
            ]
        case .vllm:
            body["id"] = "chatcmpl-" + randomID(32).lowercased()
            body["prompt_logprobs"] = NSNull()
            message["refusal"] = NSNull(); message["tool_calls"] = []; message["reasoning_content"] = NSNull()
            choice["logprobs"] = NSNull(); choice["stop_reason"] = NSNull()
        }
        choice["message"] = message
        body["choices"] = [choice]
        return .json(json(body))
    }

    private static func modelList(_ models: [String], flavour: Flavour) -> HTTPServer.Response {
        let created = Int(Date().timeIntervalSince1970)
        let data: [[String: Any]] = models.map { id in
            switch flavour {
            case .ollama: ["id": id, "object": "model", "created": created, "owned_by": "library"]
            case .llamaServer:
                [
                    "id": id, "object": "model", "created": created, "owned_by": "llamacpp",
                    "meta": ["n_ctx_train": 128_000, "n_params": 4_300_000_000],
                ]
            case .vllm:
                [
                    "id": id, "object": "model", "created": created, "owned_by": "vllm", "root": id,
                    "parent": NSNull(), "max_model_len": 32_768,
                ]
            }
        }
        return .json(json(["object": "list", "data": data]))
    }

    /// `{"error": {...}}` as each flavour writes it.
    private static func errorResponse(
        _ flavour: Flavour, _ status: Int, _ message: String,
        param: String? = nil
    ) -> HTTPServer.Response {
        let error: [String: Any]
        switch flavour {
        case .ollama:
            let type = status == 400 ? "invalid_request_error" : status == 404 ? "not_found_error" : "api_error"
            error = ["message": message, "type": type, "param": NSNull(), "code": NSNull()]
        case .llamaServer:
            error = ["code": status, "message": message, "type": llamaServerType(status)]
        case .vllm:
            error = [
                "message": message, "type": vllmType(status), "param": param.map { $0 as Any } ?? NSNull(),
                "code": status,
            ]
        }
        return .json(json(["error": error]), status: status)
    }

    private static func flatError(_ status: Int, _ message: String) -> HTTPServer.Response {
        .json(json(["error": message]), status: status)
    }

    private static func llamaServerType(_ status: Int) -> String {
        switch status {
        case 401: "authentication_error"
        case 403: "permission_error"
        case 404: "not_found_error"
        case 501: "not_supported_error"
        case 503: "unavailable_error"
        case 400...499: "invalid_request_error"
        default: "server_error"
        }
    }

    private static func vllmType(_ status: Int) -> String {
        switch status {
        case 404: "NotFoundError"
        case 400...499: "BadRequestError"
        default: "InternalServerError"
        }
    }

    private static func randomID(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<count).map { _ in alphabet.randomElement()! })
    }

    private static func json(_ object: Any) -> String { emulatorJSON(object) }
}

extension EmulatorScript where Reply == OpenAIEmulator.Reply, Setup == OpenAIEmulator.Setup {
    package init(
        flavour: OpenAIEmulator.Flavour = .ollama, apiKey: String? = nil,
        models: [String] = [OpenAIEmulator.defaultModel], latency: Duration = .zero,
        rules: [OpenAIEmulator.Rule] = [], reply: Reply = .books([]), modelsReply: Reply? = nil
    ) {
        self.init(
            setup: .init(flavour: flavour, apiKey: apiKey, models: models, modelsReply: modelsReply),
            latency: latency, rules: rules, reply: reply)
    }

    /// Every chat request gets `reply`.
    package static func always(_ reply: Reply, flavour: OpenAIEmulator.Flavour = .ollama) -> Self {
        Self(flavour: flavour, reply: reply)
    }
}

/// Starts an emulator on 127.0.0.1, runs `body` with it, and always stops it.
package func withOpenAIEmulator<T>(
    _ script: OpenAIEmulator.Script = .init(),
    _ body: (OpenAIEmulator) async throws -> T
) async throws -> T {
    let emulator = try OpenAIEmulator.start(script: script)
    defer { emulator.stop() }
    return try await body(emulator)
}
