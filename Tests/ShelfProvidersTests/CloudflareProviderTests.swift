import Foundation
import ShelfCore
import ShelfDigest
import ShelfHTTP
import ShelfProviders
import ShelfTesting
import Testing

/// Credentials no message, description or log line may ever contain.
let cfToken = "cf-test-TOKEN-SECRET-7731"
let cfAccount = "feedfacecafebeef0123456789abcdef"

/// Workers AI models, one per request style.
enum CFModel {
    static let llama32 = "@cf/meta/llama-3.2-11b-vision-instruct"
    static let llava = "@cf/llava-hf/llava-1.5-7b-hf"
    static let scout = "@cf/meta/llama-4-scout-17b-16e-instruct"
    static let gemma4 = "@cf/google/gemma-4-26b-a4b-it"
    static let mistral = "@cf/mistralai/mistral-small-3.1-24b-instruct"
}

typealias CFReply = CloudflareEmulator.Reply
typealias CFBook = CloudflareEmulator.Book

func cfScript(
    reply: CFReply = .books([]), licenseAgreed: Bool = true, rules: [CloudflareEmulator.Rule] = [],
    models: Set<String>? = nil, agreementAnswer: CloudflareEmulator.AgreementAnswer = .ok,
    latency: Duration = .zero
) -> CloudflareEmulator.Script {
    CloudflareEmulator.Script(
        token: cfToken, accountID: cfAccount, models: models, licenseAgreed: licenseAgreed,
        agreementAnswer: agreementAnswer, latency: latency, rules: rules, reply: reply)
}

/// A provider pointed at the emulator.
func cfProvider(
    _ emulator: CloudflareEmulator, model: String = CFModel.llama32, token: String = cfToken,
    account: String = cfAccount, maxTokens: Int = 4096, timeout: Duration = .seconds(10),
    licenses: any CloudflareLicenseMemory = InMemoryCloudflareLicenses(),
    logs: CapturedLogs = CapturedLogs()
) -> CloudflareProvider {
    let settings = CloudflareSettings(
        model: model, baseURL: emulator.baseURL, accountID: Secret(account),
        apiToken: Secret(token), timeout: timeout, maxTokens: maxTokens)
    return CloudflareProvider(
        settings: settings, http: HTTPClient(maxConcurrent: 2), logger: logs.logger,
        licenseStore: licenses)
}

func expectNoCredentials(_ error: PhotoError, _ logs: CapturedLogs, sourceLocation: SourceLocation = #_sourceLocation) {
    expectNoSecrets([cfToken, cfAccount], in: error, logs, sourceLocation: sourceLocation)
}

@Suite("Cloudflare Workers AI provider against the emulator", .timeLimit(.minutes(1)))
struct CloudflareProviderTests {
    static let dune = CFBook(
        title: "Dune", author: "Frank Herbert", isbn: "9780441172719", confidence: 0.93,
        box2D: [120, 410, 880, 450])
    static let hobbit = CFBook(title: "The Hobbit", confidence: 0.55, box2D: [100, 500, 900, 540])
    static let duneBox = Box(x1: 0.41, y1: 0.12, x2: 0.45, y2: 0.88)

    // MARK: Request shapes

    @Test("Llama 3.2 Vision gets the photo as a top-level array of byte values and an explicit max_tokens")
    func byteArrayRequest() async throws {
        try await withCloudflareEmulator(cfScript(reply: .books([Self.dune]))) { cloudflare in
            let photo = fakePhoto("bytes")
            _ = try await scan(cfProvider(cloudflare), photo)
            let request = try #require(cloudflare.requests.first)
            #expect(request.status == 200)
            #expect(request.method == "POST")
            #expect(request.path == "/client/v4/accounts/\(cfAccount)/ai/run/\(CFModel.llama32)")
            #expect(request.model == CFModel.llama32)
            #expect(request.headers["authorization"] == "Bearer \(cfToken)")
            #expect(request.headers["content-type"] == "application/json")
            #expect(request.imageForm == .byteArray)
            #expect(request.photoSHA256 == SHA256.hex(of: photo.bytes))

            let body = try #require(request.json)
            #expect((body["image"] as? [Int]).map { $0.map(UInt8.init) } == photo.bytes)
            #expect(body["max_tokens"] as? Int == 4096)
            #expect(body["response_format"] == nil)
            let messages = try #require(body["messages"] as? [[String: Any]])
            let content = try #require(messages.last?["content"] as? String)
            #expect(content.contains("box_2d") && content.contains("angle_issues") && content.contains("\"books\""))
        }
    }

