import Foundation
import ShelfCore
import Synchronization

extension HTTPServer.Response {
    /// A JSON answer built from plain dictionaries and arrays (keys sorted, slashes unescaped).
    package static func json(object: Any, status: Int = 200, headers: [(name: String, value: String)] = []) -> Self {
        .json(emulatorJSON(object), status: status, headers: headers)
    }
}

/// The words an emulated search compares, folded the way shelfd folds what it asks.
func searchWords(_ text: String) -> Set<String> {
    Set(TextNormalization.fold(text).split(separator: " ").map(String.init))
}

/// What an emulator keeps between requests, behind its server's lock: the script, how far its replies
/// have got, and its log of the requests it answered.
package protocol EmulatorState: Sendable {
    associatedtype Script: Sendable
    associatedtype Entry: Sendable
    init(script: Script)
    var script: Script { get }
    /// The requests answered so far, in arrival order, as the emulator describes them.
    var log: [Entry] { get set }
    /// Takes a new script; its replies start again from the first.
    mutating func replace(script: Script)
}

/// What every emulator shares: a loopback server, a state (script, progress, log) shared with the
/// server's connection threads, and a way to replace the script. `respond` gets each request and the
/// shared state; it reads the script and logs what it answered.
package final class ScriptedServer<State: EmulatorState>: Sendable {
    /// The state and the server's base URL, shared with the connection threads.
    final class Shared: Sendable {
        let state: Mutex<State>
        let baseURL = Mutex("")
        init(_ state: State) { self.state = Mutex(state) }

        /// The current script.
        var script: State.Script { state.withLock { $0.script } }

        /// Adds one answered request to the log.
        func log(_ entry: State.Entry) { state.withLock { $0.log.append(entry) } }

        /// Reads or changes the state under its lock.
        func update<Value: Sendable>(_ body: (inout State) -> Value) -> Value { state.withLock { body(&$0) } }
    }

    private let shared: Shared
    private let server: HTTPServer

    init(script: State.Script, respond: @escaping @Sendable (RecordedRequest, Shared) -> HTTPServer.Response) {
        let shared = Shared(State(script: script))
        self.shared = shared
        server = HTTPServer { request in respond(request, shared) }
    }

    func start() throws {
        try server.start()
        shared.baseURL.withLock { $0 = server.baseURL }
    }

    func stop() { server.stop() }
    var baseURL: String { server.baseURL }
    var log: [State.Entry] { shared.state.withLock { $0.log } }
    func setScript(_ script: State.Script) { shared.state.withLock { $0.replace(script: script) } }
    /// A value read from the state under its lock.
    func read<Value: Sendable>(_ body: (State) -> Value) -> Value { shared.state.withLock { body($0) } }

    /// An outage on the same port: connections are cut and refused (accepted and closed at once) until
    /// `setDown(false)`; `droppedConnections` counts the attempts made meanwhile.
    func setDown(_ down: Bool) { server.setDown(down) }
    var droppedConnections: Int { server.droppedConnections }
    /// The most requests answered at the same moment.
    var maxConcurrentRequests: Int { server.maxConcurrentRequests }
}

/// A script whose first requests get scripted replies, in order, and every later one `then`.
package protocol ScriptedReplies: Sendable {
    associatedtype Reply: Sendable
    var replies: [Reply] { get }
    var then: Reply { get }
}

/// The book services' state: replies used in order, and the requests as received.
package struct RepliesInOrder<Script: ScriptedReplies>: EmulatorState {
    package var script: Script
    package var log: [RecordedRequest] = []
    var answered = 0

    package init(script: Script) { self.script = script }
    package mutating func replace(script: Script) { self.script = script; answered = 0 }

    /// The reply the next request is due.
    mutating func next() -> Script.Reply {
        defer { answered += 1 }
        return answered < script.replies.count ? script.replies[answered] : script.then
    }
}

extension ScriptedServer {
    /// A server for a book service: `respond` gets the request, the script, the reply it is due and the base URL.
    convenience init<Script>(
        script: Script,
        respond: @escaping @Sendable (RecordedRequest, Script, Script.Reply, _ baseURL: String) -> HTTPServer.Response
    )
    where State == RepliesInOrder<Script> {
        self.init(script: script) { request, shared in
            let (script, reply) = shared.state.withLock { s in
                s.log.append(request)
                return (s.script, s.next())
            }
            return respond(request, script, reply, shared.baseURL.withLock { $0 })
        }
    }
}

/// A book service's emulator (OpenLibrary, Google Books): its script's replies in order, each request answered by
/// `respond` with the reply it is due.
package protocol BookServiceEmulator: ScriptedEmulator where State == RepliesInOrder<Script> {
    associatedtype Script: ScriptedReplies
    static func respond(_ request: RecordedRequest, script: Script, reply: Script.Reply, baseURL: String)
        -> HTTPServer.Response
}

extension BookServiceEmulator {
    /// Starts on 127.0.0.1 with a free port.
    package static func start(script: Script) throws -> Self {
        try started(ScriptedServer(script: script, respond: respond))
    }

    /// Starts one on 127.0.0.1, runs `body` with it, and always stops it.
    package static func with<T>(_ script: Script, _ body: (Self) async throws -> T) async throws -> T {
        let emulator = try start(script: script)
        defer { emulator.stop() }
        return try await body(emulator)
    }
}

/// An emulator built on a `ScriptedServer`: stopping it, its address, its request log, a new script,
/// an outage on the same port.
package protocol ScriptedEmulator: Sendable {
    associatedtype State: EmulatorState
    var host: ScriptedServer<State> { get }
    init(host: ScriptedServer<State>)
    /// What shelfd is pointed at; `http://127.0.0.1:PORT` unless the API lives under a path.
    var baseURL: String { get }
}

extension ScriptedEmulator {
    /// The emulator on `host`, started on 127.0.0.1 with a free port.
    static func started(_ host: ScriptedServer<State>) throws -> Self {
        try host.start()
        return Self(host: host)
    }

    package func stop() { host.stop() }

    package var baseURL: String { host.baseURL }

    /// Every request so far, in arrival order.
    package var requests: [State.Entry] { host.log }

    /// Replaces the script; its replies start again from the first.
    package func setScript(_ script: State.Script) { host.setScript(script) }

    /// An outage on the same port: connections are cut and refused (accepted and closed at once) until
    /// `setDown(false)`; `droppedConnections` counts the attempts made meanwhile.
    package func setDown(_ down: Bool) { host.setDown(down) }
    package var droppedConnections: Int { host.droppedConnections }

    /// The most requests answered at the same moment.
    package var maxConcurrentRequests: Int { host.maxConcurrentRequests }
}
