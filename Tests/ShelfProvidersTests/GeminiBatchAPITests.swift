import Foundation
import Logging
import ShelfCore
import ShelfHTTP
import ShelfProviders
import ShelfTesting
import Testing

@Suite("Gemini Batch API wire format", .timeLimit(.minutes(1)))
struct GeminiBatchAPITests {
    func client(_ baseURL: String = "http://127.0.0.1:9") -> GeminiBatchAPIClient {
        GeminiBatchAPIClient(
            settings: GeminiSettings(
                model: "gemini-2.5-flash", baseURL: baseURL, apiKey: Secret(testKey), timeout: .seconds(10)),
            http: HTTPClient(maxConcurrent: 2), logger: Logger(label: "test"))
    }

    func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require((try JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any])
    }

    @Test(
        "Inline requests: batch.displayName, inputConfig.requests.requests[] of {request, metadata.key}, each the generateContent body"
    )
    func inlineBody() throws {
        let client = client()
        let photo = fakePhoto("a")
        let body = try json(client.inlineBody(displayName: "shelfd-1-x", requests: [.init(key: "job-7", photo: photo)]))
        let batch = try #require(body["batch"] as? [String: Any])
        #expect(batch["displayName"] as? String == "shelfd-1-x")
        let items = try #require(
            ((batch["inputConfig"] as? [String: Any])?["requests"] as? [String: Any])?["requests"] as? [[String: Any]])
        #expect(items.count == 1)
        #expect((items[0]["metadata"] as? [String: Any])?["key"] as? String == "job-7")
        let single = try json(client.provider.requestBody(for: photo))
        let request = try #require(items[0]["request"] as? [String: Any])
        #expect(NSDictionary(dictionary: request).isEqual(to: single)) // one request shape, Batch API job or not
    }

    @Test(
        "The JSONL input file: one {key, request} per line; a Batch API job from a file names it in inputConfig.fileName"
    )
    func jsonlAndFileBody() throws {
        let client = client()
        let text = String(
            decoding: try client.jsonl([
                .init(key: "job-1", photo: fakePhoto("1")), .init(key: "job-2", photo: fakePhoto("2")),
            ]),
            as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2 && text.hasSuffix("\n"))
        let first = try json(Array(lines[0].utf8))
        #expect(first["key"] as? String == "job-1" && first["request"] is [String: Any])
        let body = try json(client.fileBody(displayName: "d", file: "files/abc"))
        #expect(
            ((body["batch"] as? [String: Any])?["inputConfig"] as? [String: Any])?["fileName"] as? String == "files/abc"
        )
    }

    @Test(
        "An Operation is read: name, metadata.state (BATCH_STATE_*), inlined responses by metadata key, or the responses file"
    )
    func operationParsing() throws {
        let inline = """
            {"name": "batches/abc", "done": true,
             "metadata": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
                          "displayName": "shelfd-3-q", "state": "BATCH_STATE_SUCCEEDED",
                          "output": {"inlinedResponses": {"inlinedResponses": [
                             {"response": {"candidates": [{"content": {"parts": [{"text": "{}"}]}, "finishReason": "STOP"}]},
                              "metadata": {"key": "job-1"}},
                             {"error": {"code": 400, "message": "bad image", "status": "INVALID_ARGUMENT"}, "metadata": {"key": "job-2"}}]}}}}
            """
        let status = try GeminiBatchAPIClient.status(from: Array(inline.utf8))
        #expect(status.name == "batches/abc" && status.displayName == "shelfd-3-q" && status.state == .succeeded)
        let lines = try #require(status.inlined)
        #expect(lines.count == 2)
        if case .response(let key, let body) = lines[0] {
            #expect(key == "job-1")
            #expect(try json(body)["candidates"] != nil)
        } else {
            Issue.record("the first line is a response")
        }
        #expect(lines[1] == .error(key: "job-2", code: 400, status: "INVALID_ARGUMENT", message: "bad image"))

        let file = """
            {"name": "batches/def", "metadata": {"state": "BATCH_STATE_SUCCEEDED"}, "response": {"responsesFile": "files/batch-def"}}
            """
        let fileStatus = try GeminiBatchAPIClient.status(from: Array(file.utf8))
        #expect(fileStatus.responsesFile == "files/batch-def" && fileStatus.inlined == nil)
        let pending = try GeminiBatchAPIClient.status(
            from: Array(#"{"name": "batches/p", "metadata": {"state": "BATCH_STATE_PENDING"}}"#.utf8))
        #expect(pending.state == .pending && !pending.state.isFinal && pending.state.word == "pending")
        for state in ["BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED"] {
            #expect(GeminiBatchAPIJobState(rawValue: state)?.isFinal == true)
        }
    }

    @Test("A results file: response lines, error lines, and a broken line that names no photo")
    func resultLines() throws {
        let text = """
            {"key": "job-1", "response": {"candidates": []}}
            {"key": "job-2", "error": {"code": 500, "message": "Internal", "status": "INTERNAL"}}
            {"key": "job-3", "resp

            """
        let lines = GeminiBatchAPIClient.lines(Array(text.utf8))
        #expect(lines.count == 3)
        #expect(lines[0].key == "job-1")
        #expect(lines[1] == .error(key: "job-2", code: 500, status: "INTERNAL", message: "Internal"))
        #expect(lines[2] == .broken(line: 3))
        // An error line is read as the same HTTP status would be: a 500 is Gemini's trouble, a 400 the photo's.
        #expect(client().error(code: 500, status: "INTERNAL", message: "x").code == .providerUnavailable)
        #expect(client().error(code: 400, status: "INVALID_ARGUMENT", message: "x").code == .providerRejected)
    }

    @Test("Against the emulator: resumable upload, create, states over time, results inline, list, cancel")
    func roundTrip() async throws {
        var script = GeminiEmulator.Script(apiKey: testKey, reply: .books([GeminiProviderTests.dune]))
        script.batchAPI = BatchAPIScript(pendingFor: .milliseconds(200), runningFor: .milliseconds(200))
        try await withGeminiEmulator(script) { gemini in
            let client = client(gemini.baseURL)
            let file = try await client.upload(
                Array("{\"key\": \"k\"}\n".utf8), displayName: "up", mimeType: "application/jsonl")
            #expect(file.hasPrefix("files/"))

            let created = try await client.create(
                displayName: "shelfd-9-z", requests: [.init(key: "job-1", photo: fakePhoto("r"))])
            #expect(created.state == .pending && created.displayName == "shelfd-9-z")
            var status = created
            let deadline = ContinuousClock.now + .seconds(10)
            while !status.state.isFinal && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                status = try await client.get(created.name)
            }
            #expect(status.state == .succeeded)
            let lines = try await client.results(of: status)
            guard case .response(let key, let body)? = lines.first else { Issue.record("no answer: \(lines)"); return }
            #expect(key == "job-1")
            let answer = try client.provider.parse(RawResponse(body: body, receivedAt: Date()))
            #expect(answer.books.map(\.title) == ["Dune"])

            #expect(try await client.list().map(\.displayName).contains("shelfd-9-z"))
            let second = try await client.create(
                displayName: "shelfd-10-z", requests: [.init(key: "job-2", photo: fakePhoto("s"))])
            try await client.cancel(second.name)
            #expect(try await client.get(second.name).state == .cancelled)
        }
    }
}