    @Test("A photo of the preset's size arrives byte for byte through the array")
    func largeByteArray() async throws {
        try await withCloudflareEmulator(cfScript(reply: .books([Self.dune]))) { cloudflare in
            let photo = fakePhoto("large", size: 300_000)
            let body = try cfProvider(cloudflare).requestBody(for: photo)
            _ = try await scan(cfProvider(cloudflare), photo)
            #expect(cloudflare.requests.first?.photoSHA256 == SHA256.hex(of: photo.bytes))
            #expect(cloudflare.requests.first?.body.count == body.count)
        }
    }

    @Test("LLaVA gets the byte array with a prompt, and its {description} is read")
    func llavaRequest() async throws {
        try await withCloudflareEmulator(cfScript(reply: .books([Self.dune]))) { cloudflare in
            let photo = fakePhoto("llava")
            let answer = try await scan(cfProvider(cloudflare, model: CFModel.llava), photo)
            #expect(answer.books.map(\.title) == ["Dune"])
            let request = try #require(cloudflare.requests.first)
            #expect(request.path == "/client/v4/accounts/\(cfAccount)/ai/run/\(CFModel.llava)")
            let body = try #require(request.json)
            #expect((body["image"] as? [Int]).map { $0.map(UInt8.init) } == photo.bytes)
            #expect(body["prompt"] is String && body["messages"] == nil)
            #expect(body["max_tokens"] as? Int == 4096)
        }
    }

    @Test("Llama 4 Scout gets an image_url data-URI part and JSON mode with the bare schema")
    func contentPartsRequest() async throws {
        try await withCloudflareEmulator(cfScript(reply: .books([Self.dune]))) { cloudflare in
            let photo = fakePhoto("parts")
            _ = try await scan(cfProvider(cloudflare, model: CFModel.scout), photo)
            let request = try #require(cloudflare.requests.first)
            #expect(request.status == 200)
            #expect(request.path == "/client/v4/accounts/\(cfAccount)/ai/run/\(CFModel.scout)")
            #expect(request.headers["authorization"] == "Bearer \(cfToken)")
            #expect(request.imageForm == .dataURI)
            #expect(request.photoSHA256 == SHA256.hex(of: photo.bytes))

            let body = try #require(request.json)
            #expect(body["image"] == nil)
            #expect(body["max_tokens"] as? Int == 4096)
            let messages = try #require(body["messages"] as? [[String: Any]])
            #expect((messages.first?["content"] as? String)?.contains("box_2d") == true)
            let parts = try #require(messages.last?["content"] as? [[String: Any]])
            let image = try #require(parts.first { $0["type"] as? String == "image_url" })
            let url = try #require((image["image_url"] as? [String: Any])?["url"] as? String)
            #expect(url == "data:image/jpeg;base64," + Data(photo.bytes).base64EncodedString())
            #expect(parts.contains { $0["type"] as? String == "text" })

            let format = try #require(body["response_format"] as? [String: Any])
            #expect(format["type"] as? String == "json_schema")
            let schema = try #require(format["json_schema"] as? [String: Any])
            #expect(schema["type"] as? String == "object")
            #expect((schema["properties"] as? [String: Any])?["books"] != nil)
        }
    }

