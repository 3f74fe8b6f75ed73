import Foundation
package import Logging
package import ShelfCore
package import ShelfHTTP
package import ShelfImaging

/// `[gemini]` as the provider needs it.
package struct GeminiSettings: Sendable {
    package var model: String
    /// Without the version path: `https://generativelanguage.googleapis.com`.
    package var baseURL: String
    package var apiKey: Secret
    package var timeout: Duration
    /// Thinking tokens count against it; too few give MAX_TOKENS with no text.
    package var maxOutputTokens: Int
    /// For 2.x models (`thinkingConfig.thinkingBudget`); pro models cannot use 0.
    package var thinkingBudget: Int
    /// For 3.x models (`thinkingConfig.thinkingLevel`).
    package var thinkingLevel: String

    /// Model, base URL and timeout have no defaults here: `[gemini]`'s are the ones (ShelfConfig).
    package init(
        model: String, baseURL: String, apiKey: Secret, timeout: Duration, maxOutputTokens: Int = 16_384,
        thinkingBudget: Int = 1024, thinkingLevel: String = "low"
    ) {
        self.model = model; self.baseURL = baseURL; self.apiKey = apiKey; self.timeout = timeout
        self.maxOutputTokens = maxOutputTokens; self.thinkingBudget = thinkingBudget; self.thinkingLevel = thinkingLevel
    }
}

