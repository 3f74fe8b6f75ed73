import Foundation
import ShelfCore
import ShelfDigest
import ShelfHTTP
import ShelfProviders
import ShelfTesting
import Testing

/// What every vision provider must do, whatever its wire format: the same scenarios, run against each
/// provider and its emulator. Wire details that only one provider has stay in that provider's own suite.
/// (The offline OCR provider sends nothing over HTTP and has no key, so none of these scenarios apply to it.)
@Suite("Every vision provider keeps the same contract", .timeLimit(.minutes(1)))
struct ProviderContractTests {
    static let duneBox = Box(x1: 0.41, y1: 0.12, x2: 0.45, y2: 0.88)

    @Test(
        "A good answer parses into books with their boxes in range, and the suggestions kept",
        arguments: ContractProvider.allCases)
    func goodAnswer(_ kind: ContractProvider) async throws {
        try await withContractEmulator(kind, .init(answer: .shelf)) { rig in
            let answer = try await scan(rig.provider())
            #expect(answer.books.count == 2)
            let dune = try #require(answer.books.first)
            #expect(dune.title == "Dune" && dune.author == "Frank Herbert" && dune.isbn == "9780441172719")
            #expect(dune.confidence == 0.93)
            #expect(dune.box == Self.duneBox)
            #expect(answer.books[1].author == nil && answer.books[1].isbn == nil)
            for box in answer.books.compactMap(\.box) {
                #expect(0 <= box.x1 && box.x1 < box.x2 && box.x2 <= 1 && 0 <= box.y1 && box.y1 < box.y2 && box.y2 <= 1)
            }
            #expect(
                answer.suggestions == [
                    Suggestion(type: .glareDetected, severity: .warning, message: "Glare on the left."),
                    Suggestion(type: .blurryImage, severity: .warning, message: "Hold the phone still."),
                ])
            #expect(answer.notes.isEmpty)
            #expect(rig.statuses() == [200])
        }
    }

    @Test(
        "An answer in a ```json fence or wrapped in prose still gives the books",
        arguments: ContractProvider.allCases, [ContractAnswer.fenced, .prose])
    func toleratedShapes(_ kind: ContractProvider, shape: ContractAnswer) async throws {
        try await withContractEmulator(kind, .init(answer: shape)) { rig in
            let answer = try await scan(rig.provider())
            #expect(answer.books.map(\.title) == ["Dune"])
            #expect(answer.books.first?.box == Self.duneBox)
        }
    }

    @Test(
        "A wrong key pauses the provider (providerBroken: no attempt charged) and says what to do",
        arguments: ContractProvider.checkingKeys)
    func wrongKey(_ kind: ContractProvider) async throws {
        let logs = CapturedLogs()
        try await withContractEmulator(kind, .init(serverHasOtherKey: true)) { rig in
            let error = try #require(await failure(rig.provider(logs: logs)))
            #expect(rig.statuses().first == kind.wrongKeyStatus)
            #expect(error.code == .providerAuth && error.disposition == .providerBroken)
            #expect(
                error.message.contains(kind.keySetting) && error.message.contains("shelfd doctor"), "\(error.message)")
            expectNoSecrets(kind.secrets, in: error, logs)
        }
    }

    @Test(
        "A 429 with a retry delay pauses the provider for that delay (providerWait: no attempt charged)",
        arguments: ContractProvider.allCases)
    func rateLimited(_ kind: ContractProvider) async throws {
        let seconds = kind.retryDelaySeconds, logs = CapturedLogs()
        try await withContractEmulator(kind, .init(answer: .rateLimited(seconds: seconds))) { rig in
            let error = try await expectPause(rig.provider(logs: logs), seconds: Double(seconds))
            #expect(error.code == .providerRateLimited)
            #expect(!error.message.isEmpty)
            expectNoSecrets(kind.secrets, in: error, logs)
        }
    }

    @Test("A 5xx is an outage: retried, and never shows the key", arguments: ContractProvider.allCases)
    func serverError(_ kind: ContractProvider) async throws {
        let logs = CapturedLogs()
        try await withContractEmulator(kind, .init(answer: .unavailable)) { rig in
            let error = try #require(await failure(rig.provider(logs: logs)))
            #expect(error.code == .providerUnavailable && error.disposition == .retry(after: nil), "\(error)")
            #expect(!error.message.isEmpty)
            expectNoSecrets(kind.secrets, in: error, logs)
        }
    }

    @Test("Failing twice with a 5xx then answering: the third attempt succeeds", arguments: ContractProvider.allCases)
    func failThenSucceed(_ kind: ContractProvider) async throws {
        try await withContractEmulator(kind, .init(rules: [(.any, [.unavailable, .unavailable, .dune])])) { rig in
            let provider = rig.provider()
            #expect(await failure(provider)?.code == .providerUnavailable)
            #expect(await failure(provider)?.code == .providerUnavailable)
            let answer = try await scan(provider)
            #expect(answer.books.count == 1)
            let statuses = rig.statuses()
            #expect(
                statuses.count == 3 && statuses[0] >= 500 && statuses[1] == statuses[0] && statuses[2] == 200,
                "\(statuses)")
        }
    }

    @Test(
        "A garbled answer is nonsense, retried, and never shows the key",
        arguments: ContractProvider.allCases, [ContractAnswer.garbage, .emptyText, .jsonWithoutBooks, .notTheAPI])
    func nonsense(_ kind: ContractProvider, answer: ContractAnswer) async throws {
        let logs = CapturedLogs()
        try await withContractEmulator(kind, .init(answer: answer)) { rig in
            let error = try #require(await failure(rig.provider(logs: logs)))
            #expect(error.code == .providerNonsense, "\(error)")
            #expect(error.disposition.isRetry, "\(error.disposition)")
            if case .garbage = answer { #expect(error.disposition == .retry(after: nil)) }
            #expect(!error.message.isEmpty)
            expectNoSecrets(kind.secrets, in: error, logs)
        }
    }

    @Test(
        "An answer cut off at the token limit is truncated, retried, never half a shelf",
        arguments: ContractProvider.allCases)
    func cutAnswer(_ kind: ContractProvider) async throws {
        let logs = CapturedLogs()
        try await withContractEmulator(kind, .init(answer: .cut)) { rig in
            let error = try #require(await failure(rig.provider(logs: logs)))
            #expect(error.code == .providerTruncated && error.disposition == .retry(after: nil), "\(error)")
            #expect(!error.message.isEmpty)
            for phrase in kind.cutHints { #expect(error.message.contains(phrase), "\(error.message)") }
            expectNoSecrets(kind.secrets, in: error, logs)
        }
    }

    @Test(
        "A photo too large for the provider is dead and says how to make it smaller",
        arguments: ContractProvider.allCases)
    func photoTooLarge(_ kind: ContractProvider) async throws {
        let logs = CapturedLogs()
        // Gemini refuses a photo over its 20 MB inline limit before sending; the others answer 413.
        let photo = kind == .gemini ? fakePhoto("big", size: 16 * 1024 * 1024) : fakePhoto()
        try await withContractEmulator(kind, .init(answer: .tooLarge)) { rig in
            let error = try #require(await failure(rig.provider(logs: logs), photo))
            #expect(error.code == .photoTooLarge && error.disposition == .dead, "\(error)")
            #expect(error.message.contains(kind.tooLargeHint), "\(error.message)")
            if kind == .gemini { #expect(rig.statuses().isEmpty) }
            expectNoSecrets(kind.secrets, in: error, logs)
        }
    }

    @Test("A script can fail one photo and answer the others", arguments: ContractProvider.allCases)
    func perPhotoScript(_ kind: ContractProvider) async throws {
        let bad = fakePhoto("bad"), good = fakePhoto("good")
        try await withContractEmulator(
            kind,
            .init(rules: [
                (.sha256(SHA256.hex(of: bad.bytes)), [.rejected]),
                (.marker("marker:good;"), [.dune]),
            ])
        ) { rig in
            let provider = rig.provider()
            #expect(await failure(provider, bad)?.code == .providerRejected)
            let answer = try await scan(provider, good)
            #expect(answer.books.map(\.title) == ["Dune"])
        }
    }

    @Test("A slow provider is a network timeout, retried", arguments: ContractProvider.allCases)
    func timeout(_ kind: ContractProvider) async throws {
        try await withContractEmulator(kind, .init(latency: .seconds(5))) { rig in
            let error = try #require(await failure(rig.provider(timeout: .milliseconds(300))))
            #expect(error.code == .network && error.disposition == .retry(after: nil))
            for phrase in kind.timeoutHints { #expect(error.message.contains(phrase), "\(error.message)") }
        }
    }

    @Test("Nothing listening is a network error, retried", arguments: ContractProvider.allCases)
    func unreachable(_ kind: ContractProvider) async throws {
        let rig = try ContractRig.start(kind, .init())
        rig.stop()
        let error = try #require(await failure(rig.provider()))
        #expect(error.code == .network && error.disposition == .retry(after: nil))
        for phrase in kind.unreachableHints(baseURL: rig.baseURL) {
            #expect(error.message.contains(phrase), "\(error.message)")
        }
    }

    @Test(
        "Debug logs carry status, sizes and duration, never the key or the answer", arguments: ContractProvider.allCases
    )
    func logs(_ kind: ContractProvider) async throws {
        let logs = CapturedLogs()
        try await withContractEmulator(kind, .init(answer: .dune)) { rig in
            _ = try await scan(rig.provider(logs: logs))
            let line = try #require(logs.all.first)
            #expect(
                line.contains("http.status=200") && line.contains("http.request.bytes=")
                    && line.contains("duration_ms="))
            #expect(!logs.all.contains { line in kind.secrets.contains { line.contains($0) } || line.contains("Dune") })
        }
    }

    @Test("The secrets are redacted when the settings are printed or dumped", arguments: ContractProvider.allCases)
    func secretsRedacted(_ kind: ContractProvider) {
        let settings = kind.settingsWithSecrets
        var dumped = ""
        dump(settings, to: &dumped)
        for secret in kind.secrets {
            #expect(
                !"\(settings)".contains(secret) && !dumped.contains(secret)
                    && !String(reflecting: settings).contains(secret))
            #expect("\(Secret(secret))" == "<redacted>")
        }
    }
}

// MARK: - The providers and their emulators

/// A provider under the contract; the OpenAI-compatible one once per server flavour.
enum ContractProvider: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case gemini, cloudflare, ollama, llamaServer, vllm

    /// The providers whose server checks a key (Ollama never does).
    static let checkingKeys: [ContractProvider] = [.gemini, .cloudflare, .llamaServer, .vllm]

    var testDescription: String { rawValue }

    var flavour: OpenAIEmulator.Flavour? {
        switch self {
        case .gemini, .cloudflare: nil
        case .ollama: .ollama
        case .llamaServer: .llamaServer
        case .vllm: .vllm
        }
    }

    /// What no message, description or log line may contain.
    var secrets: [String] { self == .cloudflare ? [cfToken, cfAccount] : [testKey] }

    /// The environment variable a wrong key's message names.
    var keySetting: String {
        switch self {
        case .gemini: "GEMINI_API_KEY"
        case .cloudflare: "CLOUDFLARE_API_TOKEN"
        default: "OPENAI_API_KEY"
        }
    }

    /// How the server answers a wrong key: Gemini 400 API_KEY_INVALID, the others 401.
    var wrongKeyStatus: Int { self == .gemini ? 400 : 401 }

    /// The retry delay each scripts in its own form ("2s" in RetryInfo, `retry-after: 30`, `retry-after: 7`).
    var retryDelaySeconds: Int {
        switch self {
        case .gemini: 2
        case .cloudflare: 30
        default: 7
        }
    }

    var tooLargeHint: String {
        switch self {
        case .gemini: "20 MB"
        case .cloudflare: "smaller"
        default: "max_side"
        }
    }

    var cutHints: [String] { flavour == nil ? [] : ["max_tokens 4096"] }
    var timeoutHints: [String] { flavour == nil ? [] : ["timeout_s"] }
    func unreachableHints(baseURL: String) -> [String] { flavour == nil ? [] : [baseURL, "Ollama"] }

    /// The provider's settings holding every secret, to print and dump.
    var settingsWithSecrets: Any {
        switch self {
        case .gemini: return GeminiSettings.unsent
        case .cloudflare: return CloudflareSettings.unsent
        default: return OpenAICompatibleSettings.unsent
        }
    }
}

