import CCurl
import Dispatch
import Synchronization

/// `curl_global_init` exactly once, before the first handle (a lazily initialised global).
private let curlGlobalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

/// One libcurl-based async client. Blocking `curl_easy_perform` runs on `maxConcurrent` serial
/// lanes of our own, never on the cooperative pool; each lane reuses one easy handle, so
/// connections stay alive. A request waits for a free lane; cancelling its task aborts it.
package final class HTTPClient: Sendable {
    private let lanes: LanePool

    package init(maxConcurrent: Int) {
        let count = max(1, maxConcurrent)
        lanes = LanePool((0..<count).map { Lane(label: "shelfd.http.\($0)") })
    }

    package func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        guard let lane = await lanes.acquire() else { throw HTTPError(.cancelled, "cancelled before it was sent") }
        defer { lanes.release(lane) }
        let cancel = CancelFlag()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                lane.queue.async { continuation.resume(returning: lane.easy.perform(request, cancel: cancel)) }
            }
        } onCancel: {
            cancel.set()
        }
        return try result.get()
    }
}

/// A serial queue and the easy handle confined to it.
private final class Lane: @unchecked Sendable { // unchecked: `easy` is only touched on `queue`
    let queue: DispatchQueue
    /// Made for the first request, with `curl_global_init`: an idle daemon that has sent nothing keeps
    /// libcurl's TLS libraries uninitialised (a few MB of resident memory).
    lazy var easy: CurlEasy = {
        _ = curlGlobalInit; return CurlEasy()
    }()
    init(label: String) { queue = DispatchQueue(label: label) }
}

/// Free lanes and the requests waiting for one, in arrival order.
private final class LanePool: Sendable {
    private struct State {
        var free: [Lane]
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Lane?, Never>)] = []
        var nextID: UInt64 = 0
    }
    private let state: Mutex<State>

    init(_ lanes: [Lane]) { state = Mutex(State(free: lanes)) }

    /// A free lane, or nil when the task is cancelled while waiting.
    func acquire() async -> Lane? {
        let id = state.withLock { s in
            s.nextID += 1; return s.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Lane?, Never>) in
                enum Outcome { case lane(Lane), cancelled, queued }
                let outcome: Outcome = state.withLock { s in
                    if Task.isCancelled { return .cancelled }
                    if let lane = s.free.popLast() { return .lane(lane) }
                    s.waiting.append((id, continuation))
                    return .queued
                }
                switch outcome {
                case .lane(let lane): continuation.resume(returning: lane)
                case .cancelled: continuation.resume(returning: nil)
                case .queued: break
                }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Lane?, Never>? = state.withLock { s in
                guard let index = s.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiting.remove(at: index).continuation
            }
            waiter?.resume(returning: nil)
        }
    }

    func release(_ lane: Lane) {
        let waiter: CheckedContinuation<Lane?, Never>? = state.withLock { s in
            if s.waiting.isEmpty { s.free.append(lane); return nil }
            return s.waiting.removeFirst().continuation
        }
        waiter?.resume(returning: lane)
    }
}
