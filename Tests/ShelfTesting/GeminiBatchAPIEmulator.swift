import Foundation
import ShelfDigest
import Synchronization

// The Gemini Batch API and the Files API on the Gemini emulator's server (they share shelfd's `[gemini] base_url`):
// resumable upload (`/upload/v1beta/files`, start then `upload, finalize`), `models/{m}:batchGenerateContent` with
// inline requests or an uploaded JSONL file, `GET batches/{id}` whose state moves PENDING → RUNNING → a final
// state after the script's delays, results inline (`output.inlinedResponses`) or as a file
// (`output.responsesFile`, `GET /download/v1beta/files/…:download?alt=media`), error lines, cancel and list.
// Each request of a Batch API job is answered by the same script and checks as a `generateContent` request.

/// How the emulated Batch API behaves.
package struct BatchAPIScript: Sendable {
    /// Time a new Batch API job spends in BATCH_STATE_PENDING, then in BATCH_STATE_RUNNING.
    package var pendingFor: Duration = .milliseconds(300)
    package var runningFor: Duration = .milliseconds(700)
    /// The final state of the first, second … Batch API job created (`BATCH_STATE_EXPIRED`, `BATCH_STATE_FAILED`);
    /// later ones succeed.
    package var outcomes: [String] = []
    /// Results as a JSONL file even for inline requests (the real API answers a file input with a file).
    package var resultsAsFile = false
    /// Batch API jobs (1 = the first created) whose first result line is cut in half: not JSON.
    package var brokenFirstLine: Set<Int> = []
    /// Batch API jobs whose first result line is an error (`{"key": …, "error": {500 INTERNAL}}`).
    package var errorFirstLine: Set<Int> = []

    package init(
        pendingFor: Duration = .milliseconds(300), runningFor: Duration = .milliseconds(700), outcomes: [String] = [],
        resultsAsFile: Bool = false, brokenFirstLine: Set<Int> = [], errorFirstLine: Set<Int> = []
    ) {
        self.pendingFor = pendingFor; self.runningFor = runningFor; self.outcomes = outcomes
        self.resultsAsFile = resultsAsFile; self.brokenFirstLine = brokenFirstLine; self.errorFirstLine = errorFirstLine
    }
}

/// One Batch API job as the emulator keeps it.
package struct EmulatedBatchAPIJob: Sendable {
    package var id: String
    package var ordinal: Int
    package var displayName: String
    package var model: String
    package var created: Date
    package var cancelled: Date?
    /// The keys of its requests, in order.
    package var keys: [String]
    /// The photos' hashes, in order.
    package var photos: [String]
    /// Each request's answer: a result line without its key, as JSON.
    var answers: [String] = []
    var fromFile: Bool

    package var name: String { "batches/\(id)" }
}