    @Test("Gemma 4 gets {name, schema} JSON mode and max_completion_tokens; its chat.completion result is read")
    func openAIShapeRequest() async throws {
        try await withCloudflareEmulator(cfScript(reply: .books([Self.dune, Self.hobbit]))) { cloudflare in
            let answer = try await scan(cfProvider(cloudflare, model: CFModel.gemma4))
            #expect(answer.books.map(\.title) == ["Dune", "The Hobbit"])
            #expect(answer.books.first?.box == Self.duneBox)
            let body = try #require(cloudflare.requests.first?.json)
            #expect(body["max_completion_tokens"] as? Int == 4096)
            let schema = (body["response_format"] as? [String: Any])?["json_schema"] as? [String: Any]
            #expect(schema?["name"] is String && (schema?["schema"] as? [String: Any])?["type"] as? String == "object")
        }
    }

    @Test("Mistral Small 3.1 gets its schema as guided_json")
    func mistralRequest() async throws {
        try await withCloudflareEmulator(cfScript(reply: .books([Self.dune]))) { cloudflare in
            let answer = try await scan(cfProvider(cloudflare, model: CFModel.mistral))
            #expect(answer.books.map(\.title) == ["Dune"])
            let body = try #require(cloudflare.requests.first?.json)
            #expect((body["guided_json"] as? [String: Any])?["type"] as? String == "object")
            #expect(body["response_format"] == nil)
        }
    }

    @Test(
        "Models map to request styles",
        arguments: [
            (CFModel.llama32, CloudflareRequestStyle.llamaVision), (CFModel.llava, .llava),
            (CFModel.scout, .chatVision),
            ("@cf/google/gemma-3-12b-it", .chatVision), (CFModel.mistral, .mistral), (CFModel.gemma4, .openAIShape),
            ("@cf/moonshotai/kimi-k2.6", .openAIShape),
        ])
    func styles(model: String, style: CloudflareRequestStyle) {
        #expect(CloudflareRequestStyle(model: model) == style)
    }

    // MARK: Answers

    @Test(
        "result.response as string, fenced string, prose, object or array gives the books",
        arguments: [CFReply.books([dune]), .fenced([dune]), .prose([dune]), .object([dune]), .array([dune])],
        [CFModel.llama32, CFModel.scout])
    func answerShapes(reply: CFReply, model: String) async throws {
        try await withCloudflareEmulator(cfScript(reply: reply)) { cloudflare in
            let answer = try await scan(cfProvider(cloudflare, model: model))
            #expect(answer.books.map(\.title) == ["Dune"])
            #expect(answer.books.first?.box == Self.duneBox)
        }
    }

    @Test(
        "Saved results in other shapes parse too",
        arguments: [
            #"{"result": {"response": [{"title": "Dune", "confidence": 0.8}]}, "success": true, "errors": [], "messages": []}"#,
            #"{"result": {"choices": [{"message": {"content": [{"type": "text", "text": "{\"books\": [{\"title\": \"Dune\", \"confidence\": 0.8}]}"}]}, "finish_reason": "stop"}]}, "success": true}"#,
            #"{"result": {"response": "Sure! ```json\n{\"books\": [{\"title\": \"Dune\", \"confidence\": 0.8}], \"suggestions\": []}\n``` Enjoy."}, "success": true}"#,
            #"{"result": {"books": [{"title": "Dune", "confidence": 0.8}]}, "success": true}"#,
        ])
    func savedShapes(body: String) throws {
        let provider = CloudflareProvider(
            settings: .unsent,
            http: HTTPClient(maxConcurrent: 1), logger: CapturedLogs().logger,
            licenseStore: InMemoryCloudflareLicenses())
        let answer = try provider.parse(RawResponse(body: Array(body.utf8), receivedAt: Date()))
        #expect(answer.books.map(\.title) == ["Dune"])
    }

    @Test("A cut answer is an error, never half a shelf", arguments: [CFModel.llama32, CFModel.scout, CFModel.gemma4])
    func cutAnswer(model: String) async throws {
        try await withCloudflareEmulator(cfScript(reply: .cut([Self.dune, Self.hobbit, Self.dune]))) { cloudflare in
            let error = try #require(await failure(cfProvider(cloudflare, model: model)))
            #expect(error.code == .providerTruncated && error.disposition == .retry(after: nil))
        }
    }

