import Foundation
package import Logging
package import ShelfCore
package import ShelfHTTP
package import ShelfImaging

/// `[cloudflare]` as the provider needs it.
package struct CloudflareSettings: Sendable {
    package var model: String
    /// Without the API path: `https://api.cloudflare.com`.
    package var baseURL: String
    package var accountID: Secret
    package var apiToken: Secret
    package var timeout: Duration
    /// Sent explicitly: Llama 3.2 Vision's default of 256 tokens cuts a full shelf off mid-answer.
    package var maxTokens: Int

    /// Model, base URL and timeout have no defaults here: `[cloudflare]`'s are the ones (ShelfConfig).
    package init(
        model: String, baseURL: String, accountID: Secret, apiToken: Secret, timeout: Duration, maxTokens: Int = 4096
    ) {
        self.model = model; self.baseURL = baseURL; self.accountID = accountID; self.apiToken = apiToken
        self.timeout = timeout; self.maxTokens = maxTokens
    }
}

/// How a Workers AI model takes the photo and the JSON request, judged from its name.
package enum CloudflareRequestStyle: Sendable, Equatable {
    /// Llama 3.2 Vision: a top-level `image` array of byte values, `messages` with string content,
    /// no JSON mode; needs the one-time license agreement.
    case llamaVision
    /// LLaVA 1.5: a top-level `image` array and a `prompt`; answers `{description}`.
    case llava
    /// Llama 4 Scout, Gemma 3 and other chat models with vision: an `image_url` data-URI part in
    /// `messages`, `response_format` with the bare JSON schema under `json_schema`.
    case chatVision
    /// Mistral Small 3.1: like `chatVision`, with the schema as `guided_json`.
    case mistral
    /// The 2026 "OpenAI-shape" models (Gemma 4, Kimi): `image_url` parts, `response_format.json_schema`
    /// as `{name, schema}`, `max_completion_tokens`; the answer is a `chat.completion` inside `result`.
    case openAIShape

    package init(model: String) {
        let name = model.lowercased()
        if name.contains("llama-3.2") && name.contains("vision") {
            self = .llamaVision
        } else if name.contains("llava") {
            self = .llava
        } else if name.contains("mistral-small") {
            self = .mistral
        } else if name.contains("gemma-4") || name.contains("kimi-k2") {
            self = .openAIShape
        } else {
            self = .chatVision
        }
    }

    /// The image goes as a top-level array of byte values rather than a data URI.
    package var sendsByteArray: Bool { self == .llamaVision || self == .llava }
}