/// What a contract scenario scripts, translated into each emulator's own replies.
enum ContractAnswer: Sendable, CustomTestStringConvertible {
    /// Dune and The Hobbit (no author, no ISBN), with two suggestions.
    case shelf
    /// Dune alone.
    case dune
    /// Dune in a ```json fence; Dune wrapped in prose.
    case fenced, prose
    /// Dune and The Hobbit cut off mid-JSON at the token limit.
    case cut
    /// Prose instead of JSON; an empty text; JSON without `books`; a 200 page that is not the API's.
    case garbage, emptyText, jsonWithoutBooks, notTheAPI
    /// A 5xx.
    case unavailable
    /// A 429 with the provider's retry delay.
    case rateLimited(seconds: Int)
    /// A 400 about the photo.
    case rejected
    /// 413 (Gemini checks its limit before sending and answers the books).
    case tooLarge

    var testDescription: String {
        switch self {
        case .shelf: "shelf"
        case .dune: "Dune"
        case .fenced: "fenced"
        case .prose: "prose"
        case .cut: "cut"
        case .garbage: "garbage"
        case .emptyText: "empty text"
        case .jsonWithoutBooks: "JSON without books"
        case .notTheAPI: "200 that is not the API"
        case .unavailable: "5xx"
        case .rateLimited(let seconds): "429 retry in \(seconds) s"
        case .rejected: "400"
        case .tooLarge: "413"
        }
    }

