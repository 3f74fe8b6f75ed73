import Foundation
import ShelfCore
import ShelfDigest
import ShelfHTTP
import ShelfProviders
import ShelfTesting
import Testing

typealias Reply = GeminiEmulator.Reply

@Suite("Gemini provider against the emulator", .timeLimit(.minutes(1)))
struct GeminiProviderTests {
    static let dune = GeminiEmulator.Book(
        title: "Dune", author: "Frank Herbert", isbn: "9780441172719",
        confidence: 0.93, box2D: [120, 410, 880, 450])
    static let hobbit = GeminiEmulator.Book(
        title: "The Hobbit", author: nil, isbn: nil, confidence: 0.55, box2D: [100, 500, 900, 540])

    @Test("The request has the wire shape Gemini needs")
    func requestShape() async throws {
        try await withGeminiEmulator(GeminiEmulator.Script(apiKey: testKey, reply: .books([Self.dune]))) { gemini in
            let photo = fakePhoto("wire")
            _ = try await scan(makeProvider(gemini), photo)
            let request = try #require(gemini.requests.first)
            #expect(request.status == 200)
            #expect(request.path == "/v1beta/models/gemini-2.5-flash:generateContent")
            #expect(request.model == "gemini-2.5-flash")
            #expect(request.keySource == .header)
            #expect(request.headers["x-goog-api-key"] == testKey)
            #expect(request.photoSHA256 == SHA256.hex(of: photo.bytes))

            let body = try #require(request.json)
            let parts = try #require((body["contents"] as? [[String: Any]])?.first?["parts"] as? [[String: Any]])
            #expect(parts.count == 2)
            let inline = try #require(parts[0]["inline_data"] as? [String: Any])
            #expect(inline["mime_type"] as? String == "image/jpeg")
            #expect(Data(base64Encoded: inline["data"] as? String ?? "").map([UInt8].init) == photo.bytes)
            #expect(parts[1]["text"] is String)
            let system = try #require((body["systemInstruction"] as? [String: Any])?["parts"] as? [[String: Any]])
            let instruction = system.first?["text"] as? String ?? ""
            #expect(instruction.contains("box_2d") && instruction.contains("angle_issues"))

            let config = try #require(body["generationConfig"] as? [String: Any])
            #expect(config["responseMimeType"] as? String == "application/json")
            #expect((config["maxOutputTokens"] as? Int ?? 0) >= 8192)
            #expect((config["thinkingConfig"] as? [String: Any])?["thinkingBudget"] as? Int == 1024)
            let schema = try #require(config["responseSchema"] as? [String: Any])
            let types = schemaTypes(schema)
            #expect(!types.isEmpty && types.allSatisfy { $0 == $0.uppercased() })
            #expect(schemaKeys(schema).isDisjoint(with: ["title", "$schema"]))
        }
    }

    @Test(
        "Gemini 3 models get thinkingLevel, others thinkingBudget",
        arguments: [
            ("gemini-3-flash-preview", "thinkingLevel"), ("gemini-2.5-pro", "thinkingBudget"),
            ("gemini-2.5-flash-lite", "thinkingBudget"),
        ])
    func thinkingPerGeneration(model: String, field: String) async throws {
        try await withGeminiEmulator(GeminiEmulator.Script(apiKey: testKey, reply: .books([]))) { gemini in
            _ = try await scan(makeProvider(gemini, model: model))
            let request = try #require(gemini.requests.first)
            #expect(request.status == 200)
            let thinking = (request.json?["generationConfig"] as? [String: Any])?["thinkingConfig"] as? [String: Any]
            #expect(thinking.map { Array($0.keys) } == [field])
        }
    }

    @Test("A thought-summary part before the answer still gives the books")
    func thoughtThenBooks() async throws {
        try await withGeminiEmulator(.init(apiKey: testKey, reply: .thoughtThenBooks([Self.dune]))) { gemini in
            let answer = try await scan(makeProvider(gemini))
            #expect(answer.books.map(\.title) == ["Dune"])
        }
    }

    typealias Case = FailureCase<Reply>

    static let failureCases: [Case] = [
        Case(
            reply: .internalError, code: .providerUnavailable, check: { $0 == .retry(after: nil) },
            testDescription: "500"),
        Case(
            reply: .deadlineExceeded, code: .providerUnavailable, check: { $0 == .retry(after: nil) },
            testDescription: "504"),
        Case(
            reply: .raw(status: 503, headers: [("Retry-After", "5")], body: "busy"), code: .providerUnavailable,
            check: { $0 == .retry(after: 5) }, testDescription: "503 with Retry-After"),
        Case(
            reply: .error(status: 408, rpcStatus: "DEADLINE_EXCEEDED", message: "timeout"), code: .providerUnavailable,
            check: { $0.isRetry }, testDescription: "408"),
        Case(
            reply: .error(
                status: 403, rpcStatus: "PERMISSION_DENIED",
                message: "Your API key doesn't have the required permissions."),
            code: .providerAuth, check: { $0 == .providerBroken }, testDescription: "403"),
        Case(
            reply: .error(status: 401, rpcStatus: "UNAUTHENTICATED", message: "no"), code: .providerAuth,
            check: { $0 == .providerBroken }, testDescription: "401"),
        Case(
            reply: .error(
                status: 400, rpcStatus: "FAILED_PRECONDITION",
                message: "Gemini API free tier is not available in your country."),
            code: .providerRejected, check: { $0 == .dead }, testDescription: "other 400"),
        Case(
            reply: .blockedPrompt("SAFETY"), code: .providerBlocked, check: { $0 == .dead },
            testDescription: "blocked prompt"),
        Case(
            reply: .finishedWithoutParts("SAFETY"), code: .providerBlocked, check: { $0 == .dead },
            testDescription: "SAFETY, no parts"),
        Case(
            reply: .finishedWithoutParts("RECITATION"), code: .providerBlocked, check: { $0 == .dead },
            testDescription: "RECITATION"),
        Case(
            reply: .finishedWithoutParts("PROHIBITED_CONTENT"), code: .providerBlocked, check: { $0 == .dead },
            testDescription: "PROHIBITED_CONTENT"),
        Case(
            reply: .maxTokensWithoutParts, code: .providerTruncated, check: { $0 == .retry(after: nil) },
            testDescription: "MAX_TOKENS, no parts"),
    ]

