import Foundation
import ShelfCore
import ShelfDigest

/// A loopback stand-in for the Gemini Developer API's `generateContent`, speaking its wire format
/// (paths, `x-goog-api-key`/`?key=`, camelCase answers, google.rpc error envelopes). It checks each
/// request the way shelfd must send it and answers from a script that can key on the photo.
package final class GeminiEmulator: ModelEmulator {
    // Declared here: ShelfCore's `Book` would win over a protocol's name in the nested types.
    package typealias Book = EmulatedBook
    package typealias Suggestion = EmulatedSuggestion

    /// What one request is answered with.
    package enum Reply: WrittenReply {
        /// 200, `finishReason: STOP`, the model's answer as the text part (`.books`, `.fenced`, `.garbage`).
        case written(EmulatedText)
        /// The answer followed by a sentence of prose.
        case trailingProse([Book])
        /// A thought-summary part (`thought: true`) before the answer part.
        case thoughtThenBooks([Book])
        /// Any text as the single part, with any finish reason.
        case text(String, finishReason: String = "STOP")
        /// `MAX_TOKENS` with no `content.parts` (thinking used the whole budget).
        case maxTokensWithoutParts
        /// `MAX_TOKENS` with the answer cut off mid-JSON.
        case maxTokensCut([Book])
        /// A candidate that finished for this reason (SAFETY, RECITATION, PROHIBITED_CONTENT…) with no parts.
        case finishedWithoutParts(String)
        /// `promptFeedback.blockReason` and no candidates.
        case blockedPrompt(String)
        /// 503 UNAVAILABLE "The model is overloaded…"
        case overloaded
        /// 500 INTERNAL
        case internalError
        /// 504 DEADLINE_EXCEEDED
        case deadlineExceeded
        /// 429 RESOURCE_EXHAUSTED with a per-minute QuotaFailure; `retryDelay` ("2s", "0.5s", "900ms")
        /// adds a RetryInfo detail and "Please retry in …" to the message.
        case rateLimited(retryDelay: String?)
        /// 429 RESOURCE_EXHAUSTED with a per-day QuotaFailure.
        case dailyQuotaExhausted
        /// Any google.rpc.Status error envelope.
        case error(status: Int, rpcStatus: String, message: String)
        /// Anything at all.
        case raw(status: Int, headers: [(name: String, value: String)] = [], body: String)
    }

    package typealias Script = EmulatorScript<Reply, Setup>

    /// What a script says of this Gemini beyond its replies.
    package struct Setup: Sendable {
        package var apiKey: String
        /// Models that exist; nil: every model name exists.
        package var models: Set<String>?
        /// Google's per-minute quota: a photo request beyond this many arrived in the last 60 s (any 60 s, by
        /// this server's clock) gets 429 RESOURCE_EXHAUSTED (no retry delay). Nil: no quota.
        package var requestsPerMinute: Int?
        /// How much later than it was sent each photo request reaches the provider, in turn (the list repeats): a
        /// network delivers requests sooner or later, and the quota counts them as they arrive. Empty: at once.
        package var travel: [Duration] = []
        /// The provider's clock, which its quota window and arrival times are read on: nil for the wall's, or a
        /// test's manual clock (`ManualClock.time`), on which a request's travel is added to its arrival, not slept.
        package var clock: TimeSource?
        /// The provider's time now.
        var now: Date { clock?.now ?? Date() }
        /// The Batch API's behaviour (GeminiBatchAPIEmulator.swift).
        package var batchAPI = BatchAPIScript()
    }

    package enum KeySource: String, Sendable { case header, query, missing }

    package typealias LoggedRequest = EmulatedRequest<RequestDetails>

    /// What a logged request says of Gemini's own wire format.
    package struct RequestDetails: Sendable {
        package var keySource: KeySource
        /// When the request arrived (read, after its `Setup.travel`), before any latency: what a provider's rate
        /// limit counts.
        package var arrivedAt: Date
    }

    package static let defaultKey = "emulator-test-key"

    package typealias State = ModelEmulatorState<Reply, Setup, RequestDetails, World>

    /// The per-minute quota's window and the Batch API's jobs.
    package struct World: EmulatorWorld {
        /// Arrivals of the photo requests let through in the last minute (`Setup.requestsPerMinute`).
        var admitted: [Date] = []
        /// Photo requests that have travelled so far (`Setup.travel`).
        var travelled = 0
        /// Batch API jobs, uploaded files and uploads under way (GeminiBatchAPIEmulator.swift).
        var batchAPI = BatchAPIWorld()

        package init(setup: Setup) {}
    }

    package let host: ScriptedServer<State>

    package init(host: ScriptedServer<State>) { self.host = host }

    /// Starts on 127.0.0.1 with a free port; `baseURL` is what shelfd's `[gemini] base_url` should be.
    package static func start(script: Script = Script()) throws -> GeminiEmulator {
        try started(ScriptedServer(script: script, respond: handle))
    }

    // MARK: - Handling

    private static func handle(_ request: RecordedRequest, shared: ScriptedServer<State>.Shared) -> HTTPServer.Response
    {
        let script = shared.script
        let path = request.path
        let model = modelName(in: path)
        var keySource = KeySource.missing
        var key: String?
        if let header = request.header("x-goog-api-key") {
            keySource = .header; key = header
        } else if let query = request.query["key"] {
            keySource = .query; key = query
        }
        var entry = LoggedRequest(
            request, model: model, details: RequestDetails(keySource: keySource, arrivedAt: script.now))
        func answer(_ response: HTTPServer.Response) -> HTTPServer.Response {
            entry.status = response.status
            shared.log(entry)
            return response
        }
        if isBatchAPIPath(path) {
            guard let key else {
                return answer(errorResponse(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers."))
            }
            guard key == script.apiKey else { return answer(invalidKey()) }
            return answer(handleBatchAPI(request, shared: shared))
        }

        // models.get: GET /v1beta/models/{model}, what `shelfd doctor` uses to check key and model for free.
        let getModel =
            request.method == "GET" && path.hasPrefix("/v1beta/models/") && !path.contains(":")
            ? String(path.dropFirst("/v1beta/models/".count)) : nil
        guard (request.method == "POST" && model != nil) || getModel != nil, let model = model ?? getModel else {
            return answer(errorResponse(404, "NOT_FOUND", "Method not found."))
        }
        guard let key else {
            return answer(
                errorResponse(
                    403, "PERMISSION_DENIED",
                    "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."
                ))
        }
        guard key == script.apiKey else { return answer(invalidKey()) }
        if let models = script.models, !models.contains(model) {
            return answer(
                errorResponse(
                    404, "NOT_FOUND",
                    "models/\(model) is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods."
                ))
        }
        if getModel != nil {
            return answer(
                .json(
                    """
                    {"name": "models/\(model)", "displayName": "\(model)", "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
                     "supportedGenerationMethods": ["generateContent", "countTokens", "batchGenerateContent"]}
                    """))
        }
        let image: [UInt8]
        switch validate(request.body, model: model) {
        case .failure(let violation): return answer(badRequest(violation))
        case .success(let bytes): image = bytes
        }
        let sha256 = SHA256.hex(of: image)
        entry.photoSHA256 = sha256
        let travel: Duration = shared.update { s in
            defer { s.travelled += 1 }
            return s.script.travel.isEmpty ? .zero : s.script.travel[s.travelled % s.script.travel.count]
        }
        if travel > .zero, script.clock != nil {
            entry.arrivedAt = entry.arrivedAt.addingTimeInterval(seconds(travel))
        } else if travel > .zero {
            Thread.sleep(forTimeInterval: seconds(travel))
            entry.arrivedAt = Date()
        }

        let (reply, latency): (Reply, Duration) = shared.update { s in
            if let limit = s.script.requestsPerMinute {
                let windowStart = entry.arrivedAt.addingTimeInterval(-60)
                s.admitted.removeAll { $0 <= windowStart }
                if s.admitted.count >= limit { return (.rateLimited(retryDelay: nil), .zero) }
                s.admitted.append(entry.arrivedAt)
            }
            return s.reply(image: image, sha256: sha256)
        }
        var response = render(reply, model: model)
        response.delay = latency
        return answer(response)
    }

    /// `/v1beta/models/{model}:generateContent` → model.
    private static func modelName(in path: String) -> String? {
        let prefix = "/v1beta/models/", suffix = ":generateContent"
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else {
            return nil
        }
        let segment = String(path.dropFirst(prefix.count).dropLast(suffix.count))
        return segment.removingPercentEncoding ?? segment
    }

    // MARK: - Request validation

    struct Violation: Error {
        var field: String, description: String

        /// "thinking_config is not specified", as Google says of a field left out.
        static func missing(_ field: String) -> Violation {
            Violation(field: field, description: "\(field.split(separator: ".").last ?? "") is not specified")
        }
    }

    /// Checks the request the way shelfd must build it; returns the decoded image.
    static func validate(_ body: [UInt8], model: String) -> Result<[UInt8], Violation> {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return .failure(Violation(field: "", description: "Invalid JSON payload received. Unexpected token."))
        }
        guard let contents = root["contents"] as? [[String: Any]],
            let parts = contents.first?["parts"] as? [[String: Any]],
            !parts.isEmpty
        else {
            return .failure(.missing("contents"))
        }
        guard let imageIndex = parts.firstIndex(where: { field($0, "inlineData", "inline_data") != nil }),
            let inline = field(parts[imageIndex], "inlineData", "inline_data") as? [String: Any]
        else {
            return .failure(
                Violation(field: "contents[0].parts", description: "No inline_data image part in the request."))
        }
        guard let textIndex = parts.firstIndex(where: { $0["text"] is String }) else {
            return .failure(Violation(field: "contents[0].parts", description: "No text part in the request."))
        }
        guard imageIndex < textIndex else {
            return .failure(
                Violation(
                    field: "contents[0].parts",
                    description: "The image part must come before the text part."))
        }
        let mimeType = field(inline, "mimeType", "mime_type") as? String ?? ""
        guard ["image/jpeg", "image/png", "image/webp", "image/heic", "image/heif"].contains(mimeType) else {
            return .failure(
                Violation(
                    field: "contents[0].parts[\(imageIndex)].inline_data.mime_type",
                    description: "Unsupported MIME type: \(mimeType)"))
        }
        guard let data = inline["data"] as? String, let image = Data(base64Encoded: data), !image.isEmpty else {
            return .failure(
                Violation(
                    field: "contents[0].parts[\(imageIndex)].inline_data.data",
                    description:
                        "Invalid value at 'contents[0].parts[\(imageIndex)].inline_data.data' (TYPE_BYTES), Base64 decoding failed"
                ))
        }
        guard let config = field(root, "generationConfig", "generation_config") as? [String: Any] else {
            return .failure(.missing("generation_config"))
        }
        guard field(config, "responseMimeType", "response_mime_type") as? String == "application/json" else {
            return .failure(
                Violation(
                    field: "generation_config.response_mime_type",
                    description: "response_mime_type must be application/json"))
        }
        guard let schema = field(config, "responseSchema", "response_schema") as? [String: Any] else {
            return .failure(.missing("generation_config.response_schema"))
        }
        if let problem = schemaProblem(schema, at: "generation_config.response_schema") { return .failure(problem) }
        guard let maxTokens = field(config, "maxOutputTokens", "max_output_tokens") as? Int, maxTokens >= 8192 else {
            return .failure(
                Violation(
                    field: "generation_config.max_output_tokens",
                    description: "max_output_tokens must be at least 8192: thinking tokens count against it"))
        }
        guard let thinking = field(config, "thinkingConfig", "thinking_config") as? [String: Any] else {
            return .failure(.missing("generation_config.thinking_config"))
        }
        if model.hasPrefix("gemini-3") {
            let level = (field(thinking, "thinkingLevel", "thinking_level") as? String)?.lowercased()
            guard let level, ["minimal", "low", "medium", "high"].contains(level) else {
                return .failure(
                    Violation(
                        field: "generation_config.thinking_config.thinking_level",
                        description: "Gemini 3 models take thinking_level (minimal, low, medium, high)"))
            }
        } else {
            guard let budget = field(thinking, "thinkingBudget", "thinking_budget") as? Int else {
                return .failure(.missing("generation_config.thinking_config.thinking_budget"))
            }
            if budget == 0 && model.contains("pro") {
                return .failure(
                    Violation(
                        field: "generation_config.thinking_config.thinking_budget",
                        description: "Budget 0 is invalid. This model only works in thinking mode."))
            }
        }
        return .success([UInt8](image))
    }

    private static func field(_ object: [String: Any], _ camel: String, _ snake: String) -> Any? {
        object[camel] ?? object[snake]
    }

    /// The `Schema` subset: UPPER-case types, no `title` or `$schema`, `nullable` instead of a "null" type.
    private static func schemaProblem(_ schema: [String: Any], at path: String) -> Violation? {
        let known: Set<String> = [
            "type", "format", "description", "nullable", "enum", "maxItems", "minItems", "properties",
            "required", "propertyOrdering", "items", "minimum", "maximum", "anyOf",
        ]
        for key in schema.keys where !known.contains(key) {
            return Violation(
                field: path,
                description: "Invalid JSON payload received. Unknown name \"\(key)\" at '\(path)': Cannot find field.")
        }
        let types: Set<String> = ["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"]
        if let type = schema["type"] {
            guard let type = type as? String, types.contains(type) else {
                return Violation(
                    field: "\(path).type",
                    description:
                        "Invalid value at '\(path).type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), \"\(schema["type"] ?? "")\""
                )
            }
        }
        if let properties = schema["properties"] as? [String: Any] {
            for (name, value) in properties {
                guard let child = value as? [String: Any] else { continue }
                if let problem = schemaProblem(child, at: "\(path).properties[\(name)].value") { return problem }
            }
        }
        if let items = schema["items"] as? [String: Any], let problem = schemaProblem(items, at: "\(path).items") {
            return problem
        }
        return nil
    }

    // MARK: - Answers

    static func render(_ reply: Reply, model: String) -> HTTPServer.Response {
        switch reply {
        case .written(let answer):
            // Gemini ends a JSON answer with a newline.
            let newline = if case .books = answer { "\n" } else { "" }
            return success(parts: [["text": answer.text + newline]], finishReason: "STOP", model: model)
        case .trailingProse(let books):
            return success(
                parts: [["text": answerJSON(books, []) + "\n\nI hope this helps catalogue your shelf!"]],
                finishReason: "STOP", model: model)
        case .thoughtThenBooks(let books):
            let thought: [String: Any] = [
                "text": "**Reading the spines**\nI start at the left edge and read each spine.",
                "thought": true,
            ]
            return success(parts: [thought, ["text": answerJSON(books, [])]], finishReason: "STOP", model: model)
        case .text(let text, let finishReason):
            return success(parts: [["text": text]], finishReason: finishReason, model: model)
        case .maxTokensWithoutParts:
            return success(parts: nil, finishReason: "MAX_TOKENS", model: model)
        case .maxTokensCut(let books):
            let full = answerJSON(books, [])
            return success(
                parts: [["text": String(full.prefix(max(1, full.count * 3 / 5)))]], finishReason: "MAX_TOKENS",
                model: model)
        case .finishedWithoutParts(let reason):
            return success(parts: nil, finishReason: reason, model: model)
        case .blockedPrompt(let reason):
            let body: [String: Any] = [
                "promptFeedback": [
                    "blockReason": reason,
                    "safetyRatings": [
                        ["category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"],
                        ["category": "HARM_CATEGORY_HARASSMENT", "probability": "MEDIUM"],
                    ],
                ],
                "usageMetadata": ["promptTokenCount": 1290, "totalTokenCount": 1290],
                "modelVersion": model, "responseId": responseID(),
            ]
            return .json(json(body))
        case .overloaded:
            return errorResponse(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
        case .internalError:
            return errorResponse(
                500, "INTERNAL",
                "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
            )
        case .deadlineExceeded:
            return errorResponse(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.")
        case .rateLimited(let retryDelay):
            var message =
                "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: \(model)"
            var details = [quotaFailure("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", model: model), help]
            if let retryDelay {
                message += "\nPlease retry in \(retryDelay)."
                details.append(["@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retryDelay])
            }
            return errorResponse(429, "RESOURCE_EXHAUSTED", message, details: details)
        case .dailyQuotaExhausted:
            let message =
                "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 250, model: \(model)\nPlease retry in 43.5s."
            return errorResponse(
                429, "RESOURCE_EXHAUSTED", message,
                details: [
                    quotaFailure("GenerateRequestsPerDayPerProjectPerModel-FreeTier", model: model), help,
                    ["@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "43s"],
                ])
        case .error(let status, let rpcStatus, let message):
            return errorResponse(status, rpcStatus, message)
        case .raw(let status, let headers, let body):
            return HTTPServer.Response(status: status, headers: headers, text: body)
        }
    }

    /// The answer shelfd asks for, as the model would write it.
    private static func answerJSON(_ books: [Book], _ suggestions: [Suggestion]) -> String {
        EmulatedText.answerJSON(books, suggestions)
    }

    private static func success(parts: [[String: Any]]?, finishReason: String, model: String) -> HTTPServer.Response {
        var content: [String: Any] = ["role": "model"]
        if let parts { content["parts"] = parts }
        let candidate: [String: Any] = ["content": content, "finishReason": finishReason, "index": 0]
        let text = parts?.compactMap { $0["text"] as? String }.joined() ?? ""
        let candidatesTokens = text.utf8.count / 4,
            thoughts = finishReason == "MAX_TOKENS" && parts == nil ? 16_384 : 611
        let body: [String: Any] = [
            "candidates": [candidate],
            "usageMetadata": [
                "promptTokenCount": 1290, "candidatesTokenCount": candidatesTokens, "thoughtsTokenCount": thoughts,
                "totalTokenCount": 1290 + candidatesTokens + thoughts,
                "promptTokensDetails": [
                    ["modality": "TEXT", "tokenCount": 258], ["modality": "IMAGE", "tokenCount": 1032],
                ],
            ],
            "modelVersion": model,
            "responseId": responseID(),
        ]
        return .json(json(body))
    }

    static func errorResponse(
        _ status: Int, _ rpcStatus: String, _ message: String,
        details: [[String: Any]]? = nil
    ) -> HTTPServer.Response {
        var error: [String: Any] = ["code": status, "message": message, "status": rpcStatus]
        if let details { error["details"] = details }
        return .json(json(["error": error]), status: status)
    }

    static func invalidKey() -> HTTPServer.Response {
        errorResponse(
            400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
            details: [
                [
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                    "metadata": ["service": "generativelanguage.googleapis.com"],
                ],
                [
                    "@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
                    "message": "API key not valid. Please pass a valid API key.",
                ],
            ])
    }

    static func badRequest(_ violation: Violation) -> HTTPServer.Response {
        let message =
            violation.field.isEmpty
            ? violation.description : "Invalid value at '\(violation.field)': \(violation.description)"
        return errorResponse(
            400, "INVALID_ARGUMENT", message,
            details: [
                [
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [["field": violation.field, "description": violation.description]],
                ]
            ])
    }

    private static func quotaFailure(_ quotaId: String, model: String) -> [String: Any] {
        [
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [
                [
                    "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                    "quotaId": quotaId,
                    "quotaDimensions": ["location": "global", "model": model],
                ]
            ],
        ]
    }

    private static var help: [String: Any] {
        [
            "@type": "type.googleapis.com/google.rpc.Help",
            "links": [
                [
                    "description": "Learn more about Gemini API quotas",
                    "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                ]
            ],
        ]
    }

    private static func responseID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<23).map { _ in alphabet.randomElement()! })
    }

    static func json(_ object: Any) -> String { emulatorJSON(object) }
}

extension EmulatorScript where Reply == GeminiEmulator.Reply, Setup == GeminiEmulator.Setup {
    package init(
        apiKey: String = GeminiEmulator.defaultKey, models: Set<String>? = nil, latency: Duration = .zero,
        rules: [GeminiEmulator.Rule] = [], reply: Reply = .books([]), requestsPerMinute: Int? = nil
    ) {
        self.init(
            setup: .init(apiKey: apiKey, models: models, requestsPerMinute: requestsPerMinute), latency: latency,
            rules: rules, reply: reply)
    }

    /// Every request gets `reply`.
    package static func always(_ reply: Reply) -> Self { Self(reply: reply) }

    /// The first `times` requests get `failure`, later ones `then`.
    package static func failing(times: Int, with failure: Reply, then: Reply) -> Self {
        Self(rules: [.init(photo: .any, replies: Array(repeating: failure, count: times) + [then])])
    }
}

/// Starts an emulator on 127.0.0.1, runs `body` with it, and always stops it.
package func withGeminiEmulator<T>(
    _ script: GeminiEmulator.Script = .init(),
    _ body: (GeminiEmulator) async throws -> T
) async throws -> T {
    let emulator = try GeminiEmulator.start(script: script)
    defer { emulator.stop() }
    return try await body(emulator)
}
