import Foundation
import ShelfCore
import ShelfDigest

/// A loopback stand-in for Cloudflare Workers AI's REST API (`/client/v4/accounts/{account}/ai/run/{model}`
/// and `…/ai/models/search`), speaking its wire format: Bearer tokens, the `{result, success, errors,
/// messages}` envelope, per-model request styles and result shapes, Llama 3.2 Vision's license step.
/// It checks each request the way shelfd must send it and answers from a script that can key on the photo.
package final class CloudflareEmulator: ModelEmulator {
    // Declared here: ShelfCore's `Book` would win over a protocol's name in the nested types.
    package typealias Book = EmulatedBook
    package typealias Suggestion = EmulatedSuggestion

    /// What one `ai/run` request is answered with. Text replies travel in the model's own result shape:
    /// `{response, tool_calls, usage}` (Llama, Mistral), `{description}` (LLaVA) or a `chat.completion`
    /// (Gemma 4, Kimi); they are cut at the request's token limit like a real model's output.
    package enum Reply: WrittenReply {
        /// The model's answer as its text (`.books`, `.fenced`, `.garbage`).
        case written(EmulatedText)
        /// Prose before and after the answer.
        case prose([Book])
        /// `result.response` as a JSON object (JSON mode).
        case object([Book])
        /// `result.response` as `[{"generated_text": "<answer>"}]`.
        case array([Book])
        /// Any text as the model's output.
        case text(String)
        /// The answer cut off mid-JSON at the token limit (`usage.completion_tokens` = the limit,
        /// `finish_reason: "length"`).
        case cut([Book])
        /// 429, code 3040 "Capacity temporarily exceeded, please try again.", optionally with `retry-after`.
        case capacity(retryAfter: Int?)
        /// 429, code 3036: the daily free allocation is used up.
        case dailyAllocation
        /// 403, code 5035: the model needs the Workers Paid plan.
        case paidOnly
        /// 413, code 3006 "Request is too large".
        case tooLarge
        /// 400, code 5007 "No such model".
        case noSuchModel
        /// The API-wide limit: 429 with `retry-after` (seconds).
        case rateLimited(retryAfter: Int)
        /// JSON mode failed: "JSON Mode couldn't be met".
        case jsonModeNotMet
        /// 500.
        case serverError
        /// Any failure envelope.
        case error(status: Int, code: Int, message: String, headers: [(name: String, value: String)] = [])
        /// Anything at all.
        case raw(status: Int, headers: [(name: String, value: String)] = [], body: String)
    }

    /// How `{"prompt": "agree"}` is answered.
    package enum AgreementAnswer: Sendable {
        /// 200 with a `response` thanking the user.
        case ok
        /// 403 with "Thank you for agreeing…", as some clients report.
        case forbiddenThankYou
    }

    package typealias Script = EmulatorScript<Reply, Setup>

    /// What a script says of this account beyond its replies.
    package struct Setup: Sendable {
        package var token: String
        package var accountID: String
        /// Models that exist; nil: every model name exists.
        package var models: Set<String>?
        /// Llama 3.2 Vision's license already agreed to on this account.
        package var licenseAgreed: Bool
        package var agreementAnswer: AgreementAnswer
    }

    package enum ImageForm: String, Sendable { case byteArray, dataURI, string }

    package typealias LoggedRequest = EmulatedRequest<RequestDetails>

    /// What a logged request says of Workers AI's own wire format; its `model` is the `{model}` of `ai/run`,
    /// or the `search` of `ai/models/search`.
    package struct RequestDetails: Sendable {
        /// An `Authorization: Bearer …` header was present.
        package var hasBearer: Bool
        /// How the image came, when the request carried one.
        package var imageForm: ImageForm?
        /// `{"prompt": "agree"}`.
        package var isAgreement = false
        /// The first `errors[].code` answered, if any.
        package var errorCode: Int?
    }

    package static let defaultToken = "emulator-test-token"
    package static let defaultAccount = "0123456789abcdef0123456789abcdef"

    package typealias State = ModelEmulatorState<Reply, Setup, RequestDetails, World>

    /// Whether the license has been agreed to: a new script carries it over unless it says it is agreed.
    package struct World: EmulatorWorld {
        var agreed: Bool

        package init(setup: Setup) { agreed = setup.licenseAgreed }
        package mutating func replace(setup: Setup) { agreed = agreed || setup.licenseAgreed }
    }

    package let host: ScriptedServer<State>

    package init(host: ScriptedServer<State>) { self.host = host }

    /// Starts on 127.0.0.1 with a free port; `baseURL` is what shelfd's `[cloudflare] base_url` should be.
    package static func start(script: Script = Script()) throws -> CloudflareEmulator {
        try started(ScriptedServer(script: script, respond: handle))
    }

    /// Whether the Llama 3.2 license has been agreed to on the emulated account.
    package var licenseAgreed: Bool { host.read { $0.agreed } }

    // MARK: - Handling

    private enum Route { case run(account: String, model: String), search(account: String) }

    private static func handle(_ request: RecordedRequest, shared: ScriptedServer<State>.Shared) -> HTTPServer.Response
    {
        let script = shared.script
        let authorization = request.header("authorization")
        let route = route(request.method, request.path)
        var entry = LoggedRequest(
            request, details: RequestDetails(hasBearer: authorization?.hasPrefix("Bearer ") ?? false))
        func answer(_ response: HTTPServer.Response) -> HTTPServer.Response {
            entry.status = response.status
            let root = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
            entry.errorCode = ((root?["errors"] as? [[String: Any]])?.first?["code"] as? NSNumber)?.intValue
            shared.log(entry)
            return response
        }

        guard let route else { return answer(failure(404, 7003, "No route for the URI")) }
        guard authorization == "Bearer \(script.token)" else {
            return answer(failure(401, 10000, "Authentication error"))
        }
        let account: String
        switch route {
        case .run(let a, let model): account = a; entry.model = model
        case .search(let a): account = a; entry.model = request.query["search"]
        }
        guard account == script.accountID else {
            // [composed] Cloudflare's v4 answer to an unknown account identifier; it echoes the path.
            return answer(
                failure(404, 7003, "Could not route to \(request.path), perhaps your object identifier is invalid?"))
        }
        guard case .run(_, let model) = route else {
            return answer(search(request.query["search"] ?? "", models: script.models))
        }
        if let models = script.models, !models.contains(model) {
            return answer(failure(400, 5007, "No such model \(model) or task"))
        }
        guard let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] else {
            return answer(failure(400, 3003, "Request is missing headers or body: body is not JSON"))
        }
        let style = Style(model: model)

        // Llama 3.2 Vision: 403/5016 until `{"prompt": "agree"}` has been received once; then it sticks.
        if body.count == 1, body["prompt"] as? String == "agree" {
            entry.isAgreement = true
            shared.update { $0.agreed = true }
            switch script.agreementAnswer {
            case .ok:
                return answer(
                    success([
                        "response":
                            "Thank you for agreeing to the Llama 3.2 Community License and Acceptable Use Policy."
                    ]))
            case .forbiddenThankYou:
                return answer(
                    failure(
                        403, 5016,
                        "Thank you for agreeing to the Llama 3.2 Community License and Acceptable Use Policy."))
            }
        }
        if style == .llamaVision && !shared.update({ $0.agreed }) {
            return answer(
                failure(
                    403, 5016,
                    "User has not agreed to Llama3.2 model terms. Submit the prompt 'agree' to accept the terms."))
        }

        let checked: Checked
        switch validate(body, style: style) {
        case .failure(let problem): return answer(failure(400, problem.code, problem.message))
        case .success(let value): checked = value
        }
        entry.imageForm = checked.form
        let sha256 = SHA256.hex(of: checked.image)
        entry.photoSHA256 = sha256

        let (reply, latency): (Reply, Duration) = shared.update { s in
            s.reply(image: checked.image, sha256: sha256)
        }
        var response = render(reply, style: style, model: model, maxTokens: checked.maxTokens)
        response.delay = latency
        return answer(response)
    }

    private static func route(_ method: String, _ path: String) -> Route? {
        let prefix = "/client/v4/accounts/"
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let account = String(rest[..<slash])
        let tail = rest[slash...]
        if method == "GET" && tail == "/ai/models/search" { return .search(account: account) }
        guard method == "POST", tail.hasPrefix("/ai/run/"), tail.count > "/ai/run/".count else { return nil }
        let model = String(tail.dropFirst("/ai/run/".count))
        return .run(account: account, model: model.removingPercentEncoding ?? model)
    }

    /// `ai/models/search`: every known model whose name contains the search text.
    private static func search(_ text: String, models: Set<String>?) -> HTTPServer.Response {
        let known =
            models ?? [
                "@cf/meta/llama-3.2-11b-vision-instruct", "@cf/llava-hf/llava-1.5-7b-hf",
                "@cf/meta/llama-4-scout-17b-16e-instruct", "@cf/google/gemma-3-12b-it",
                "@cf/mistralai/mistral-small-3.1-24b-instruct", "@cf/google/gemma-4-26b-a4b-it",
            ]
        let found = known.sorted().filter { text.isEmpty || $0.localizedCaseInsensitiveContains(text) }.map {
            name -> [String: Any] in
            [
                "id": UUID().uuidString.lowercased(), "name": name, "description": "Emulated model \(name)",
                "task": ["id": "c329a1f9-323d-4e91-b2aa-582dd4188d34", "name": "Text Generation"], "properties": [],
            ]
        }
        return success(
            found,
            extra: ["result_info": ["count": found.count, "page": 1, "per_page": 20, "total_count": found.count]])
    }

    // MARK: - Request validation

    /// The request styles the emulated models take (the provider's own rules, restated for the server).
    private enum Style {
        case llamaVision, llava, chatVision, mistral, openAIShape

        init(model: String) {
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

        /// The model's default output limit when the request sets none.
        var defaultMaxTokens: Int { self == .llava ? 512 : 256 }
    }

    private struct Problem: Error { var code: Int, message: String }
    private struct Checked { var image: [UInt8]; var form: ImageForm; var maxTokens: Int }

    /// Checks the request the way shelfd must build it; returns the decoded image and the token limit.
    private static func validate(_ body: [String: Any], style: Style) -> Result<Checked, Problem> {
        let maxTokens =
            (body["max_tokens"] as? Int) ?? (body["max_completion_tokens"] as? Int) ?? style.defaultMaxTokens
        switch style {
        case .llamaVision, .llava:
            guard let raw = body["image"] else {
                return .failure(
                    Problem(
                        code: 3003,
                        message: "Request is missing headers or body: required properties at '/' are 'image'"))
            }
            guard let (image, form) = topLevelImage(raw) else {
                return .failure(
                    Problem(
                        code: 5004,
                        message: "Invalid data type for base64 input: image must be an array of integers 0-255"))
            }
            if style == .llava {
                guard body["prompt"] is String else {
                    return .failure(
                        Problem(code: 3003, message: "Request is missing headers or body: 'prompt' must be a string"))
                }
            } else {
                let messages = body["messages"] as? [[String: Any]]
                guard body["prompt"] is String || !(messages ?? []).isEmpty else {
                    return .failure(
                        Problem(code: 3003, message: "Request is missing headers or body: 'prompt' or 'messages'"))
                }
                if let messages, messages.contains(where: { !($0["content"] is String) }) {
                    return .failure(
                        Problem(
                            code: 5004, message: "Invalid input: messages[].content must be a string for this model"))
                }
            }
            return .success(Checked(image: image, form: form, maxTokens: maxTokens))

        case .chatVision, .mistral, .openAIShape:
            if body["image"] != nil {
                return .failure(
                    Problem(code: 5004, message: "Invalid input: this model takes images as image_url content parts"))
            }
            let parts = (body["messages"] as? [[String: Any]] ?? []).flatMap { $0["content"] as? [[String: Any]] ?? [] }
            guard let part = parts.first(where: { $0["type"] as? String == "image_url" }),
                let url = (part["image_url"] as? [String: Any])?["url"] as? String
            else {
                return .failure(
                    Problem(code: 3003, message: "Request is missing headers or body: no image_url content part"))
            }
            guard url.hasPrefix("data:") else {
                return .failure(
                    Problem(
                        code: 5004,
                        message:
                            "Invalid input: image uri with data (e.g. data:image/jpeg;base64,/9j/...) required. HTTP URL will not be accepted"
                    ))
            }
            guard let comma = url.firstIndex(of: ","), url[..<comma].hasSuffix(";base64"),
                let image = Data(base64Encoded: String(url[url.index(after: comma)...])), !image.isEmpty
            else {
                return .failure(Problem(code: 5004, message: "Invalid data type for base64 input: data URI"))
            }
            if let problem = jsonModeProblem(body, style: style) { return .failure(problem) }
            return .success(Checked(image: [UInt8](image), form: .dataURI, maxTokens: maxTokens))
        }
    }

    /// A uint8 array (documented), or a base64 / data-URI string (what the Worker binding accepts).
    private static func topLevelImage(_ raw: Any) -> ([UInt8], ImageForm)? {
        if let numbers = raw as? [Any] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(numbers.count)
            for case let number as NSNumber in numbers {
                let value = number.doubleValue
                guard value == value.rounded(), (0...255).contains(value) else { return nil }
                bytes.append(UInt8(value))
            }
            return bytes.count == numbers.count && !bytes.isEmpty ? (bytes, .byteArray) : nil
        }
        if let text = raw as? String {
            let payload = text.firstIndex(of: ",").map { String(text[text.index(after: $0)...]) } ?? text
            return Data(base64Encoded: payload).map { ([UInt8]($0), .string) }
        }
        return nil
    }

    /// JSON mode in the form each model documents: `response_format.json_schema` as the bare schema
    /// (Llama 4 Scout, Gemma 3), `{name, schema}` (OpenAI-shape models), or `guided_json` (Mistral).
    private static func jsonModeProblem(_ body: [String: Any], style: Style) -> Problem? {
        if style == .mistral {
            guard body["response_format"] == nil else {
                return Problem(code: 5004, message: "Invalid input: this model takes guided_json, not response_format")
            }
            return body["guided_json"] == nil || body["guided_json"] is [String: Any]
                ? nil : Problem(code: 5004, message: "Invalid input: guided_json must be a JSON schema object")
        }
        guard let format = body["response_format"] else { return nil }
        guard let format = format as? [String: Any], let type = format["type"] as? String,
            ["json_object", "json_schema"].contains(type)
        else {
            return Problem(
                code: 5004, message: "Invalid input: response_format.type must be json_object or json_schema")
        }
        guard type == "json_schema" else { return nil }
        guard let schema = format["json_schema"] as? [String: Any] else {
            return Problem(code: 5004, message: "Invalid input: response_format.json_schema must be an object")
        }
        let bare = style == .openAIShape ? schema["schema"] as? [String: Any] : schema
        guard let bare, bare["type"] as? String == "object", bare["properties"] is [String: Any] else {
            return Problem(
                code: 5004,
                message: style == .openAIShape
                    ? "Invalid input: response_format.json_schema must be {name, schema}"
                    : "Invalid input: response_format.json_schema must be a JSON schema of type object")
        }
        return nil
    }

    // MARK: - Answers

    private static func render(_ reply: Reply, style: Style, model: String, maxTokens: Int) -> HTTPServer.Response {
        switch reply {
        case .written(let answer):
            return modelText(answer.text, style: style, model: model, maxTokens: maxTokens)
        case .prose(let books):
            return modelText(
                "Here are the books I can see on the shelf:\n\n" + answerJSON(books, [])
                    + "\n\nLet me know if you need anything else!", style: style, model: model, maxTokens: maxTokens)
        case .object(let books):
            return success(["response": answerObject(books, []), "usage": usage(completion: 120), "tool_calls": []])
        case .array(let books):
            return success(["response": [["generated_text": answerJSON(books, [])]], "usage": usage(completion: 120)])
        case .text(let text):
            return modelText(text, style: style, model: model, maxTokens: maxTokens)
        case .cut(let books):
            let full = answerJSON(books, [])
            return modelText(
                String(full.prefix(max(1, full.count * 3 / 5))), style: style, model: model,
                maxTokens: maxTokens, forceLimit: true)
        case .capacity(let retryAfter):
            return failure(
                429, 3040, "Capacity temporarily exceeded, please try again.",
                headers: retryAfter.map { [("Retry-After", "\($0)")] } ?? [])
        case .dailyAllocation:
            return failure(
                429, 3036,
                "You have used up your daily free allocation of 10,000 neurons. Please upgrade to Cloudflare's Workers Paid plan if you would like to continue usage."
            )
        case .paidOnly:
            return failure(403, 5035, "This model requires the Workers Paid plan.")
        case .tooLarge:
            return failure(413, 3006, "Request is too large")
        case .noSuchModel:
            return failure(400, 5007, "No such model \(model) or task")
        case .rateLimited(let retryAfter):
            // The API-wide limit: the status and header are documented, an error code is not.
            return failure(
                429, nil, "Please wait and consider throttling your request speed",
                headers: [("Retry-After", "\(retryAfter)")])
        case .jsonModeNotMet:
            // [composed] The doc names the message only; status and code are not documented.
            return failure(400, 5004, "JSON Mode couldn't be met")
        case .serverError:
            return failure(500, nil, "Internal server error")
        case .error(let status, let code, let message, let headers):
            return failure(status, code, message, headers: headers)
        case .raw(let status, let headers, let body):
            return HTTPServer.Response(status: status, headers: headers, text: body)
        }
    }

    /// The model's text in its result shape, cut at `maxTokens` (about four characters a token).
    private static func modelText(
        _ full: String, style: Style, model: String, maxTokens: Int,
        forceLimit: Bool = false
    ) -> HTTPServer.Response {
        var text = full
        var tokens = (full.utf8.count + 3) / 4
        if forceLimit || tokens > maxTokens {
            if !forceLimit { text = String(full.prefix(maxTokens * 4)) }
            tokens = maxTokens
        }
        let finished = forceLimit || (full.utf8.count + 3) / 4 > maxTokens ? "length" : "stop"
        switch style {
        case .llava:
            return success(["description": text])
        case .openAIShape:
            let completion: [String: Any] = [
                "id": "chatcmpl-\(UUID().uuidString.lowercased())", "object": "chat.completion",
                "created": Int(Date().timeIntervalSince1970), "model": model,
                "choices": [
                    [
                        "index": 0,
                        "message": ["role": "assistant", "content": text, "tool_calls": []] as [String: Any],
                        "finish_reason": finished, "logprobs": NSNull(),
                    ] as [String: Any]
                ],
                "usage": usage(completion: tokens),
            ]
            return success(completion)
        case .llamaVision:
            return success(["response": text, "tool_calls": [], "usage": usage(completion: tokens)])
        case .chatVision, .mistral:
            return success(["response": text, "usage": usage(completion: tokens)])
        }
    }

    private static func usage(completion: Int) -> [String: Any] {
        ["prompt_tokens": 1620, "completion_tokens": completion, "total_tokens": 1620 + completion]
    }

    private static func answerObject(_ books: [Book], _ suggestions: [Suggestion]) -> [String: Any] {
        EmulatedText.answerObject(books, suggestions)
    }

    private static func answerJSON(_ books: [Book], _ suggestions: [Suggestion]) -> String {
        EmulatedText.answerJSON(books, suggestions)
    }

    private static func success(_ result: Any, extra: [String: Any] = [:]) -> HTTPServer.Response {
        var body: [String: Any] = ["result": result, "success": true, "errors": [], "messages": []]
        body.merge(extra) { $1 }
        return .json(json(body))
    }

    private static func failure(
        _ status: Int, _ code: Int?, _ message: String,
        headers: [(name: String, value: String)] = []
    ) -> HTTPServer.Response {
        var error: [String: Any] = ["message": message]
        if let code { error["code"] = code }
        let body: [String: Any] = ["result": NSNull(), "success": false, "errors": [error], "messages": []]
        return .json(json(body), status: status, headers: headers)
    }

    private static func json(_ object: Any) -> String { emulatorJSON(object) }
}

extension EmulatorScript where Reply == CloudflareEmulator.Reply, Setup == CloudflareEmulator.Setup {
    package init(
        token: String = CloudflareEmulator.defaultToken, accountID: String = CloudflareEmulator.defaultAccount,
        models: Set<String>? = nil, licenseAgreed: Bool = false,
        agreementAnswer: CloudflareEmulator.AgreementAnswer = .ok, latency: Duration = .zero,
        rules: [CloudflareEmulator.Rule] = [], reply: Reply = .books([])
    ) {
        self.init(
            setup: .init(
                token: token, accountID: accountID, models: models, licenseAgreed: licenseAgreed,
                agreementAnswer: agreementAnswer), latency: latency, rules: rules, reply: reply)
    }
}

/// Starts an emulator on 127.0.0.1, runs `body` with it, and always stops it.
package func withCloudflareEmulator<T>(
    _ script: CloudflareEmulator.Script = .init(),
    _ body: (CloudflareEmulator) async throws -> T
) async throws -> T {
    let emulator = try CloudflareEmulator.start(script: script)
    defer { emulator.stop() }
    return try await body(emulator)
}