    static let glare = EmulatedSuggestion(type: "glare_detected", severity: "warning", message: "Glare on the left.")
    static let blurry = EmulatedSuggestion(type: "blurry_image", severity: "warning", message: "Hold the phone still.")
    static let suggestions = [glare, blurry]
    /// Each with its box both ways: Gemini and Workers AI answer `box2D`, OpenAI-compatible servers `box`.
    static let duneBook = EmulatedBook(
        title: "Dune", author: "Frank Herbert", isbn: "9780441172719", confidence: 0.93,
        box2D: [120, 410, 880, 450], box: [0.41, 0.12, 0.45, 0.88])
    static let hobbitBook = EmulatedBook(
        title: "The Hobbit", confidence: 0.55, box2D: [100, 500, 900, 540], box: [0.5, 0.1, 0.54, 0.9])
    static let notTheAPIPage = "<html>proxy</html>"
    static let jsonWithoutBooksText = #"{"shelf": 1}"#

    var gemini: GeminiEmulator.Reply {
        switch self {
        case .shelf: .books([Self.duneBook, Self.hobbitBook], suggestions: Self.suggestions)
        case .dune: .books([Self.duneBook])
        case .fenced: .fenced([Self.duneBook])
        case .prose: .trailingProse([Self.duneBook])
        case .cut: .maxTokensCut([Self.duneBook, Self.hobbitBook])
        case .garbage: .garbage
        case .emptyText: .text("", finishReason: "STOP")
        case .jsonWithoutBooks: .text(Self.jsonWithoutBooksText, finishReason: "STOP")
        case .notTheAPI: .raw(status: 200, body: Self.notTheAPIPage)
        case .unavailable: .overloaded
        case .rateLimited(let seconds): .rateLimited(retryDelay: "\(seconds)s")
        case .rejected: .error(status: 400, rpcStatus: "INVALID_ARGUMENT", message: "Bad image.")
        case .tooLarge: .books([Self.duneBook])
        }
    }