/// The Batch and Files APIs' state.
package struct BatchAPIWorld: Sendable {
    package var jobs: [EmulatedBatchAPIJob] = []
    /// `files/…` → bytes.
    var files: [String: [UInt8]] = [:]
    /// Uploads started: id → display name.
    var uploads: [String: String] = [:]
    var counter = 0

    mutating func nextID() -> String {
        counter += 1
        return String(format: "%06d", counter)
            + String((0..<6).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
    }
}

extension GeminiEmulator {
    /// Batch API jobs created so far (each `batchGenerateContent` that was accepted).
    package var batchAPIJobsCreated: [EmulatedBatchAPIJob] { host.read { $0.batchAPI.jobs } }

    /// The Batch API job's state a client sees now.
    package func batchAPIJobState(_ name: String) -> String? {
        host.read { state in
            state.batchAPI.jobs.first { $0.name == name }.map {
                Self.state(of: $0, script: state.script.batchAPI, now: state.script.now)
            }
        }
    }

    static func isBatchAPIPath(_ path: String) -> Bool {
        path.hasPrefix("/upload/v1beta/files") || path.hasPrefix("/download/v1beta/files/")
            || path.hasPrefix("/v1beta/batches")
            || (path.hasPrefix("/v1beta/models/") && path.hasSuffix(":batchGenerateContent"))
    }

    static func handleBatchAPI(_ request: RecordedRequest, shared: ScriptedServer<State>.Shared) -> HTTPServer.Response
    {
        let path = request.path
        switch (request.method, path) {
        case ("POST", "/upload/v1beta/files"):
            return upload(request, shared: shared)
        case ("POST", let p) where p.hasSuffix(":batchGenerateContent"):
            let model = String(p.dropFirst("/v1beta/models/".count).dropLast(":batchGenerateContent".count))
            return create(request, model: model, shared: shared)
        case ("GET", "/v1beta/batches"):
            return shared.update { s in
                let operations = s.batchAPI.jobs.reversed().map {
                    operation($0, script: s.script.batchAPI, withOutput: false, now: s.script.now)
                }
                return .json(json(["operations": Array(operations)]))
            }
        case ("GET", let p) where p.hasPrefix("/v1beta/batches/"):
            let name = String(p.dropFirst("/v1beta/".count))
            return shared.update { s in
                guard let batch = s.batchAPI.jobs.first(where: { $0.name == name }) else { return notFound(name) }
                if state(of: batch, script: s.script.batchAPI, now: s.script.now) == "BATCH_STATE_SUCCEEDED",
                    resultsInFile(batch, s.script.batchAPI)
                {
                    s.batchAPI.files["files/batch-\(batch.id)"] = resultLines(batch, script: s.script.batchAPI)
                }
                return .json(json(operation(batch, script: s.script.batchAPI, withOutput: true, now: s.script.now)))
            }
        case ("POST", let p) where p.hasPrefix("/v1beta/batches/") && p.hasSuffix(":cancel"):
            let name = String(p.dropFirst("/v1beta/".count).dropLast(":cancel".count))
            return shared.update { s in
                guard let index = s.batchAPI.jobs.firstIndex(where: { $0.name == name }) else {
                    return notFound(name)
                }
                if !state(of: s.batchAPI.jobs[index], script: s.script.batchAPI, now: s.script.now).hasSuffix(
                    "SUCCEEDED")
                {
                    s.batchAPI.jobs[index].cancelled = s.batchAPI.jobs[index].cancelled ?? s.script.now
                }
                return .json("{}")
            }
        case ("GET", let p) where p.hasPrefix("/download/v1beta/files/") && p.hasSuffix(":download"):
            let file = String(p.dropFirst("/download/v1beta/".count).dropLast(":download".count))
            guard request.query["alt"] == "media" else {
                return errorResponse(400, "INVALID_ARGUMENT", "Downloads need alt=media.")
            }
            return shared.update { s in
                guard let bytes = s.batchAPI.files[file] else { return notFound(file) }
                return HTTPServer.Response(
                    status: 200, headers: [("Content-Type", "application/octet-stream")], body: bytes)
            }
        default:
            return errorResponse(404, "NOT_FOUND", "Method not found.")
        }
    }

    // MARK: Files API

    private static func upload(_ request: RecordedRequest, shared: ScriptedServer<State>.Shared) -> HTTPServer.Response
    {
        if let uploadID = request.query["upload_id"] {
            guard request.header("x-goog-upload-command") == "upload, finalize",
                request.header("x-goog-upload-offset") == "0"
            else {
                return errorResponse(
                    400, "INVALID_ARGUMENT", "Expected X-Goog-Upload-Command: upload, finalize at offset 0.")
            }
            return shared.update { s in
                guard let displayName = s.batchAPI.uploads.removeValue(forKey: uploadID) else {
                    return notFound("upload \(uploadID)")
                }
                let name = "files/\(s.batchAPI.nextID())"
                s.batchAPI.files[name] = request.body
                return .json(
                    json([
                        "file": [
                            "name": name, "displayName": displayName, "mimeType": "application/jsonl",
                            "sizeBytes": "\(request.body.count)",
                            "createTime": iso(s.script.now),
                            "expirationTime": iso(s.script.now.addingTimeInterval(172_800)),
                            "uri": "\(shared.baseURL.withLock { $0 })/v1beta/\(name)", "state": "ACTIVE",
                        ] as [String: Any]
                    ]))
            }
        }
        guard request.header("x-goog-upload-protocol") == "resumable",
            request.header("x-goog-upload-command") == "start",
            request.header("x-goog-upload-header-content-length").flatMap(Int.init) != nil
        else {
            return errorResponse(
                400, "INVALID_ARGUMENT",
                "Start a resumable upload: X-Goog-Upload-Protocol: resumable, "
                    + "X-Goog-Upload-Command: start, X-Goog-Upload-Header-Content-Length.")
        }
        let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
        let file = body?["file"] as? [String: Any]
        let displayName = (file?["display_name"] ?? file?["displayName"]) as? String ?? ""
        let id = shared.update { s in
            let id = s.batchAPI.nextID()
            s.batchAPI.uploads[id] = displayName
            return id
        }
        let url = "\(shared.baseURL.withLock { $0 })/upload/v1beta/files?upload_id=\(id)&upload_protocol=resumable"
        return HTTPServer.Response(
            status: 200,
            headers: [
                ("X-Goog-Upload-URL", url), ("X-Goog-Upload-Status", "active"),
                ("Content-Type", "application/json"),
            ], text: "")
    }

    // MARK: Batches

    private static func create(_ request: RecordedRequest, model: String, shared: ScriptedServer<State>.Shared)
        -> HTTPServer.Response
    {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any],
            let batch = root["batch"] as? [String: Any]
        else {
            return errorResponse(400, "INVALID_ARGUMENT", "Invalid JSON payload received: no batch.")
        }
        guard let displayName = batch["displayName"] as? String, !displayName.isEmpty else {
            return errorResponse(400, "INVALID_ARGUMENT", "batch.display_name is required.")
        }
        guard let input = batch["inputConfig"] as? [String: Any] else {
            return errorResponse(400, "INVALID_ARGUMENT", "batch.input_config is required.")
        }
        // (key, request JSON bytes)
        var requests: [(String, [UInt8])] = []
        var fromFile = false
        if let file = input["fileName"] as? String {
            fromFile = true
            guard let bytes = shared.update({ $0.batchAPI.files[file] }) else { return notFound(file) }
            for (number, line) in bytes.split(separator: UInt8(ascii: "\n")).enumerated() {
                guard let item = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any],
                    let key = item["key"] as? String, let inner = item["request"],
                    let body = try? JSONSerialization.data(withJSONObject: inner)
                else {
                    return errorResponse(
                        400, "INVALID_ARGUMENT", "Line \(number + 1) of \(file) is not {\"key\", \"request\"}.")
                }
                requests.append((key, [UInt8](body)))
            }
        } else if let wrapper = input["requests"] as? [String: Any], let items = wrapper["requests"] as? [[String: Any]]
        {
            for (index, item) in items.enumerated() {
                guard let inner = item["request"], let body = try? JSONSerialization.data(withJSONObject: inner) else {
                    return errorResponse(400, "INVALID_ARGUMENT", "requests[\(index)] has no request.")
                }
                let key = (item["metadata"] as? [String: Any])?["key"] as? String ?? "\(index)"
                requests.append((key, [UInt8](body)))
            }
        } else {
            return errorResponse(400, "INVALID_ARGUMENT", "input_config needs requests or file_name.")
        }
        // Each request is checked and answered as a generateContent request would be.
        var images: [(String, [UInt8], String)] = []
        for (key, body) in requests {
            switch validate(body, model: model) {
            case .failure(let violation): return badRequest(violation)
            case .success(let image): images.append((key, image, SHA256.hex(of: image)))
            }
        }
        return shared.update { s in
            var made = EmulatedBatchAPIJob(
                id: s.batchAPI.nextID(), ordinal: s.batchAPI.jobs.count + 1, displayName: displayName,
                model: model, created: s.script.now, keys: images.map(\.0), photos: images.map(\.2),
                fromFile: fromFile)
            for (_, image, sha) in images {
                let (reply, _) = s.progress.reply(
                    rules: s.script.rules, fallback: s.script.reply, latency: .zero, image: image, sha256: sha)
                let rendered = render(reply, model: model)
                let object = (try? JSONSerialization.jsonObject(with: Data(rendered.body))) as? [String: Any] ?? [:]
                if rendered.status == 200 {
                    made.answers.append(json(["response": object]))
                } else {
                    made.answers.append(
                        json(["error": object["error"] ?? ["code": rendered.status, "message": "failed"]]))
                }
            }
            s.batchAPI.jobs.append(made)
            return .json(json(operation(made, script: s.script.batchAPI, withOutput: false, now: s.script.now)))
        }
    }

    static func state(of batch: EmulatedBatchAPIJob, script: BatchAPIScript, now: Date) -> String {
        if batch.cancelled != nil { return "BATCH_STATE_CANCELLED" }
        let age = now.timeIntervalSince(batch.created)
        if age < seconds(script.pendingFor) { return "BATCH_STATE_PENDING" }
        if age < seconds(script.pendingFor + script.runningFor) { return "BATCH_STATE_RUNNING" }
        return batch.ordinal <= script.outcomes.count ? script.outcomes[batch.ordinal - 1] : "BATCH_STATE_SUCCEEDED"
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private static func resultsInFile(_ batch: EmulatedBatchAPIJob, _ script: BatchAPIScript) -> Bool {
        batch.fromFile || script.resultsAsFile
    }

    /// An `Operation` whose metadata is the `GenerateContentBatch`; a succeeded one carries its output (as the real API
    /// does, in `metadata.output` and in `response`).
    private static func operation(_ batch: EmulatedBatchAPIJob, script: BatchAPIScript, withOutput: Bool, now: Date)
        -> [String:
        Any]
    {
        let state = state(of: batch, script: script, now: now)
        let finished = ["BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED"]
            .contains(state)
        var metadata: [String: Any] = [
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": "models/\(batch.model)", "displayName": batch.displayName, "state": state,
            "createTime": iso(batch.created), "updateTime": iso(now),
            "batchStats": [
                "requestCount": "\(batch.keys.count)", "pendingRequestCount": finished ? "0" : "\(batch.keys.count)",
            ],
        ]
        var operation: [String: Any] = ["name": batch.name, "done": finished]
        if withOutput && state == "BATCH_STATE_SUCCEEDED" {
            var output: [String: Any] = [
                "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"
            ]
            if resultsInFile(batch, script) {
                output["responsesFile"] = "files/batch-\(batch.id)"
            } else {
                let items = zip(batch.keys, lines(batch, script: script)).map { key, line -> [String: Any] in
                    var item = line
                    item["metadata"] = ["key": key]
                    return item
                }
                output["inlinedResponses"] = ["inlinedResponses": items]
            }
            metadata["output"] = output
            operation["response"] = output
        }
        operation["metadata"] = metadata
        return operation
    }

    /// The answers, with the script's error line applied (inline answers cannot be broken: they are JSON).
    private static func lines(_ batch: EmulatedBatchAPIJob, script: BatchAPIScript) -> [[String: Any]] {
        var answers = batch.answers.map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
        }
        if script.errorFirstLine.contains(batch.ordinal), !answers.isEmpty {
            answers[0] = ["error": ["code": 500, "message": "Internal error encountered.", "status": "INTERNAL"]]
        }
        return answers
    }

    private static func resultLines(_ batch: EmulatedBatchAPIJob, script: BatchAPIScript) -> [UInt8] {
        var text = ""
        for (index, (key, answer)) in zip(batch.keys, lines(batch, script: script)).enumerated() {
            var line = answer
            line["key"] = key
            var encoded = json(line)
            if index == 0 && script.brokenFirstLine.contains(batch.ordinal) {
                encoded = String(encoded.prefix(encoded.count / 2))
            }
            text += encoded.replacingOccurrences(of: "\n", with: "") + "\n"
        }
        return Array(text.utf8)
    }

    private static func notFound(_ what: String) -> HTTPServer.Response {
        errorResponse(404, "NOT_FOUND", "Requested entity was not found: \(what)")
    }

    private static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