    @Test("A token limit too small for the shelf is reported as truncated")
    func smallTokenLimit() async throws {
        let shelf = (1...40).map {
            CFBook(title: "Volume \($0) of the Collected Works", author: "Someone", box2D: [0, 0, 1000, 20])
        }
        try await withCloudflareEmulator(cfScript(reply: .books(shelf))) { cloudflare in
            let error = try #require(await failure(cfProvider(cloudflare, maxTokens: 256)))
            #expect(error.code == .providerTruncated)
            let answer = try await scan(cfProvider(cloudflare)) // the default limit holds the whole shelf
            #expect(answer.books.count == 40)
        }
    }

    @Test(
        "Cut-off detection in free text",
        arguments: [
            (#"{"books": [{"title": "Dune", "confidence": 0.9}, {"title": "Emm"#, true),
            (#"Here you go: ```json\n{"books": ["#, true),
            (#"{"books": []}"#, false),
            ("I cannot read these spines.", false),
            (#"{"shelf": "oak", "#, false),
        ])
    func cutOffDetection(text: String, cut: Bool) {
        #expect(AnswerParser.isCutOff(text) == cut)
    }

    // MARK: The license step

    @Test("Llama 3.2's license is agreed once, on the first 5016, then remembered across photos")
    func licenseOnce() async throws {
        let licenses = InMemoryCloudflareLicenses()
        let logs = CapturedLogs()
        try await withCloudflareEmulator(cfScript(reply: .books([Self.dune]), licenseAgreed: false)) { cloudflare in
            let provider = cfProvider(cloudflare, licenses: licenses, logs: logs)
            let first = try await scan(provider, fakePhoto("one"))
            #expect(first.books.map(\.title) == ["Dune"])
            _ = try await scan(provider, fakePhoto("two"))
            _ = try await scan(cfProvider(cloudflare, licenses: licenses), fakePhoto("three"))

            let log = cloudflare.requests
            #expect(log.map(\.status) == [403, 200, 200, 200, 200])
            #expect(log.first?.errorCode == 5016)
            #expect(log.map(\.isAgreement) == [false, true, false, false, false])
            #expect(log[1].json?.keys.sorted() == ["prompt"] && log[1].json?["prompt"] as? String == "agree")
            #expect(log[0].photoSHA256 == nil && log[2].photoSHA256 == SHA256.hex(of: fakePhoto("one").bytes))
            #expect(licenses.agreedModels == [CFModel.llama32])
            #expect(logs.all.contains { $0.contains("Agreed to the model's license") })
        }
    }

    @Test("An agreement answered with 403 'Thank you for agreeing' counts as agreed")
    func licenseThankYou403() async throws {
        let licenses = InMemoryCloudflareLicenses()
        try await withCloudflareEmulator(
            cfScript(
                reply: .books([Self.dune]), licenseAgreed: false,
                agreementAnswer: .forbiddenThankYou)
        ) { cloudflare in
            let answer = try await scan(cfProvider(cloudflare, licenses: licenses))
            #expect(answer.books.count == 1)
            #expect(cloudflare.requests.map(\.status) == [403, 403, 200])
            #expect(licenses.hasAgreed(model: CFModel.llama32))
        }
    }

    @Test("A remembered agreement is not sent again; a 5016 that persists is a configuration problem")
    func licenseRemembered() async throws {
        let licenses = InMemoryCloudflareLicenses(agreed: [CFModel.llama32])
        let logs = CapturedLogs()
        try await withCloudflareEmulator(cfScript(reply: .books([Self.dune]), licenseAgreed: false)) { cloudflare in
            let error = try #require(await failure(cfProvider(cloudflare, licenses: licenses, logs: logs)))
            #expect(cloudflare.requests.map(\.isAgreement) == [false, false]) // the photo, asked again once
            #expect(cloudflare.requests.map(\.status) == [403, 403])
            #expect(error.code == .providerAuth && error.disposition == .providerBroken)
            #expect(error.message.contains("agree") && error.message.contains("shelfd doctor"))
            expectNoCredentials(error, logs)
        }
    }

    // MARK: Failures

    typealias Case = FailureCase<CFReply>

    static let failureCases: [Case] = [
        Case(
            reply: .capacity(retryAfter: 7), code: .providerUnavailable, check: { $0 == .retry(after: 7) },
            testDescription: "429/3040 with retry-after"),
        Case(
            reply: .capacity(retryAfter: nil), code: .providerUnavailable, check: { $0 == .retry(after: nil) },
            testDescription: "429/3040"),
        Case(
            reply: .dailyAllocation, code: .providerQuota, check: { $0.waitUntil != nil }, testDescription: "429/3036"),
        Case(reply: .paidOnly, code: .providerAuth, check: { $0 == .providerBroken }, testDescription: "403/5035"),
        Case(
            reply: .error(status: 403, code: 3023, message: "Service unavailable for account"), code: .providerAuth,
            check: { $0 == .providerBroken }, testDescription: "403/3023"),
        Case(
            reply: .error(status: 401, code: 10000, message: "Authentication error"), code: .providerAuth,
            check: { $0 == .providerBroken }, testDescription: "401/10000"),
        Case(reply: .noSuchModel, code: .providerModel, check: { $0 == .providerBroken }, testDescription: "400/5007"),
        Case(
            reply: .raw(status: 502, body: "<html>bad gateway</html>"), code: .providerUnavailable,
            check: { $0.isRetry },
            testDescription: "502 without an envelope"),
        Case(
            reply: .error(status: 408, code: 3007, message: "Request timeout"), code: .providerUnavailable,
            check: { $0.isRetry }, testDescription: "408/3007"),
        Case(
            reply: .jsonModeNotMet, code: .providerNonsense, check: { $0.isRetry }, testDescription: "JSON mode not met"
        ),
        Case(
            reply: .error(status: 400, code: 5004, message: "Invalid data type for base64 input: number"),
            code: .providerRejected, check: { $0 == .dead }, testDescription: "400/5004"),
        Case(
            reply: .raw(
                status: 200,
                body:
                    #"{"result": null, "success": false, "errors": [{"code": 9999, "message": "Odd"}], "messages": []}"#
            ),
            code: .providerRejected, check: { $0 == .dead }, testDescription: "200 with success false"),
    ]

    @Test("Each failure gets the right code and disposition, and never shows the credentials", arguments: failureCases)
    func failures(_ testCase: Case) async throws {
        let logs = CapturedLogs()
        try await withCloudflareEmulator(cfScript(reply: testCase.reply)) { cloudflare in
            try await expectFailure(
                testCase, from: cfProvider(cloudflare, logs: logs), secrets: [cfToken, cfAccount], logs: logs)
        }
    }

    @Test(
        "Configuration problems say what to do",
        arguments: [
            (CFReply.paidOnly, "Workers Paid"), (.noSuchModel, "[cloudflare] model"),
        ])
    func configurationMessages(reply: CFReply, hint: String) async throws {
        try await withCloudflareEmulator(cfScript(reply: reply)) { cloudflare in
            let error = try #require(await failure(cfProvider(cloudflare)))
            #expect(error.message.contains(hint), "\(error.message)")
        }
    }

    @Test("A wrong token gets Workers AI's 401/10000 to a Bearer header")
    func wrongToken() async throws {
        let logs = CapturedLogs()
        try await withCloudflareEmulator(CloudflareEmulator.Script(token: "the-real-token", accountID: cfAccount)) {
            cloudflare in
            let error = try #require(await failure(cfProvider(cloudflare, logs: logs)))
            // The code, disposition, message and redaction are the provider contract's; this is the wire.
            #expect(cloudflare.requests.first?.status == 401 && cloudflare.requests.first?.errorCode == 10000)
            #expect(cloudflare.requests.first?.hasBearer == true)
            #expect(error.code == .providerAuth)
            expectNoCredentials(error, logs)
        }
    }

    @Test("A wrong account ID is a broken provider, and the echoed ID is redacted")
    func wrongAccount() async throws {
        let logs = CapturedLogs()
        try await withCloudflareEmulator(CloudflareEmulator.Script(token: cfToken, accountID: "another-account")) {
            cloudflare in
            let error = try #require(await failure(cfProvider(cloudflare, logs: logs)))
            #expect(cloudflare.requests.first?.errorCode == 7003)
            #expect(error.code == .providerAuth && error.disposition == .providerBroken)
            #expect(error.message.contains("CLOUDFLARE_ACCOUNT_ID") && error.message.contains("<redacted>"))
            expectNoCredentials(error, logs)
        }
    }

    @Test("A server message that echoes the token is redacted")
    func echoedToken() async throws {
        let logs = CapturedLogs()
        let reply = CFReply.error(
            status: 400, code: 5004, message: "Bad input from Bearer \(cfToken) on account \(cfAccount)")
        try await withCloudflareEmulator(cfScript(reply: reply)) { cloudflare in
            let error = try #require(await failure(cfProvider(cloudflare, logs: logs)))
            #expect(error.code == .providerRejected && error.message.contains("<redacted>"))
            expectNoCredentials(error, logs)
        }
    }

    @Test("The daily allocation pauses the provider until 00:00 UTC")
    func dailyAllocation() async throws {
        try await withCloudflareEmulator(cfScript(reply: .dailyAllocation)) { cloudflare in
            let error = try #require(await failure(cfProvider(cloudflare)))
            #expect(error.code == .providerQuota)
            let until = try #require(error.disposition.waitUntil)
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = try #require(TimeZone(secondsFromGMT: 0))
            let parts = utc.dateComponents([.hour, .minute, .second], from: until)
            #expect(parts.hour == 0 && parts.minute == 0 && parts.second == 0)
            #expect(until > Date() && until.timeIntervalSinceNow <= 24 * 3600)
        }
        let late = Date(timeIntervalSince1970: 1_790_000_000) // 2026-09-21 14:13:20 UTC
        #expect(QuotaTimes.nextUTCMidnight(after: late) == Date(timeIntervalSince1970: 1_790_035_200))
    }

    @Test("Llama 4 Scout rejects an http(s) image URL (the emulator checks what the API checks)")
    func httpImageRejected() async throws {
        try await withCloudflareEmulator(cfScript()) { cloudflare in
            let request = HTTPRequest(
                method: "POST", url: "\(cloudflare.baseURL)/client/v4/accounts/\(cfAccount)/ai/run/\(CFModel.scout)",
                headers: [("Authorization", "Bearer \(cfToken)"), ("Content-Type", "application/json")],
                body: Array(
                    #"{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/shelf.jpg"}}]}]}"#
                        .utf8))
            let response = try await HTTPClient(maxConcurrent: 1).send(request)
            #expect(response.status == 400)
            #expect(String(decoding: response.body, as: UTF8.self).contains("HTTP URL will not be accepted"))
        }
    }

    // MARK: Reachability, secrets, logs

    @Test("checkReachable proves token, account and model through the model search, running nothing")
    func reachable() async throws {
        try await withCloudflareEmulator(cfScript(models: [CFModel.llama32, CFModel.scout])) { cloudflare in
            let result = await cfProvider(cloudflare).checkReachable()
            let sentence = try result.get()
            #expect(sentence.contains(CFModel.llama32))
            let request = try #require(cloudflare.requests.first)
            #expect(request.method == "GET" && request.path == "/client/v4/accounts/\(cfAccount)/ai/models/search")
            #expect(request.model == "llama-3.2-11b-vision-instruct" && request.hasBearer)

            let unknown = await cfProvider(cloudflare, model: "@cf/meta/llama-9-vision").checkReachable()
            #expect(unknown.failure?.code == .providerModel)
            let badToken = await cfProvider(cloudflare, token: "nope").checkReachable()
            #expect(badToken.failure?.code == .providerAuth && badToken.failure?.disposition == .providerBroken)
            let badAccount = await cfProvider(cloudflare, account: "nope").checkReachable()
            #expect(badAccount.failure?.code == .providerAuth)
            #expect(cloudflare.requests.allSatisfy { $0.method == "GET" })
        }
    }

    @Test("The default token limit leaves room for a full shelf")
    func defaultTokenLimit() {
        #expect(CloudflareSettings.unsent.maxTokens >= 4096)
    }

}

extension Result {
    fileprivate var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
}