    var cloudflare: CloudflareEmulator.Reply {
        switch self {
        case .shelf: .books([Self.duneBook, Self.hobbitBook], suggestions: Self.suggestions)
        case .dune: .books([Self.duneBook])
        case .fenced: .fenced([Self.duneBook])
        case .prose: .prose([Self.duneBook])
        case .cut: .cut([Self.duneBook, Self.hobbitBook])
        case .garbage: .garbage
        case .emptyText: .text("")
        case .jsonWithoutBooks: .text(Self.jsonWithoutBooksText)
        case .notTheAPI: .raw(status: 200, body: Self.notTheAPIPage)
        case .unavailable: .serverError
        case .rateLimited(let seconds): .rateLimited(retryAfter: seconds)
        case .rejected: .error(status: 400, code: 5004, message: "Invalid data type for base64 input: number")
        case .tooLarge: .tooLarge
        }
    }

    var openAI: OpenAIEmulator.Reply {
        switch self {
        case .shelf: .books([Self.duneBook, Self.hobbitBook], suggestions: Self.suggestions)
        case .dune: .books([Self.duneBook])
        case .fenced: .fenced([Self.duneBook])
        case .prose: .proseWrapped([Self.duneBook])
        case .cut: .cut([Self.duneBook, Self.hobbitBook])
        case .garbage: .garbage
        case .emptyText: .text("")
        case .jsonWithoutBooks: .text(Self.jsonWithoutBooksText)
        case .notTheAPI: .raw(status: 200, body: Self.notTheAPIPage)
        case .unavailable: .error(status: 500, message: "the model failed to generate a response")
        case .rateLimited(let seconds): .rateLimited(retryAfter: "\(seconds)")
        case .rejected: .error(status: 400, message: "invalid image input")
        case .tooLarge: .raw(status: 413, body: "too large")
        }
    }
}