    @Test("Each failure gets the right code and disposition, and never shows the key", arguments: failureCases)
    func failures(_ testCase: Case) async throws {
        let logs = CapturedLogs()
        try await withGeminiEmulator(.init(apiKey: testKey, reply: testCase.reply)) { gemini in
            try await expectFailure(testCase, from: makeProvider(gemini, logs: logs), secrets: [testKey], logs: logs)
        }
    }

    @Test("An unknown model names the model and the setting")
    func unknownModel() async throws {
        try await withGeminiEmulator(.init(apiKey: testKey, models: ["gemini-2.5-flash"])) { gemini in
            let error = try #require(await failure(makeProvider(gemini, model: "gemini-2.0-flash")))
            #expect(gemini.requests.first?.status == 404)
            #expect(error.code == .providerModel && error.disposition == .providerBroken)
            #expect(error.message.contains("gemini-2.0-flash") && error.message.contains("[gemini] model"))
        }
    }

    @Test(
        "A per-minute 429 waits for RetryInfo's delay in any of its forms",
        arguments: [("0.5s", 0.5), ("900ms", 0.9), ("34.074824224s", 34.074824224)])
    func rateLimited(delay: String, seconds: Double) async throws {
        try await withGeminiEmulator(.init(apiKey: testKey, reply: .rateLimited(retryDelay: delay))) { gemini in
            let error = try await expectPause(makeProvider(gemini), seconds: seconds)
            #expect(error.code == .providerRateLimited)
        }
    }

    @Test("A 429 without RetryInfo uses 'Please retry in', else 60 s")
    func rateLimitedFallbacks() async throws {
        try await withGeminiEmulator(
            .init(
                apiKey: testKey,
                reply: .error(
                    status: 429, rpcStatus: "RESOURCE_EXHAUSTED",
                    message: "Slow down. Please retry in 7s."))
        ) { gemini in
            let error = try await expectPause(makeProvider(gemini), seconds: 7)
            #expect(error.code == .providerRateLimited)
            gemini.setScript(.init(apiKey: testKey, reply: .rateLimited(retryDelay: nil)))
            try await expectPause(makeProvider(gemini), seconds: 60)
        }
    }

    @Test("A daily quota pauses the provider until midnight Pacific")
    func dailyQuota() async throws {
        try await withGeminiEmulator(.init(apiKey: testKey, reply: .dailyQuotaExhausted)) { gemini in
            let error = try #require(await failure(makeProvider(gemini)))
            #expect(error.code == .providerQuota)
            let until = try #require(error.disposition.waitUntil)
            var pacific = Calendar(identifier: .gregorian)
            pacific.timeZone = try #require(TimeZone(identifier: "America/Los_Angeles"))
            let parts = pacific.dateComponents([.hour, .minute, .second], from: until)
            #expect(parts.hour == 0 && parts.minute == 0 && parts.second == 0)
            #expect(until > Date() && until.timeIntervalSinceNow <= 25 * 3600)
        }
    }

}

func expectNoKey(_ error: PhotoError, _ logs: CapturedLogs, sourceLocation: SourceLocation = #_sourceLocation) {
    expectNoSecrets([testKey], in: error, logs, sourceLocation: sourceLocation)
}

/// Every `type` value in a schema, recursively.
func schemaTypes(_ schema: [String: Any]) -> [String] {
    var types = (schema["type"] as? String).map { [$0] } ?? []
    for case let child as [String: Any] in (schema["properties"] as? [String: Any] ?? [:]).values {
        types += schemaTypes(child)
    }
    if let items = schema["items"] as? [String: Any] { types += schemaTypes(items) }
    return types
}

/// Every key of every schema object (not property names), recursively.
func schemaKeys(_ schema: [String: Any]) -> Set<String> {
    var keys = Set(schema.keys)
    for case let child as [String: Any] in (schema["properties"] as? [String: Any] ?? [:]).values {
        keys.formUnion(schemaKeys(child))
    }
    if let items = schema["items"] as? [String: Any] { keys.formUnion(schemaKeys(items)) }
    return keys
}