/// Cloudflare Workers AI `POST {base}/client/v4/accounts/{account}/ai/run/{model}` with the photo and
/// a request for the common answer (docs/reading.md, "Choosing a provider"). Boxes are asked for as `box_2d` `[ymin, xmin, ymax, xmax]`
/// on a 0–1000 grid, the same as Gemini, so one parser converts them to `Box`.
package struct CloudflareProvider: VisionProvider {
    package let name = "cloudflare"
    package let settings: CloudflareSettings
    private let link: HTTPLink
    private let licenses: any CloudflareLicenseMemory

    package init(
        settings: CloudflareSettings, http: HTTPClient, logger: Logger,
        licenseStore: any CloudflareLicenseMemory, time: TimeSource = .system
    ) {
        self.settings = settings; licenses = licenseStore
        link = HTTPLink(provider: name, model: settings.model, http: http, logger: logger, time: time)
    }

    package var model: String { settings.model }
    package var preset: ImagePreset { .cloudflare }
    package var style: CloudflareRequestStyle { CloudflareRequestStyle(model: settings.model) }

    /// `{base}/client/v4/accounts/{account}`.
    private var accountURL: String {
        "\(settings.baseURL.withoutTrailingSlashes)/client/v4/accounts/\(settings.accountID.value)"
    }

    /// `…/ai/run/{model}`, the model's `@` and `/` sent literally as in Cloudflare's examples.
    private var runURL: String { "\(accountURL)/ai/run/\(settings.model)" }

    private var headers: [(name: String, value: String)] {
        [("Content-Type", "application/json"), ("Authorization", "Bearer \(settings.apiToken.value)")]
    }

    // MARK: Sending

    package func send(_ photo: PhotoUpload) async throws(PhotoError) -> RawResponse {
        let body = try requestBody(for: photo)
        let started = link.time.clock.now
        var response = try await post(body)
        if CloudflareEnvelope(response.body).codes.contains(5016) {
            // The model's license has not been agreed to on this account: agree once, then ask again.
            // Already remembered: another request agreed a moment ago, so only ask again.
            if !licenses.hasAgreed(model: settings.model) {
                try await agreeToLicense()
                licenses.recordAgreement(model: settings.model)
            }
            response = try await post(body)
        }
        let latency = started.duration(to: link.time.clock.now)
        guard response.status == 200, CloudflareEnvelope(response.body).success != false else {
            throw classify(response, now: link.time.now, requestBytes: body.count)
        }
        return RawResponse(body: response.body, receivedAt: link.time.now, latency: latency)
    }

    /// One `ai/run` request; logs status, sizes and duration only.
    private func post(_ body: [UInt8]) async throws(PhotoError) -> HTTPResponse {
        let request = HTTPRequest(method: "POST", url: runURL, headers: headers, body: body, timeout: settings.timeout)
        do {
            return try await link.exchange(request).0
        } catch {
            throw networkError(error)
        }
    }

    /// `{"prompt": "agree"}` to the model, Cloudflare's documented one-time license step. Some clients
    /// report the answer as HTTP 403 "Thank you for agreeing…": that counts as agreed too.
    private func agreeToLicense() async throws(PhotoError) {
        let response = try await post(Array(#"{"prompt":"agree"}"#.utf8))
        let text = String(decoding: response.body, as: UTF8.self)
        guard response.status == 200 || text.localizedCaseInsensitiveContains("thank you for agreeing") else {
            throw classify(response, now: link.time.now)
        }
        link.logger.notice(
            "Agreed to the model's license on Cloudflare",
            metadata: [
                "provider": "cloudflare",
                "model": "\(settings.model)",
            ])
    }

    /// `GET …/ai/models/search?search={model}`: proves the token and the account ID and that the model
    /// exists, without running it.
    package func checkReachable() async -> Result<String, PhotoError> {
        let shortName = settings.model.split(separator: "/").last.map(String.init) ?? settings.model
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let query = shortName.addingPercentEncoding(withAllowedCharacters: allowed) ?? shortName
        let request = HTTPRequest(
            method: "GET", url: "\(accountURL)/ai/models/search?search=\(query)",
            headers: [("Authorization", "Bearer \(settings.apiToken.value)")], timeout: .seconds(15))
        let response: HTTPResponse
        do {
            response = try await link.http.send(request)
        } catch {
            return .failure(networkError(error))
        }
        guard response.status == 200, CloudflareEnvelope(response.body).success != false else {
            return .failure(classify(response, now: link.time.now))
        }
        let root = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        let names = (root?["result"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        guard names.contains(settings.model) else {
            return .failure(unknownModel(said: " (the account's model search does not list it)"))
        }
        return .success(
            "Cloudflare Workers AI answers; the token and account work and model \(settings.model) is available")
    }

    // MARK: Request

    /// The JSON body in the style the model takes (`CloudflareRequestStyle`).
    package func requestBody(for photo: PhotoUpload) throws(PhotoError) -> [UInt8] {
        let style = self.style
        var body: [String: Any] = ["temperature": 0.2]
        switch style {
        case .llamaVision:
            // The instructions travel in the user message, so a model that ignores a system prompt next
            // to an image still sees them.
            body["messages"] = [["role": "user", "content": Self.instruction + "\n\n" + Self.prompt]]
            body["max_tokens"] = settings.maxTokens
        case .llava:
            body["prompt"] = Self.instruction + "\n\n" + Self.prompt
            body["max_tokens"] = settings.maxTokens
        case .chatVision, .mistral, .openAIShape:
            let dataURI = "data:\(photo.mimeType);base64,\(Data(photo.bytes).base64EncodedString())"
            body["messages"] = [
                ["role": "system", "content": Self.instruction],
                [
                    "role": "user",
                    "content": [
                        ["type": "text", "text": Self.prompt],
                        ["type": "image_url", "image_url": ["url": dataURI]],
                    ],
                ] as [String: Any],
            ]
            switch style {
            case .mistral:
                body["guided_json"] = Self.answerSchema
                body["max_tokens"] = settings.maxTokens
            case .openAIShape:
                body["response_format"] =
                    [
                        "type": "json_schema",
                        "json_schema": ["name": "bookshelf", "schema": Self.answerSchema],
                    ] as [String: Any]
                body["max_completion_tokens"] = settings.maxTokens
            default:
                body["response_format"] = ["type": "json_schema", "json_schema": Self.answerSchema] as [String: Any]
                body["max_tokens"] = settings.maxTokens
            }
        }
        let json: [UInt8]
        do {
            json = [UInt8](
                try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes]))
        } catch {
            throw PhotoError(.internal, "Could not build the Cloudflare request: \(error)", disposition: .dead)
        }
        return style.sendsByteArray ? Self.prependingImageArray(photo.bytes, to: json) : json
    }

    /// `{"image":[255,216,…],` spliced before the rest of the object: much faster than boxing every byte
    /// in an NSNumber for JSONSerialization.
    private static func prependingImageArray(_ image: [UInt8], to json: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(json.count + image.count * 4 + 16)
        out += Array(#"{"image":["#.utf8)
        for (index, byte) in image.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += decimal[Int(byte)]
        }
        out.append(UInt8(ascii: "]"))
        if json.count > 2 {
            out.append(UInt8(ascii: ","))
            out += json.dropFirst()
        } else {
            out.append(UInt8(ascii: "}"))
        }
        return out
    }

    private static let decimal: [[UInt8]] = (0...255).map { Array(String($0).utf8) }

    static let instruction = CataloguePrompt.instruction(
        box: CataloguePrompt.box2DSentence,
        answer: """
            Answer with one JSON object and nothing else (no code fence, no comments), in exactly this shape:
            {"books": [{"title": "…", "author": "…" or null, "isbn": "…" or null, "confidence": 0.0, \
            "box_2d": [ymin, xmin, ymax, xmax]}], "suggestions": [{"type": "…", "severity": "…", "message": "…"}]}
            """)

    static let prompt = CataloguePrompt.userText

    /// Standard JSON Schema (lower-case types) for `response_format` and `guided_json`.
    static var answerSchema: [String: Any] {
        let book: [String: Any] = [
            "type": "object",
            "properties": [
                "title": ["type": "string"],
                "author": ["type": "string"], // optional rather than a ["string", "null"] type: not every
                "isbn": ["type": "string"], // guided-decoding backend takes type arrays
                "confidence": ["type": "number"],
                "box_2d": ["type": "array", "items": ["type": "integer"]],
            ] as [String: Any],
            "required": ["title", "confidence", "box_2d"],
        ]
        return CataloguePrompt.answerSchema(book: book, closed: false)
    }

    // MARK: Parsing

    package func parse(_ raw: RawResponse) throws(PhotoError) -> ModelAnswer {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(raw.body))) as? [String: Any] else {
            throw PhotoError(
                .providerNonsense,
                "Cloudflare's answer (\(raw.body.count) bytes) was not a Workers AI response. It will be retried; "
                    + "if it keeps happening, check [cloudflare] base_url.", disposition: .retry(after: nil))
        }
        if root["success"] as? Bool == false {
            throw classify(HTTPResponse(status: 200, body: raw.body), now: raw.receivedAt)
        }
        guard let result = root["result"], !(result is NSNull) else {
            throw PhotoError(
                .providerNonsense, "Cloudflare answered without a result. It will be retried.",
                disposition: .retry(after: nil))
        }
        let output = CloudflareModelOutput(result: result)
        if let answer = AnswerParser.answer(from: output.text) { return answer }

        let limitReached = output.finishReason == "length" || (output.completionTokens ?? 0) >= settings.maxTokens
        if limitReached || AnswerParser.isCutOff(output.text) {
            throw PhotoError(
                .providerTruncated,
                "Cloudflare's \(settings.model) stopped before finishing its answer (output limit \(settings.maxTokens) "
                    + "tokens); no books are taken from a cut answer. It will be retried; if it keeps happening, photograph "
                    + "the shelf in two halves.", disposition: .retry(after: nil))
        }
        let what =
            output.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            ? "no text" : "text that is not the JSON asked for"
        throw PhotoError(
            .providerNonsense, "Cloudflare's \(settings.model) answered with \(what). It will be retried.",
            disposition: .retry(after: nil))
    }

    // MARK: Errors

    private func networkError(_ error: HTTPError) -> PhotoError { failure().network(error) }

    /// Cloudflare's words for the failures every provider has; `requestBytes` tells a photo refused as too large.
    private func failure(requestBytes: Int? = nil) -> ProviderHTTPFailure {
        let host = URL(string: settings.baseURL)?.host ?? "the configured base_url"
        let size = requestBytes.map { " (the request was \(($0 + 1023) / 1024) KB)" } ?? ""
        return ProviderHTTPFailure(
            wording: .init(
                name: "Cloudflare", section: "cloudflare", secrets: secrets, target: "Cloudflare",
                address: "Cloudflare at \(host)", timeoutSubject: "Cloudflare", timeout: settings.timeout,
                unauthorized: .init(
                    lead: "Cloudflare rejected the API token",
                    tail: ". Set CLOUDFLARE_API_TOKEN to a token with the Workers AI Read and Edit permissions, and "
                        + "CLOUDFLARE_ACCOUNT_ID to the account it belongs to, \(Self.fixThen)"),
                forbidden: .init(
                    lead: "Cloudflare refused the request",
                    tail: ". Check that the token in CLOUDFLARE_API_TOKEN has the Workers AI permissions for the "
                        + "account in CLOUDFLARE_ACCOUNT_ID and that the account's plan includes \(settings.model), "
                        + Self.fixThen),
                missingModel: .init(
                    lead: "Cloudflare found nothing at the model's address",
                    tail: ". Check [cloudflare] model ('\(settings.model)'), CLOUDFLARE_ACCOUNT_ID and [cloudflare] "
                        + "base_url, \(Self.fixThen)"),
                tooLarge: .init(
                    lead: "Cloudflare refused the photo as too large\(size)",
                    tail: ". Export a smaller JPEG (about 1500 px on the long side) and drop it in again."),
                rateLimitAdvice: "lower [cloudflare] requests_per_minute", rateLimitQuotesServer: true,
                waitSeconds: { String(Int($0.rounded(.up))) }, unavailable: "Cloudflare Workers AI is unavailable"))
    }

    private static let fixThen = "then run 'shelfd doctor'."

    /// Turns a failed answer (any status, or 200 with `success: false`) into what the queue should do.
    package func classify(_ response: HTTPResponse, now: Date, requestBytes: Int? = nil) -> PhotoError {
        let status = response.status
        let envelope = CloudflareEnvelope(response.body)
        let codes = envelope.codes
        let said = serverMessage(envelope)
        let retryAfter = ProviderHTTPFailure.retryAfter(response, now: now)
        let model = settings.model
        let fixThen = Self.fixThen
        let common = failure(requestBytes: requestBytes)

        if envelope.messages.contains(where: { $0.localizedCaseInsensitiveContains("JSON Mode couldn't be met") }) {
            return PhotoError(
                .providerNonsense,
                "Cloudflare's \(model) could not produce the JSON asked for "
                    + "(HTTP \(status)\(said)). It will be retried.", disposition: .retry(after: nil))
        }
        if codes.contains(3040) {
            let when = retryAfter.map { " in \(Int($0.rounded(.up))) s" } ?? ""
            return PhotoError(
                .providerUnavailable,
                "Cloudflare Workers AI is out of capacity for \(model) "
                    + "(HTTP \(status)\(said)). It will be retried\(when).", disposition: .retry(after: retryAfter))
        }
        if codes.contains(3036) {
            return PhotoError(
                .providerQuota,
                "The Cloudflare account's daily free Workers AI allocation is used up "
                    + "(HTTP \(status)\(said)). Photos wait until it resets at 00:00 UTC; the Workers Paid plan goes on sooner.",
                disposition: .providerWait(until: QuotaTimes.nextUTCMidnight(after: now)))
        }
        if codes.contains(5016) {
            return PhotoError(
                .providerAuth,
                "Cloudflare says the license of \(model) has not been agreed to "
                    + "(HTTP \(status)\(said)), although shelfd sent the agreement. Send {\"prompt\": \"agree\"} to the model "
                    + "once by hand with the same token and account (Cloudflare's Llama 3.2 Vision tutorial shows how), \(fixThen)",
                disposition: .providerBroken)
        }
        if codes.contains(5035) {
            return PhotoError(
                .providerAuth,
                "Cloudflare's \(model) needs the Workers Paid plan (HTTP \(status)\(said)). "
                    + "Upgrade the account, or set [cloudflare] model to a model the free plan includes, \(fixThen)",
                disposition: .providerBroken)
        }
        if codes.contains(10000) || status == 401 {
            return common.refused(common.wording.unauthorized, response, said: said)
        }
        if codes.contains(7003) || codes.contains(7000) {
            return PhotoError(
                .providerAuth,
                "Cloudflare has no such route (HTTP \(status)\(said)): the account ID is "
                    + "probably wrong. Set CLOUDFLARE_ACCOUNT_ID to the account ID shown in the Cloudflare dashboard and check "
                    + "[cloudflare] base_url, \(fixThen)", disposition: .providerBroken)
        }
        if codes.contains(3023) || codes.contains(5018) || codes.contains(3041) {
            return PhotoError(
                .providerAuth,
                "Cloudflare does not let this account use \(model) (HTTP \(status)\(said)). "
                    + "Check the account in the Cloudflare dashboard or set [cloudflare] model to another model, \(fixThen)",
                disposition: .providerBroken)
        }
        if codes.contains(5007) || codes.contains(3042) {
            return unknownModel(said: " (HTTP \(status)\(said))")
        }
        if codes.contains(3006) || status == 413 {
            return common.tooLarge(response, said: said)
        }
        if codes.contains(3007) || codes.contains(3008) {
            return PhotoError(
                .providerUnavailable,
                "Cloudflare timed out on the request (HTTP \(status)\(said)). "
                    + "It will be retried.", disposition: .retry(after: retryAfter))
        }
        // Workers AI says `success: false` with a 200 for a request it will not run.
        if status == 200 { return common.rejected(response, said: said) }
        // The API-wide limit blocks every call for five minutes unless `retry-after` says otherwise.
        return common.status(response, said: said, wait: retryAfter ?? 300, now: now)
    }

    private func unknownModel(said: String) -> PhotoError {
        PhotoError(
            .providerModel,
            "Cloudflare Workers AI has no model '\(settings.model)'\(said); it may be misspelt or "
                + "retired. Set [cloudflare] model in shelfd.toml to a current vision model (for example "
                + "@cf/meta/llama-3.2-11b-vision-instruct), then run 'shelfd doctor'.", disposition: .providerBroken)
    }

    /// ", code 3040: Capacity temporarily exceeded…" from the envelope, shortened, credentials scrubbed.
    private func serverMessage(_ envelope: CloudflareEnvelope) -> String {
        let text = envelope.errors.map { error in
            [error.code.map { "code \($0)" }, error.message].compactMap { $0 }.joined(separator: ": ")
        }.joined(separator: "; ")
        return serverText(text, redacting: secrets)
    }

    /// The token and the account ID, to be scrubbed should a server or library ever echo them.
    private var secrets: [String] { [settings.apiToken.value, settings.accountID.value] }
}

