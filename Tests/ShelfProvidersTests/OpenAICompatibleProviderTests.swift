import Foundation
import ShelfCore
import ShelfDigest
import ShelfHTTP
import ShelfImaging
import ShelfProviders
import ShelfTesting
import Testing

@Suite("OpenAI-compatible provider against the emulator", .timeLimit(.minutes(1)))
struct OpenAICompatibleProviderTests {
    static let dune = OpenAIEmulator.Book(
        title: "Dune", author: "Frank Herbert", isbn: "9780441172719",
        confidence: 0.93, box: [0.41, 0.12, 0.45, 0.88])
    static let hobbit = OpenAIEmulator.Book(title: "The Hobbit", confidence: 0.55, box: [0.5, 0.1, 0.54, 0.9])

    @Test("The request has the chat-completions shape: data URI image, json_schema, max_tokens, no stream")
    func requestShape() async throws {
        try await withOpenAIEmulator(.init(reply: .books([Self.dune]))) { server in
            let photo = fakePhoto("wire")
            _ = try await scan(openAIProvider(server), photo)
            let request = try #require(server.requests.first)
            #expect(request.status == 200)
            #expect(request.method == "POST" && request.path == "/v1/chat/completions")
            #expect(request.model == OpenAIEmulator.defaultModel)
            #expect(request.imageURLForm == .object)
            #expect(request.photoSHA256 == SHA256.hex(of: photo.bytes))
            #expect(request.headers["authorization"] == nil)

            let body = try #require(request.json)
            let messages = try #require(body["messages"] as? [[String: Any]])
            #expect(messages.map { $0["role"] as? String } == ["system", "user"])
            let instruction = messages[0]["content"] as? String ?? ""
            #expect(instruction.contains("[x1, y1, x2, y2]") && instruction.contains("angle_issues"))
            let parts = try #require(messages[1]["content"] as? [[String: Any]])
            #expect(parts.map { $0["type"] as? String } == ["image_url", "text"])
            let url = try #require((parts[0]["image_url"] as? [String: Any])?["url"] as? String)
            let prefix = "data:image/jpeg;base64,"
            #expect(url.hasPrefix(prefix))
            #expect(Data(base64Encoded: String(url.dropFirst(prefix.count))).map([UInt8].init) == photo.bytes)

            let format = try #require(body["response_format"] as? [String: Any])
            #expect(format["type"] as? String == "json_schema")
            let wrapper = try #require(format["json_schema"] as? [String: Any])
            #expect(wrapper["name"] as? String == "shelf")
            let schema = try #require(wrapper["schema"] as? [String: Any])
            let types = schemaTypes(schema)
            #expect(types.contains("object") && types.contains("array") && types.allSatisfy { $0 == $0.lowercased() })
            let book = try #require(
                ((schema["properties"] as? [String: Any])?["books"] as? [String: Any])?["items"] as? [String: Any])
            #expect((book["required"] as? [String])?.contains("box") == true)

            #expect(body["max_tokens"] as? Int == 4096)
            #expect(body["stream"] as? Bool == false)
            #expect((body["temperature"] as? Double ?? 1) <= 0.2)
        }
    }

    @Test("The Bearer key is sent only when one is set")
    func bearerOnlyWithKey() async throws {
        try await withOpenAIEmulator(.init(flavour: .llamaServer, apiKey: testKey, reply: .books([Self.dune]))) {
            server in
            _ = try await scan(openAIProvider(server, key: testKey))
            #expect(server.requests.last?.bearer == testKey)
            #expect(server.requests.last?.status == 200)

            let error = try #require(await failure(openAIProvider(server)))
            #expect(server.requests.last?.headers["authorization"] == nil)
            #expect(server.requests.last?.status == 401)
            #expect(error.code == .providerAuth && error.disposition == .providerBroken)
            #expect(error.message.contains("OPENAI_API_KEY") && error.message.contains("shelfd doctor"))

            let empty = try #require(await failure(openAIProvider(server, key: "")))
            #expect(empty.code == .providerAuth)
            #expect(server.requests.last?.headers["authorization"] == nil)
        }
    }

    @Test("A content given as an array of text parts is read too")
    func contentParts() async throws {
        let body =
            #"{"object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":[{"type":"text","text":"{\"books\":[{\"title\":\"Dune\","},{"type":"text","text":"\"confidence\":0.8,\"box\":[0.1,0.2,0.3,0.9]}],\"suggestions\":[]}"}]}}]}"#
        try await withOpenAIEmulator(.init(reply: .raw(status: 200, body: body))) { server in
            let answer = try await scan(openAIProvider(server))
            #expect(
                answer.books == [
                    Detection(title: "Dune", confidence: 0.8, box: Box(x1: 0.1, y1: 0.2, x2: 0.3, y2: 0.9))
                ])
        }
    }

    @Test("Ollama takes image_url as a plain string; llama-server and vLLM do not")
    func stringImageURL() async throws {
        let photo = fakePhoto("string-url")
        let body: [String: Any] = [
            "model": OpenAIEmulator.defaultModel, "stream": false, "max_tokens": 1024,
            "messages": [
                [
                    "role": "user",
                    "content": [
                        [
                            "type": "image_url",
                            "image_url": "data:image/jpeg;base64," + Data(photo.bytes).base64EncodedString(),
                        ],
                        ["type": "text", "text": "Catalogue every book in this photo."],
                    ],
                ]
            ],
            "response_format": [
                "type": "json_schema", "json_schema": ["name": "shelf", "schema": ["type": "object"]],
            ],
        ]
        let bytes = [UInt8](try JSONSerialization.data(withJSONObject: body))
        for flavour in OpenAIEmulator.Flavour.allCases {
            try await withOpenAIEmulator(.init(flavour: flavour, reply: .books([Self.dune]))) { server in
                let response = try await HTTPClient(maxConcurrent: 1).send(
                    HTTPRequest(
                        method: "POST", url: server.baseURL + "/chat/completions",
                        headers: [("Content-Type", "application/json")], body: bytes))
                if flavour == .ollama {
                    #expect(response.status == 200)
                    #expect(server.requests.first?.imageURLForm == .string)
                    #expect(server.requests.first?.photoSHA256 == SHA256.hex(of: photo.bytes))
                } else {
                    #expect(response.status == 400, "\(flavour)")
                }
            }
        }
    }

    @Test(
        "Both error bodies are read: {\"error\": {…}} with any code type, and the flat {\"error\": \"…\"}",
        arguments: [
            (OpenAIEmulator.Flavour.ollama, OpenAIEmulator.Reply.error(status: 400, message: "invalid image input")),
            (.llamaServer, .error(status: 400, message: "invalid image input")),
            (.vllm, .error(status: 400, message: "invalid image input")),
            (.vllm, .legacyVLLMError(status: 400, message: "invalid image input")),
            (.ollama, .flatError(status: 400, message: "invalid image input")),
            (
                .ollama,
                .raw(
                    status: 400,
                    body:
                        #"{"error":{"message":"invalid image input","type":"invalid_request_error","param":null,"code":"invalid_value"}}"#
                )
            ),
        ])
    func errorBodies(flavour: OpenAIEmulator.Flavour, reply: OpenAIEmulator.Reply) async throws {
        try await withOpenAIEmulator(.init(flavour: flavour, reply: reply)) { server in
            let error = try #require(await failure(openAIProvider(server)))
            #expect(error.code == .providerRejected && error.disposition == .dead)
            #expect(error.message.contains("HTTP 400, invalid image input"), "\(error.message)")
        }
    }

    /// A reply from a server of one flavour.
    struct FlavouredReply: Sendable {
        var flavour: OpenAIEmulator.Flavour
        var reply: OpenAIEmulator.Reply
    }

    typealias Case = FailureCase<FlavouredReply>

    static let failureCases: [Case] = [
        Case(
            flavour: .ollama, reply: .modelNotFound, code: .providerModel, check: { $0 == .providerBroken },
            says: ["'qwen2.5vl:7b'", "ollama pull qwen2.5vl:7b"], testDescription: "Ollama: unknown model"),
        Case(
            flavour: .vllm, reply: .modelNotFound, code: .providerModel, check: { $0 == .providerBroken },
            says: ["'qwen2.5vl:7b'"], testDescription: "vLLM: unknown model"),
        Case(
            flavour: .ollama, reply: .flatError(status: 404, message: "model 'qwen2.5vl:7b' not found"),
            code: .providerModel,
            check: { $0 == .providerBroken }, says: ["ollama pull"], testDescription: "flat 404"),
        Case(
            flavour: .llamaServer, reply: .imageNotSupported, code: .providerModel, check: { $0 == .providerBroken },
            says: ["projector", "--mmproj", "vision model"], testDescription: "llama-server without mmproj"),
        Case(
            flavour: .ollama, reply: .error(status: 500, message: "llama3.2 does not support vision"),
            code: .providerModel,
            check: { $0 == .providerBroken }, testDescription: "Ollama: text-only model"),
        Case(
            flavour: .llamaServer, reply: .loadingModel(), code: .providerUnavailable,
            check: { $0 == .retry(after: 5) },
            says: ["loading"], testDescription: "503 Loading model"),
        Case(
            flavour: .llamaServer, reply: .loadingModel(retryAfter: "12"), code: .providerUnavailable,
            check: { $0 == .retry(after: 12) }, testDescription: "503 Loading model with Retry-After"),
        Case(
            flavour: .llamaServer, reply: .error(status: 401, message: "Invalid API Key"), code: .providerAuth,
            check: { $0 == .providerBroken }, says: ["OPENAI_API_KEY"], testDescription: "401"),
        Case(
            flavour: .vllm, reply: .flatError(status: 401, message: "Unauthorized"), code: .providerAuth,
            check: { $0 == .providerBroken }, testDescription: "vLLM flat 401"),
        Case(
            flavour: .llamaServer, reply: .error(status: 403, message: "forbidden"), code: .providerAuth,
            check: { $0 == .providerBroken }, testDescription: "403"),
        Case(
            flavour: .vllm, reply: .error(status: 422, message: "unprocessable"), code: .providerRejected,
            check: { $0 == .dead }, testDescription: "other 4xx"),
        Case(
            flavour: .llamaServer,
            reply: .raw(
                status: 400,
                body:
                    #"{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}"#
            ),
            code: .providerRejected, check: { $0 == .dead }, says: ["max_side"], testDescription: "context too small"),
        Case(
            flavour: .ollama, reply: .flatError(status: 502, message: "cloud model unreachable"),
            code: .providerUnavailable,
            check: { $0 == .retry(after: nil) }, testDescription: "502 flat"),
        Case(
            flavour: .vllm, reply: .error(status: 503, message: "Service Unavailable"), code: .providerUnavailable,
            check: { $0 == .retry(after: nil) }, testDescription: "503 other"),
        Case(
            flavour: .ollama, reply: .raw(status: 504, headers: [("Retry-After", "3")], body: ""),
            code: .providerUnavailable,
            check: { $0 == .retry(after: 3) }, testDescription: "504 with Retry-After"),
        Case(
            flavour: .ollama, reply: .raw(status: 200, body: #"{"object":"chat.completion","choices":[]}"#),
            code: .providerNonsense, check: { $0.isRetry }, testDescription: "no choices"),
        Case(
            flavour: .vllm, reply: .text("I can't help with that.", finishReason: "content_filter"),
            code: .providerBlocked,
            check: { $0 == .dead }, testDescription: "content filter"),
    ]

    @Test("Each failure gets the right code and disposition, and never shows the key", arguments: failureCases)
    func failures(_ testCase: Case) async throws {
        let logs = CapturedLogs()
        try await withOpenAIEmulator(
            .init(
                flavour: testCase.reply.flavour, apiKey: testKey,
                reply: testCase.reply.reply)
        ) { server in
            try await expectFailure(
                testCase, from: openAIProvider(server, key: testKey, logs: logs), secrets: [testKey],
                logs: logs)
        }
    }

    @Test(
        "A 429 waits for retry-after-ms, else retry-after, else 60 s",
        arguments: [
            (OpenAIEmulator.Reply.rateLimited(retryAfterMs: "1500"), 1.5),
            (.rateLimited(retryAfter: "7", retryAfterMs: "250"), 0.25), (.rateLimited(), 60.0),
        ])
    func rateLimited(reply: OpenAIEmulator.Reply, seconds: Double) async throws {
        try await withOpenAIEmulator(.init(flavour: .vllm, reply: reply)) { server in
            let error = try await expectPause(openAIProvider(server), seconds: seconds)
            #expect(error.code == .providerRateLimited)
        }
    }

    @Test("A model still loading, then answering: the retry succeeds")
    func loadingThenAnswer() async throws {
        try await withOpenAIEmulator(
            .init(
                flavour: .llamaServer,
                rules: [
                    .init(photo: .any, replies: [.loadingModel(), .books([Self.dune])])
                ])
        ) { server in
            let provider = openAIProvider(server)
            #expect(await failure(provider)?.code == .providerUnavailable)
            let answer = try await scan(provider)
            #expect(answer.books.count == 1)
            #expect(server.requests.map(\.status) == [503, 200])
        }
    }

    @Test("checkReachable with nothing listening at base_url is a network error")
    func unreachable() async throws {
        let server = try OpenAIEmulator.start()
        server.stop()
        if case .failure(let check) = await openAIProvider(server).checkReachable() {
            #expect(check.code == .network)
        } else {
            Issue.record("checkReachable succeeded with nothing listening")
        }
    }

    @Test("checkReachable succeeds when /models lists the model", arguments: OpenAIEmulator.Flavour.allCases)
    func reachableWithModel(flavour: OpenAIEmulator.Flavour) async throws {
        try await withOpenAIEmulator(
            .init(
                flavour: flavour, apiKey: testKey,
                models: ["llava:latest", OpenAIEmulator.defaultModel])
        ) { server in
            let result = await openAIProvider(server, key: testKey).checkReachable()
            let sentence = try result.get()
            #expect(sentence.contains(OpenAIEmulator.defaultModel))
            #expect(server.requests.first?.method == "GET" && server.requests.first?.path == "/v1/models")
            #expect(server.requests.first?.status == 200)
            // Ollama lists a model pulled as "llava" as "llava:latest".
            #expect((try? await openAIProvider(server, model: "llava", key: testKey).checkReachable().get()) != nil)
        }
    }

    @Test("checkReachable names the missing model and what the server offers")
    func reachableWithoutModel() async throws {
        try await withOpenAIEmulator(.init(models: ["llava:7b", "gemma3:4b"])) { server in
            guard case .failure(let error) = await openAIProvider(server).checkReachable() else {
                Issue.record("expected a failure"); return
            }
            #expect(error.code == .providerModel && error.disposition == .providerBroken)
            #expect(error.message.contains("'qwen2.5vl:7b'") && error.message.contains("llava:7b, gemma3:4b"))
            #expect(error.message.contains("ollama pull"))
        }
    }

    @Test("checkReachable classifies a server error: a loading model, a bad key")
    func reachableErrors() async throws {
        try await withOpenAIEmulator(.init(flavour: .llamaServer, apiKey: testKey, modelsReply: .loadingModel())) {
            server in
            guard case .failure(let loading) = await openAIProvider(server, key: testKey).checkReachable() else {
                Issue.record("expected a failure"); return
            }
            #expect(loading.code == .providerUnavailable)
            guard case .failure(let auth) = await openAIProvider(server, key: "wrong").checkReachable() else {
                Issue.record("expected a failure"); return
            }
            #expect(auth.code == .providerAuth && auth.disposition == .providerBroken)
        }
    }

    @Test("A key the server echoes back is redacted from the message")
    func echoedKeyRedacted() async throws {
        let logs = CapturedLogs()
        try await withOpenAIEmulator(.init(reply: .error(status: 400, message: "bad header Bearer \(testKey)"))) {
            server in
            let error = try #require(await failure(openAIProvider(server, key: testKey, logs: logs)))
            #expect(error.message.contains("<redacted>"))
            expectNoKey(error, logs)
        }
    }

    @Test("The preset takes max_side and jpeg_quality from the settings, the byte target its own")
    func presetFromSettings() {
        var settings = OpenAICompatibleSettings.unsent
        settings.maxSide = 2048
        settings.quality = 60
        let provider = OpenAICompatibleProvider(
            settings: settings, http: HTTPClient(maxConcurrent: 1), logger: CapturedLogs().logger)
        #expect(provider.name == "openai")
        #expect(provider.preset.maxSide == 2048 && provider.preset.quality == 60)
        #expect(provider.preset.targetBytes == 150_000...400_000)
        #expect(provider.preset.minQuality <= 60)
    }

    @Test("Corner boxes out of range are clamped and noted; a box_2d given instead is read as Gemini's")
    func cornerBoxes() throws {
        let text =
            #"{"books":[{"title":"A","confidence":0.9,"box":[-0.1,0.2,0.3,1.2]},"#
            + #"{"title":"B","confidence":0.9,"box_2d":[100,200,900,300]},{"title":"C","confidence":0.9,"box":[1,2]}]}"#
        let answer = try #require(AnswerParser.answer(from: text, boxes: .corners))
        #expect(
            answer.books.map(\.box) == [
                Box(x1: 0, y1: 0.2, x2: 0.3, y2: 1), Box(x1: 0.2, y1: 0.1, x2: 0.3, y2: 0.9), nil,
            ])
        #expect(answer.notes == ["box_clamped: A", "box_invalid: C"])
    }
}

// MARK: - Helpers

func openAIProvider(
    _ server: OpenAIEmulator, model: String = OpenAIEmulator.defaultModel, key: String? = nil,
    timeout: Duration = .seconds(10), logs: CapturedLogs = CapturedLogs()
) -> OpenAICompatibleProvider {
    OpenAICompatibleProvider(
        settings: OpenAICompatibleSettings(
            model: model, baseURL: server.baseURL, apiKey: key.map(Secret.init), timeout: timeout, maxSide: 1536,
            quality: 85),
        http: HTTPClient(maxConcurrent: 2), logger: logs.logger)
}

extension FailureCase where Reply == OpenAICompatibleProviderTests.FlavouredReply {
    init(
        flavour: OpenAIEmulator.Flavour, reply: OpenAIEmulator.Reply, code: PhotoError.Code,
        check: @escaping @Sendable (PhotoError.Disposition) -> Bool, says: [String] = [], testDescription: String
    ) {
        self.init(
            reply: .init(flavour: flavour, reply: reply), code: code, check: check, says: says,
            testDescription: testDescription)
    }
}