/// A contract scenario's script.
struct ContractScript: Sendable {
    /// Every request not matched by a rule.
    var answer: ContractAnswer = .dune
    /// Replies for the matching photos, in order; the last repeats.
    var rules: [(photo: EmulatedPhotoMatch, answers: [ContractAnswer])] = []
    var latency: Duration = .zero
    /// The server expects another key than the provider sends.
    var serverHasOtherKey = false
}

/// One provider pointed at its running emulator.
struct ContractRig: Sendable {
    var kind: ContractProvider
    var baseURL: String
    /// The HTTP status of every request the emulator answered, in order.
    var statuses: @Sendable () -> [Int]
    var stop: @Sendable () -> Void
    private var make: @Sendable (_ timeout: Duration, _ logs: CapturedLogs) -> any VisionProvider

    func provider(timeout: Duration = .seconds(10), logs: CapturedLogs = CapturedLogs()) -> any VisionProvider {
        make(timeout, logs)
    }

    static func start(_ kind: ContractProvider, _ script: ContractScript) throws -> ContractRig {
        let otherKey = "the-real-key"
        switch kind {
        case .gemini:
            let gemini = try GeminiEmulator.start(
                script: GeminiEmulator.Script(
                    apiKey: script.serverHasOtherKey ? otherKey : testKey, latency: script.latency,
                    rules: script.rules.map { .init(photo: $0.photo, replies: $0.answers.map(\.gemini)) },
                    reply: script.answer.gemini))
            return ContractRig(
                kind: kind, baseURL: gemini.baseURL, statuses: { gemini.requests.map(\.status) },
                stop: { gemini.stop() }, make: { makeProvider(gemini, timeout: $0, logs: $1) })
        case .cloudflare:
            let cloudflare = try CloudflareEmulator.start(
                script: CloudflareEmulator.Script(
                    token: script.serverHasOtherKey ? otherKey : cfToken, accountID: cfAccount, licenseAgreed: true,
                    latency: script.latency,
                    rules: script.rules.map { .init(photo: $0.photo, replies: $0.answers.map(\.cloudflare)) },
                    reply: script.answer.cloudflare))
            return ContractRig(
                kind: kind, baseURL: cloudflare.baseURL, statuses: { cloudflare.requests.map(\.status) },
                stop: { cloudflare.stop() }, make: { cfProvider(cloudflare, timeout: $0, logs: $1) })
        case .ollama, .llamaServer, .vllm:
            let server = try OpenAIEmulator.start(
                script: OpenAIEmulator.Script(
                    flavour: kind.flavour ?? .ollama, apiKey: script.serverHasOtherKey ? otherKey : testKey,
                    latency: script.latency,
                    rules: script.rules.map { .init(photo: $0.photo, replies: $0.answers.map(\.openAI)) },
                    reply: script.answer.openAI))
            return ContractRig(
                kind: kind, baseURL: server.baseURL, statuses: { server.requests.map(\.status) },
                stop: { server.stop() }, make: { openAIProvider(server, key: testKey, timeout: $0, logs: $1) })
        }
    }
}

/// Starts the provider's emulator with the script, runs `body` with the rig, and always stops it.
func withContractEmulator<T>(
    _ kind: ContractProvider, _ script: ContractScript = .init(),
    _ body: (ContractRig) async throws -> T
) async throws -> T {
    let rig = try ContractRig.start(kind, script)
    defer { rig.stop() }
    return try await body(rig)
}