/// Google Gemini `generateContent` with the photo inline and structured JSON output (docs/reading.md, "Choosing a provider").
package struct GeminiProvider: VisionProvider {
    package let name = "gemini"
    package let settings: GeminiSettings
    private let link: HTTPLink

    /// Inline data limit for the whole request (base64 included); checked before sending.
    package static let inlineLimit = 20 * 1024 * 1024

    package init(settings: GeminiSettings, http: HTTPClient, logger: Logger, time: TimeSource = .system) {
        self.settings = settings
        link = HTTPLink(provider: name, model: settings.model, http: http, logger: logger, time: time)
    }

    package var model: String { settings.model }
    package var preset: ImagePreset { .gemini }

    /// `{base}/v1beta/models/{model}:generateContent`.
    package var endpoint: String {
        let model = settings.model.hasPrefix("models/") ? String(settings.model.dropFirst(7)) : settings.model
        return "\(settings.baseURL.withoutTrailingSlashes)/v1beta/models/\(model):generateContent"
    }

    // MARK: Sending

    package func send(_ photo: PhotoUpload) async throws(PhotoError) -> RawResponse {
        let body = try requestBody(for: photo)
        let request = HTTPRequest(
            method: "POST", url: endpoint,
            headers: [("Content-Type", "application/json"), ("x-goog-api-key", settings.apiKey.value)],
            body: body, timeout: settings.timeout)
        return try await link.answer(request, networkError: networkError, classify: classify)
    }

    /// `GET {base}/v1beta/models/{model}`: checks the key and the model without generating anything.
    package func checkReachable() async -> Result<String, PhotoError> {
        let url = endpoint.replacingOccurrences(of: ":generateContent", with: "")
        let request = HTTPRequest(
            method: "GET", url: url, headers: [("x-goog-api-key", settings.apiKey.value)],
            timeout: .seconds(15))
        do {
            let response = try await link.http.send(request)
            guard response.status == 200 else { return .failure(classify(response, now: link.time.now)) }
            return .success("Gemini answers; model \(settings.model) is available")
        } catch {
            return .failure(networkError(error))
        }
    }

    /// The JSON body: image part before the text part, a system instruction, structured output, explicit thinking.
    package func requestBody(for photo: PhotoUpload) throws(PhotoError) -> [UInt8] {
        try Self.serialize(requestObject(for: photo))
    }

    /// The `GenerateContentRequest` of a photo as a JSON object: the body of a request, or one request of a Batch API
    /// job.
    package func requestObject(for photo: PhotoUpload) throws(PhotoError) -> [String: Any] {
        let encodedSize = (photo.bytes.count + 2) / 3 * 4
        guard encodedSize + 64 * 1024 <= Self.inlineLimit else {
            throw PhotoError(
                .photoTooLarge,
                "The \(megabytes(photo.bytes.count)) MB photo is over Gemini's 20 MB inline limit "
                    + "(\(megabytes(encodedSize)) MB once encoded); shrinking photos arrives with preprocessing. Until then, "
                    + "export a smaller JPEG (about 3000 px on the long side) and drop it in again.", disposition: .dead
            )
        }
        let thinking: [String: Any] =
            settings.model.hasPrefix("gemini-3")
            ? ["thinkingLevel": settings.thinkingLevel] : ["thinkingBudget": settings.thinkingBudget]
        let body: [String: Any] = [
            "systemInstruction": ["parts": [["text": Self.systemInstruction]]],
            "contents": [
                [
                    "role": "user",
                    "parts": [
                        [
                            "inline_data": [
                                "mime_type": photo.mimeType, "data": Data(photo.bytes).base64EncodedString(),
                            ]
                        ],
                        ["text": Self.prompt],
                    ],
                ]
            ],
            "generationConfig": [
                "responseMimeType": "application/json",
                "responseSchema": Self.responseSchema,
                "maxOutputTokens": settings.maxOutputTokens,
                "thinkingConfig": thinking,
            ] as [String: Any],
        ]
        return body
    }

    static func serialize(_ object: Any) throws(PhotoError) -> [UInt8] {
        do {
            return [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes]))
        } catch {
            throw PhotoError(.internal, "Could not build the Gemini request: \(error)", disposition: .dead)
        }
    }

    static let systemInstruction = CataloguePrompt.instruction(
        box: CataloguePrompt.box2DSentence, answer: "Answer only with the JSON object described by the schema.")

    static let prompt = CataloguePrompt.userText

    /// Gemini's `Schema` subset: UPPER-case types, `nullable` rather than a "null" type, no `title`/`$schema`.
    static var responseSchema: [String: Any] {
        let book: [String: Any] = [
            "type": "OBJECT",
            "properties": [
                "title": ["type": "STRING"],
                "author": ["type": "STRING", "nullable": true],
                "isbn": ["type": "STRING", "nullable": true],
                "confidence": ["type": "NUMBER"],
                "box_2d": ["type": "ARRAY", "items": ["type": "INTEGER"]],
            ],
            "required": ["title", "confidence", "box_2d"],
            "propertyOrdering": ["title", "author", "isbn", "confidence", "box_2d"],
        ]
        let suggestion: [String: Any] = [
            "type": "OBJECT",
            "properties": [
                "type": ["type": "STRING", "enum": Suggestion.Kind.allCases.map(\.rawValue)],
                "severity": ["type": "STRING", "enum": Suggestion.Severity.allCases.map(\.rawValue)],
                "message": ["type": "STRING"],
            ],
            "required": ["type", "severity", "message"],
            "propertyOrdering": ["type", "severity", "message"],
        ]
        return [
            "type": "OBJECT",
            "properties": [
                "books": ["type": "ARRAY", "items": book], "suggestions": ["type": "ARRAY", "items": suggestion],
            ],
            "required": ["books", "suggestions"],
            "propertyOrdering": ["books", "suggestions"],
        ]
    }

    // MARK: Parsing

    package func parse(_ raw: RawResponse) throws(PhotoError) -> ModelAnswer {
        guard let response = try? JSONDecoder().decode(GenerateContentResponse.self, from: Data(raw.body)) else {
            throw PhotoError(
                .providerNonsense,
                "Gemini's answer (\(raw.body.count) bytes) was not a generateContent response. It will be retried; "
                    + "if it keeps happening, check [gemini] base_url.", disposition: .retry(after: nil))
        }
        if let reason = response.promptFeedback?.blockReason, response.candidates?.isEmpty ?? true {
            throw PhotoError(
                .providerBlocked,
                "Gemini refused to look at this photo (prompt blocked: \(reason)). It will not be retried; if it is a "
                    + "bookshelf, retake the photo and drop the new one in.", disposition: .dead)
        }
        guard let candidate = response.candidates?.first else {
            throw PhotoError(
                .providerNonsense, "Gemini answered with no candidates. It will be retried.",
                disposition: .retry(after: nil))
        }
        let text = (candidate.content?.parts ?? []).filter { $0.thought != true }.compactMap(\.text).joined()
        if let answer = AnswerParser.answer(from: text) { return answer }

        switch candidate.finishReason ?? "STOP" {
        case "MAX_TOKENS":
            throw PhotoError(
                .providerTruncated,
                "Gemini ran out of output tokens before finishing its answer (MAX_TOKENS at \(settings.maxOutputTokens), "
                    + "thinking included). It will be retried; if it keeps happening, photograph the shelf in two halves.",
                disposition: .retry(after: nil))
        case "STOP", "FINISH_REASON_UNSPECIFIED":
            let what =
                text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
                ? "no text" : "text that is not the JSON asked for"
            throw PhotoError(
                .providerNonsense, "Gemini answered with \(what). It will be retried.",
                disposition: .retry(after: nil))
        case let reason:
            throw PhotoError(
                .providerBlocked,
                "Gemini stopped without an answer (finishReason \(reason)). It will not be retried; if it is a "
                    + "bookshelf, retake the photo and drop the new one in.", disposition: .dead)
        }
    }

    private struct GenerateContentResponse: Decodable {
        struct Candidate: Decodable { var content: Content?; var finishReason: String? }
        struct Content: Decodable { var parts: [Part]? }
        struct Part: Decodable { var text: String?; var thought: Bool? }
        struct PromptFeedback: Decodable { var blockReason: String? }
        var candidates: [Candidate]?
        var promptFeedback: PromptFeedback?
    }

    // MARK: Errors

    func networkError(_ error: HTTPError) -> PhotoError { failure.network(error) }

    /// Gemini's words for the failures every provider has.
    private var failure: ProviderHTTPFailure {
        let host = URL(string: settings.baseURL)?.host ?? "the configured base_url"
        return ProviderHTTPFailure(
            wording: .init(
                name: "Gemini", section: "gemini", secrets: [settings.apiKey.value], target: "Gemini",
                address: "Gemini at \(host)", timeoutSubject: "Gemini", timeout: settings.timeout,
                unauthorized: .init(
                    lead: "Gemini refused the credential",
                    tail: ". Check that GEMINI_API_KEY is a Gemini API key allowed to use the Generative Language "
                        + "API, then run 'shelfd doctor'."),
                missingModel: .init(
                    lead: "Gemini has no model '\(settings.model)' for generateContent",
                    tail: "; it may be misspelt or retired. Set [gemini] model in shelfd.toml to a current model "
                        + "(for example gemini-2.5-flash), then run 'shelfd doctor'.", quotesServer: false),
                tooLarge: .init(
                    lead: "Gemini refused the photo as too large",
                    tail: ". Export a smaller JPEG and drop it in again.", quotesServer: false),
                rateLimitAdvice: "lower [gemini] requests_per_minute", unavailable: "Gemini is unavailable",
                failing: "Gemini failed"))
    }

    /// Turns a non-200 answer into what the queue should do.
    package func classify(_ response: HTTPResponse, now: Date) -> PhotoError {
        let status = response.status
        let envelope = ErrorEnvelope.decode(response.body)
        let details = envelope?.details ?? []
        let said = serverMessage(envelope?.message, status: envelope?.status)

        switch status {
        case 400 where details.contains { $0.reason == "API_KEY_INVALID" }:
            return PhotoError(
                .providerAuth,
                "Gemini rejected the API key (HTTP 400, API_KEY_INVALID). Set GEMINI_API_KEY "
                    + "(or the gemini_api_key credential) to a valid key from Google AI Studio, then run 'shelfd doctor'.",
                disposition: .providerBroken)
        case 429:
            let quotaIDs = details.flatMap { $0.violations ?? [] }.compactMap(\.quotaId)
            if let daily = quotaIDs.first(where: { $0.contains("PerDay") || $0.contains("Daily") }) {
                return PhotoError(
                    .providerQuota,
                    "Gemini's daily quota is used up (HTTP 429, \(daily)). Photos wait until it resets at midnight "
                        + "Pacific time; raise the quota or add billing to go on sooner.",
                    disposition: .providerWait(until: QuotaTimes.nextPacificMidnight(after: now)))
            }
            let wait =
                details.compactMap(\.retryDelay).compactMap(Self.seconds).first
                ?? envelope?.message.flatMap(Self.retryInMessage)
                ?? ProviderHTTPFailure.retryAfter(response, now: now)
                ?? 60
            return failure.status(response, said: said, wait: wait, now: now)
        case 402:
            return PhotoError(
                .providerQuota,
                "Gemini refused for billing reasons (HTTP 402\(said)). Check the project's "
                    + "billing, then run 'shelfd doctor'.", disposition: .providerBroken)
        default:
            return failure.status(response, said: said, wait: 60, now: now)
        }
    }

    /// ", STATUS: message" from the server, shortened, with the key scrubbed should it ever appear.
    private func serverMessage(_ message: String?, status: String?) -> String {
        serverText([status, message].compactMap { $0 }.joined(separator: ": "), redacting: [settings.apiKey.value])
    }

    private struct ErrorEnvelope: Decodable {
        struct Body: Decodable {
            var code: Int?
            var message: String?
            var status: String?
            var details: [Detail]?
        }
        struct Detail: Decodable {
            var reason: String?
            var retryDelay: String?
            var violations: [Violation]?
        }
        struct Violation: Decodable { var quotaId: String? }
        var error: Body

        /// The error body; streaming endpoints wrap it in a one-element array.
        static func decode(_ bytes: [UInt8]) -> Body? {
            let data = Data(bytes)
            if let envelope = try? JSONDecoder().decode(ErrorEnvelope.self, from: data) { return envelope.error }
            return (try? JSONDecoder().decode([ErrorEnvelope].self, from: data))?.first?.error
        }
    }

    /// A protobuf Duration ("59s", "0.5s", "34.07s") or "900ms", in seconds.
    package static func seconds(_ duration: String) -> TimeInterval? {
        let text = duration.trimmingCharacters(in: .whitespaces)
        let value: Double?
        if text.hasSuffix("ms") {
            value = Double(text.dropLast(2)).map { $0 / 1000 }
        } else if text.hasSuffix("s") {
            value = Double(text.dropLast())
        } else {
            value = nil
        }
        guard let value, value.isFinite, value >= 0 else { return nil }
        return value
    }

    /// "… Please retry in 7.5s." in an error message.
    package static func retryInMessage(_ message: String) -> TimeInterval? {
        guard let range = message.range(of: #"Please retry in [0-9.]+(ms|s)"#, options: .regularExpression) else {
            return nil
        }
        return seconds(String(message[range].dropFirst("Please retry in ".count)))
    }
}

private func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
