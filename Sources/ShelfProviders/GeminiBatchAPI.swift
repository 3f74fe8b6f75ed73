import Foundation
package import Logging
package import ShelfCore
package import ShelfHTTP

/// A Gemini Batch API job's state, as the REST API spells it (`BATCH_STATE_*`).
package enum GeminiBatchAPIJobState: String, Sendable, Codable, CaseIterable {
    case unspecified = "BATCH_STATE_UNSPECIFIED"
    case pending = "BATCH_STATE_PENDING"
    case running = "BATCH_STATE_RUNNING"
    case succeeded = "BATCH_STATE_SUCCEEDED"
    case failed = "BATCH_STATE_FAILED"
    case cancelled = "BATCH_STATE_CANCELLED"
    case expired = "BATCH_STATE_EXPIRED"

    /// Nothing will change any more.
    package var isFinal: Bool { [.succeeded, .failed, .cancelled, .expired].contains(self) }
    /// "pending", "succeeded": for a person and the queue's `batch_api_job` table.
    package var word: String { String(rawValue.dropFirst("BATCH_STATE_".count)).lowercased() }
}

/// What `GET v1beta/batches/{id}` (or the create or list answers) say of a Batch API job.
package struct GeminiBatchAPIJobStatus: Sendable, Equatable {
    /// `batches/{id}`.
    package var name: String
    package var displayName: String?
    package var state: GeminiBatchAPIJobState
    /// The answers inline (`output.inlinedResponses`), when the job was small enough.
    package var inlined: [GeminiBatchAPIJobLine]?
    /// `files/…` holding the answers as JSONL (`output.responsesFile`).
    package var responsesFile: String?
}

/// One photo's line of a Batch API job's results.
package enum GeminiBatchAPIJobLine: Sendable, Equatable {
    /// A `GenerateContentResponse`, exactly as a synchronous request would have answered.
    case response(key: String, body: [UInt8])
    /// The request failed: `google.rpc.Status`.
    case error(key: String, code: Int, status: String?, message: String)
    /// A line that is not JSON or has no key: whichever photo it was stays unanswered.
    case broken(line: Int)

    package var key: String? {
        switch self {
        case .response(let key, _), .error(let key, _, _, _): key
        case .broken: nil
        }
    }
}