/// The v4 envelope's `success` and `errors`, read leniently (fields may be missing on Workers AI errors).
struct CloudflareEnvelope {
    struct Failure { var code: Int?; var message: String? }
    var success: Bool?
    var errors: [Failure] = []

    init(_ body: [UInt8]) {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else { return }
        success = root["success"] as? Bool
        for case let error as [String: Any] in root["errors"] as? [Any] ?? [] {
            let code = (error["code"] as? NSNumber)?.intValue ?? (error["code"] as? String).flatMap { Int($0) }
            errors.append(Failure(code: code, message: error["message"] as? String))
        }
    }

    var codes: [Int] { errors.compactMap(\.code) }
    var messages: [String] { errors.compactMap(\.message) }
}

/// The model's text out of `result`, whatever its shape: `{response: string | object | array}` (the
/// "legacy" models), `{description}` (LLaVA), or an OpenAI `chat.completion` (the 2026 models).
struct CloudflareModelOutput {
    var text: String
    var finishReason: String?
    var completionTokens: Int?

    init(result: Any) {
        finishReason = nil
        completionTokens = nil
        guard let object = result as? [String: Any] else { text = Self.text(of: result); return }
        let usage = object["usage"] as? [String: Any]
        completionTokens = (usage?["completion_tokens"] as? NSNumber)?.intValue
        if let choice = (object["choices"] as? [[String: Any]])?.first {
            text = Self.text(of: (choice["message"] as? [String: Any])?["content"])
            finishReason = choice["finish_reason"] as? String
        } else if let response = object["response"], !(response is NSNull) {
            text = Self.text(of: response)
        } else if let description = object["description"] as? String {
            text = description
        } else if object["books"] != nil {
            text = Self.json(object)
        } else {
            text = ""
        }
    }

    /// A `response` or `content` value as text for `AnswerParser`: a string as is; an object (JSON mode)
    /// re-encoded; an array of `{generated_text}` or text parts joined, or an array of books wrapped.
    static func text(of value: Any?) -> String {
        switch value {
        case let text as String:
            return text
        case let object as [String: Any]:
            return json(object)
        case let array as [Any]:
            var texts: [String] = [], books: [Any] = []
            for item in array {
                if let text = item as? String {
                    texts.append(text)
                } else if let object = item as? [String: Any] {
                    if let text = object["generated_text"] as? String ?? object["text"] as? String {
                        texts.append(text)
                    } else if object["books"] != nil {
                        texts.append(json(object))
                    } else {
                        books.append(object)
                    }
                }
            }
            return texts.isEmpty && !books.isEmpty ? json(["books": books]) : texts.joined()
        default:
            return ""
        }
    }

    private static func json(_ object: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
