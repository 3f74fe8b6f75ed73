import CCurl
import Synchronization

/// Set from a task's cancellation handler, read by libcurl's progress callback on the lane's thread.
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// Owns one reusable easy handle. Not Sendable in spirit: only ever used on its lane's queue,
/// so connections stay alive in the handle's cache between requests.
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer

    init() {
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    /// Runs one transfer, blocking the calling thread until it ends.
    func perform(_ request: HTTPRequest, cancel: CancelFlag) -> Result<HTTPResponse, HTTPError> {
        let h = handle
        curl_easy_reset(h) // keeps the connection cache
        let sink = Sink(cancel: cancel)
        var headerList: UnsafeMutablePointer<curl_slist>?
        for header in request.headers { headerList = curl_slist_append(headerList, "\(header.name): \(header.value)") }
        headerList = curl_slist_append(headerList, "Expect:") // no 100-continue round trip before a body
        defer { curl_slist_free_all(headerList) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        let code: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { errorPointer in
            ccurl_setopt_string(h, CURLOPT_URL, request.url)
            ccurl_setopt_long(h, CURLOPT_NOSIGNAL, 1)
            ccurl_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, request.connectTimeout.curlMilliseconds)
            ccurl_setopt_long(h, CURLOPT_TIMEOUT_MS, request.timeout.curlMilliseconds)
            ccurl_setopt_slist(h, CURLOPT_HTTPHEADER, headerList)
            ccurl_setopt_pointer(h, CURLOPT_ERRORBUFFER, errorPointer.baseAddress)
            let context = Unmanaged.passUnretained(sink).toOpaque()
            ccurl_setopt_data_cb(h, CURLOPT_WRITEFUNCTION, CurlEasy.onBody)
            ccurl_setopt_pointer(h, CURLOPT_WRITEDATA, context)
            ccurl_setopt_data_cb(h, CURLOPT_HEADERFUNCTION, CurlEasy.onHeader)
            ccurl_setopt_pointer(h, CURLOPT_HEADERDATA, context)
            ccurl_setopt_long(h, CURLOPT_NOPROGRESS, 0)
            ccurl_setopt_xferinfo_cb(h, CurlEasy.onProgress)
            ccurl_setopt_pointer(h, CURLOPT_XFERINFODATA, context)

            let method = request.method.uppercased()
            switch method {
            case "GET" where request.body.isEmpty: ccurl_setopt_long(h, CURLOPT_HTTPGET, 1)
            case "HEAD": ccurl_setopt_long(h, CURLOPT_NOBODY, 1)
            default:
                if method != "POST" { ccurl_setopt_string(h, CURLOPT_CUSTOMREQUEST, method) }
                if method == "POST" || !request.body.isEmpty {
                    // POSTFIELDS does not copy: the buffer must stay valid until perform returns.
                    return withPostBody(request.body) { pointer, count in
                        ccurl_setopt_off_t(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(count))
                        ccurl_setopt_pointer(h, CURLOPT_POSTFIELDS, pointer)
                        return curl_easy_perform(h)
                    }
                }
            }
            return curl_easy_perform(h)
        }

        guard code == CURLE_OK else {
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            return .failure(HTTPError(Self.kind(of: code, cancelled: cancel.isSet), message))
        }
        var status = 0
        ccurl_getinfo_long(h, CURLINFO_RESPONSE_CODE, &status)
        return .success(HTTPResponse(status: status, headers: sink.headers, body: sink.body))
    }

    /// Gives libcurl a non-null pointer even for an empty body (a null POSTFIELDS means "read stdin").
    private func withPostBody<T>(_ body: [UInt8], _ work: (UnsafeMutableRawPointer, Int) -> T) -> T {
        var buffer = body.isEmpty ? [0] : body
        return buffer.withUnsafeMutableBytes { work($0.baseAddress!, body.count) }
    }

    private static func kind(of code: CURLcode, cancelled: Bool) -> HTTPError.Kind {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .connect
        case CURLE_SEND_ERROR: return .send
        case CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE: return .receive
        case CURLE_ABORTED_BY_CALLBACK where cancelled: return .cancelled
        default: return .other
        }
    }

    /// What the callbacks write into; alive for the whole transfer (a local of `perform`).
    private final class Sink {
        let cancel: CancelFlag
        var body: [UInt8] = []
        var headers: [String: String] = [:]
        init(cancel: CancelFlag) { self.cancel = cancel }
    }

    private static let onBody: ccurl_data_cb = { pointer, size, count, context in
        let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
        sink.body.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: size * count))
        return size * count
    }

    private static let onHeader: ccurl_data_cb = { pointer, size, count, context in
        let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
        let line = String(decoding: UnsafeRawBufferPointer(start: pointer, count: size * count), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            sink.headers = [:] // a new header block (after 100 Continue, say)
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].trimmingWhitespace().lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace()
            sink.headers[name] = sink.headers[name].map { "\($0), \(value)" } ?? value
        }
        return size * count
    }

    /// Non-zero aborts the transfer with CURLE_ABORTED_BY_CALLBACK. libcurl calls it at least once a second.
    private static let onProgress: ccurl_xferinfo_cb = { context, _, _, _, _ in
        Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue().cancel.isSet ? 1 : 0
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
