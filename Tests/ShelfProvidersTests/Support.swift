import Foundation
import InMemoryLogging
import Logging
import ShelfCore
import ShelfHTTP
import ShelfProviders
import ShelfTesting
import Testing

/// A key no message, description or log line may ever contain.
let testKey = "AIzaSy-test-SECRET-4242"

/// Settings of a provider that sends nothing here (it parses, or is printed): every secret set, a port nobody
/// listens on.
extension GeminiSettings {
    static let unsent = GeminiSettings(
        model: "gemini-2.5-flash", baseURL: "http://127.0.0.1:9", apiKey: Secret(testKey), timeout: .seconds(10))
}

extension CloudflareSettings {
    static let unsent = CloudflareSettings(
        model: CFModel.llama32, baseURL: "http://127.0.0.1:9", accountID: Secret(cfAccount),
        apiToken: Secret(cfToken), timeout: .seconds(10))
}

extension OpenAICompatibleSettings {
    static let unsent = OpenAICompatibleSettings(
        model: "llava", baseURL: "http://127.0.0.1:9/v1", apiKey: Secret(testKey), timeout: .seconds(10),
        maxSide: 1536, quality: 85)
}

/// A JPEG-looking photo (the emulator checks encoding and MIME type, not pixels), unique per `seed`.
func fakePhoto(_ seed: String = "shelf", size: Int = 2_000) -> PhotoUpload {
    var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array("marker:\(seed);".utf8)
    while bytes.count < size { bytes.append(UInt8(truncatingIfNeeded: bytes.count &* 7 &+ seed.utf8.count)) }
    return PhotoUpload(bytes: bytes)
}

/// Collects log lines ("level message key=value …", metadata included) so a test can prove what they hold.
final class CapturedLogs: Sendable {
    private let handler: InMemoryLogHandler

    init() {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        self.handler = handler
    }

    var logger: Logger { Logger(label: "test") { [handler] _ in handler } }

    var all: [String] {
        handler.entries.map { entry in
            "\(entry.level) \(entry.message) "
                + entry.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }
}

/// A provider pointed at the emulator.
func makeProvider(
    _ emulator: GeminiEmulator, model: String = "gemini-2.5-flash", key: String = testKey,
    timeout: Duration = .seconds(10), logs: CapturedLogs = CapturedLogs()
) -> GeminiProvider {
    GeminiProvider(
        settings: GeminiSettings(model: model, baseURL: emulator.baseURL, apiKey: Secret(key), timeout: timeout),
        http: HTTPClient(maxConcurrent: 2), logger: logs.logger)
}

/// Sends and parses one photo, the way the daemon does.
func scan(_ provider: some VisionProvider, _ photo: PhotoUpload = fakePhoto()) async throws(PhotoError) -> ModelAnswer {
    try provider.parse(try await provider.send(photo))
}

/// The PhotoError of one failing scan; records an issue if it succeeded.
func failure(_ provider: some VisionProvider, _ photo: PhotoUpload = fakePhoto()) async -> PhotoError? {
    do {
        let answer = try await scan(provider, photo)
        Issue.record("expected a PhotoError, got \(answer)")
        return nil
    } catch {
        return error
    }
}

/// A secret (a key, a token, an account id) appears in no message, description or log line.
func expectNoSecrets(
    _ secrets: [String], in error: PhotoError, _ logs: CapturedLogs,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    for secret in secrets {
        #expect(!error.message.contains(secret), sourceLocation: sourceLocation)
        #expect(!"\(error)".contains(secret), sourceLocation: sourceLocation)
        #expect(!String(reflecting: error).contains(secret), sourceLocation: sourceLocation)
        #expect(!logs.all.contains { $0.contains(secret) }, sourceLocation: sourceLocation)
    }
}

/// One failing scan whose pause lasts `seconds`, counted from when the answer arrived (somewhere between
/// sending and failing); returns the error for the caller's own checks.
@discardableResult
func expectPause(
    _ provider: some VisionProvider, seconds: Double,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> PhotoError {
    let before = Date()
    let error = try #require(await failure(provider), sourceLocation: sourceLocation)
    let after = Date()
    let until = try #require(
        error.disposition.waitUntil, "\(error.code): \(error.message)", sourceLocation: sourceLocation)
    #expect(
        until >= before.addingTimeInterval(seconds) && until <= after.addingTimeInterval(seconds),
        sourceLocation: sourceLocation)
    return error
}

/// A scripted failure and what a provider must make of it: the code, a disposition `check` accepts,
/// and phrases its message must hold.
struct FailureCase<Reply: Sendable>: Sendable, CustomTestStringConvertible {
    var reply: Reply
    var code: PhotoError.Code
    var check: @Sendable (PhotoError.Disposition) -> Bool
    var says: [String] = []
    var testDescription: String
}

/// One failing scan: the case's code and disposition, a message that says something (each phrase it
/// must), and no secret in the message, the error or the logs.
func expectFailure<Reply>(
    _ testCase: FailureCase<Reply>, from provider: some VisionProvider, secrets: [String],
    logs: CapturedLogs, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let error = try #require(await failure(provider), sourceLocation: sourceLocation)
    #expect(error.code == testCase.code, "\(error)", sourceLocation: sourceLocation)
    #expect(testCase.check(error.disposition), "\(error.disposition)", sourceLocation: sourceLocation)
    #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
    for phrase in testCase.says {
        #expect(error.message.contains(phrase), "\(error.message)", sourceLocation: sourceLocation)
    }
    expectNoSecrets(secrets, in: error, logs, sourceLocation: sourceLocation)
}

extension PhotoError.Disposition {
    var isRetry: Bool { if case .retry = self { true } else { false } }
    var retryAfter: TimeInterval? { if case .retry(let after) = self { after } else { nil } }
    var waitUntil: Date? { if case .providerWait(let until) = self { until } else { nil } }
}