/// The Gemini Batch API (`batchGenerateContent`, `batches/*`) and the Files API's resumable upload and download:
/// the same request per photo as `GeminiProvider`, half the price, answered within hours.
package struct GeminiBatchAPIClient: Sendable {
    package let provider: GeminiProvider
    /// The Batch API's own, logged as `gemini-batch`.
    private let link: HTTPLink

    /// A Batch API job's requests inline must stay under 20 MB in all; above, they go as a JSONL file.
    package static let inlineRequestsLimit = 20 * 1024 * 1024

    package init(settings: GeminiSettings, http: HTTPClient, logger: Logger, time: TimeSource = .system) {
        provider = GeminiProvider(settings: settings, http: http, logger: logger, time: time)
        link = HTTPLink(provider: "gemini-batch", model: settings.model, http: http, logger: logger, time: time)
    }

    private var base: String { provider.settings.baseURL.withoutTrailingSlashes }

    private var modelPath: String {
        let model = provider.settings.model
        return model.hasPrefix("models/") ? model : "models/\(model)"
    }

    // MARK: Building

    /// A photo's request, keyed so its answer finds its way back.
    package struct Request: Sendable {
        package var key: String
        package var photo: PhotoUpload
        package init(key: String, photo: PhotoUpload) { self.key = key; self.photo = photo }
    }

    /// The whole `batchGenerateContent` body with the requests inline.
    package func inlineBody(displayName: String, requests: [Request]) throws(PhotoError) -> [UInt8] {
        var items: [[String: Any]] = []
        for request in requests {
            items.append(["request": try provider.requestObject(for: request.photo), "metadata": ["key": request.key]])
        }
        return try GeminiProvider.serialize([
            "batch": [
                "displayName": displayName, "inputConfig": ["requests": ["requests": items]],
            ] as [String: Any]
        ])
    }

    /// The JSONL input file: one `{"key": …, "request": GenerateContentRequest}` a line.
    package func jsonl(_ requests: [Request]) throws(PhotoError) -> [UInt8] {
        var bytes: [UInt8] = []
        for request in requests {
            bytes += try GeminiProvider.serialize([
                "key": request.key, "request": try provider.requestObject(for: request.photo),
            ])
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// The `batchGenerateContent` body naming an uploaded input file.
    package func fileBody(displayName: String, file: String) throws(PhotoError) -> [UInt8] {
        try GeminiProvider.serialize([
            "batch": ["displayName": displayName, "inputConfig": ["fileName": file]] as [String: Any]
        ])
    }

    // MARK: Calls

    /// Submits the requests as one Batch API job: inline under 20 MB, else through an uploaded JSONL file.
    package func create(displayName: String, requests: [Request]) async throws(PhotoError) -> GeminiBatchAPIJobStatus {
        // Each photo's base64 and a few kilobytes of prompt and schema: a Batch API job clearly over the limit is never
        // built inline.
        let estimate = requests.reduce(0) { $0 + ($1.photo.bytes.count + 2) / 3 * 4 + 8_192 }
        var body =
            estimate < Self.inlineRequestsLimit ? try inlineBody(displayName: displayName, requests: requests) : []
        if body.isEmpty || body.count >= Self.inlineRequestsLimit {
            let file = try await upload(try jsonl(requests), displayName: displayName, mimeType: "application/jsonl")
            body = try fileBody(displayName: displayName, file: file)
        }
        let response = try await call("POST", "\(base)/v1beta/\(modelPath):batchGenerateContent", body: body)
        return try Self.status(from: response.body)
    }

    /// `GET v1beta/batches/{id}`.
    package func get(_ name: String) async throws(PhotoError) -> GeminiBatchAPIJobStatus {
        try Self.status(from: try await call("GET", "\(base)/v1beta/\(name)").body)
    }

    /// Every Batch API job of the project, following the pages.
    package func list() async throws(PhotoError) -> [GeminiBatchAPIJobStatus] {
        var all: [GeminiBatchAPIJobStatus] = []
        var token: String?
        repeat {
            let page =
                token.map { "&pageToken=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" }
                ?? ""
            let response = try await call("GET", "\(base)/v1beta/batches?pageSize=100\(page)")
            let object = Self.object(response.body) ?? [:]
            for operation in object["operations"] as? [[String: Any]] ?? [] {
                if let status = Self.status(from: operation) { all.append(status) }
            }
            token = (object["nextPageToken"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        } while token != nil
        return all
    }

    /// `POST v1beta/batches/{id}:cancel`.
    package func cancel(_ name: String) async throws(PhotoError) {
        _ = try await call("POST", "\(base)/v1beta/\(name):cancel", body: Array("{}".utf8))
    }

    /// The answers of a finished Batch API job: inline, or the responses file downloaded.
    package func results(of status: GeminiBatchAPIJobStatus) async throws(PhotoError) -> [GeminiBatchAPIJobLine] {
        if let inlined = status.inlined { return inlined }
        guard let file = status.responsesFile else { return [] }
        let response = try await call("GET", "\(base)/download/v1beta/\(file):download?alt=media")
        return Self.lines(response.body)
    }

    /// The Files API's resumable upload: a start request, then the bytes with `upload, finalize`. Returns `files/…`.
    package func upload(_ bytes: [UInt8], displayName: String, mimeType: String) async throws(PhotoError) -> String {
        let start = try await call(
            "POST", "\(base)/upload/v1beta/files",
            body: try GeminiProvider.serialize(
                ["file": ["display_name": displayName]]),
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                ("X-Goog-Upload-Header-Content-Length", "\(bytes.count)"),
                ("X-Goog-Upload-Header-Content-Type", mimeType),
            ])
        guard let url = start.header("x-goog-upload-url") else {
            throw PhotoError(
                .providerNonsense,
                "Gemini's Files API gave no upload URL. The Batch API job will be submitted again later.",
                disposition: .retry(after: nil))
        }
        let done = try await call(
            "POST", url, body: bytes,
            headers: [
                ("X-Goog-Upload-Offset", "0"), ("X-Goog-Upload-Command", "upload, finalize"),
            ], contentType: nil)
        guard let file = (Self.object(done.body)?["file"] as? [String: Any])?["name"] as? String else {
            throw PhotoError(
                .providerNonsense,
                "Gemini's Files API did not name the uploaded file. The Batch API job will be submitted again later.",
                disposition: .retry(after: nil))
        }
        return file
    }

    private func call(
        _ method: String, _ url: String, body: [UInt8] = [], headers: [(name: String, value: String)] = [],
        contentType: String? = "application/json"
    ) async throws(PhotoError) -> HTTPResponse {
        var all = headers + [("x-goog-api-key", provider.settings.apiKey.value)]
        if let contentType, !body.isEmpty { all.append(("Content-Type", contentType)) }
        let request = HTTPRequest(
            method: method, url: url, headers: all, body: body, timeout: provider.settings.timeout)
        let response: HTTPResponse
        do {
            (response, _) = try await link.exchange(request)
        } catch {
            throw provider.networkError(error)
        }
        guard response.status == 200 else { throw provider.classify(response, now: link.time.now) }
        return response
    }

    // MARK: Parsing

    /// A Batch API job from an `Operation` (`name`, `metadata.state`, `metadata.output` or `response`) or a bare
    /// `GenerateContentBatch`.
    package static func status(from bytes: [UInt8]) throws(PhotoError) -> GeminiBatchAPIJobStatus {
        guard let object = object(bytes), let status = status(from: object) else {
            throw PhotoError(
                .providerNonsense,
                "Gemini's answer about a Batch API job (\(bytes.count) bytes) was not a Batch API job. "
                    + "It is asked again later; check [gemini] base_url.", disposition: .retry(after: nil))
        }
        return status
    }

    static func status(from operation: [String: Any]) -> GeminiBatchAPIJobStatus? {
        guard let name = operation["name"] as? String else { return nil }
        let batch = operation["metadata"] as? [String: Any] ?? operation
        let state = (batch["state"] as? String).flatMap(GeminiBatchAPIJobState.init(rawValue:)) ?? .unspecified
        let output = batch["output"] as? [String: Any] ?? operation["response"] as? [String: Any] ?? [:]
        var inlined: [GeminiBatchAPIJobLine]?
        if let wrapper = output["inlinedResponses"] as? [String: Any],
            let items = wrapper["inlinedResponses"] as? [[String: Any]]
        {
            inlined = items.enumerated().map { index, item in
                // Each answer carries the metadata its request was sent with; without it, the order tells.
                let key =
                    (item["metadata"] as? [String: Any])?["key"] as? String ?? item["key"] as? String ?? "#\(index)"
                return line(item, key: key, number: index + 1)
            }
        }
        return GeminiBatchAPIJobStatus(
            name: name, displayName: batch["displayName"] as? String, state: state, inlined: inlined,
            responsesFile: output["responsesFile"] as? String)
    }

    /// The results file: one `{"key": …, "response": {…}}` or `{"key": …, "error": {…}}` a line.
    package static func lines(_ bytes: [UInt8]) -> [GeminiBatchAPIJobLine] {
        var lines: [GeminiBatchAPIJobLine] = []
        var number = 0
        for text in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            if text.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
            guard let item = object(Array(text)), let key = item["key"] as? String else {
                lines.append(.broken(line: number))
                continue
            }
            lines.append(line(item, key: key, number: number))
        }
        return lines
    }

    private static func line(_ item: [String: Any], key: String, number: Int) -> GeminiBatchAPIJobLine {
        if let response = item["response"] as? [String: Any],
            let body = try? JSONSerialization.data(withJSONObject: response, options: [.withoutEscapingSlashes])
        {
            return .response(key: key, body: [UInt8](body))
        }
        if let error = item["error"] as? [String: Any] {
            return .error(
                key: key, code: error["code"] as? Int ?? 0, status: error["status"] as? String,
                message: error["message"] as? String ?? "")
        }
        return .broken(line: number)
    }

    private static func object(_ bytes: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    /// What an error line means for its photo: the provider's reading of the same HTTP status.
    package func error(code: Int, status: String?, message: String) -> PhotoError {
        let body =
            (try? GeminiProvider.serialize(["error": ["code": code, "status": status ?? "", "message": message]])) ?? []
        return provider.classify(HTTPResponse(status: code == 0 ? 500 : code, body: body), now: link.time.now)
    }
}
