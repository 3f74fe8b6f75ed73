import Foundation
import ShelfCore
import Synchronization

extension HTTPServer.Response {
    /// A JSON answer built from plain dictionaries and arrays (keys sorted, slashes unescaped).
    package static func json(object: Any, status: Int = 200, headers: [(name: String, value: String)] = []) -> Self {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data()
        return .json(String(decoding: data, as: UTF8.self), status: status, headers: headers)
    }
}

/// The words an emulated search compares, folded the way shelfd folds what it asks.
func searchWords(_ text: String) -> Set<String> {
    Set(TextNormalization.fold(text).split(separator: " ").map(String.init))
}

/// A script whose first requests get scripted replies, in order, and every later one `then`.
package protocol ScriptedReplies: Sendable {
    associatedtype Reply: Sendable
    var replies: [Reply] { get }
    var then: Reply { get }
}

/// What the book-service emulators share: a loopback server, a script that can be replaced, and the
/// reply each request is due. `respond` gets the request, the script, that reply and the server's base URL.
package final class ScriptedServer<Script: ScriptedReplies>: Sendable {
    private struct State {
        var script: Script
        var answered = 0
        var baseURL = ""
    }

    /// Shared with the server's connection threads.
    private final class Shared: Sendable {
        let state: Mutex<State>
        init(_ script: Script) { state = Mutex(State(script: script)) }
    }

    private let shared: Shared
    private let server: HTTPServer

    init(script: Script,
         respond: @escaping @Sendable (RecordedRequest, Script, Script.Reply, _ baseURL: String) -> HTTPServer.Response) {
        let shared = Shared(script)
        self.shared = shared
        server = HTTPServer { request in
            let (script, reply, baseURL) = shared.state.withLock { s in
                defer { s.answered += 1 }
                return (s.script, s.answered < s.script.replies.count ? s.script.replies[s.answered] : s.script.then, s.baseURL)
            }
            return respond(request, script, reply, baseURL)
        }
    }

    func start() throws {
        try server.start()
        shared.state.withLock { $0.baseURL = server.baseURL }
    }

    func stop() { server.stop() }
    var baseURL: String { server.baseURL }
    var requests: [RecordedRequest] { server.requests }
    func setScript(_ script: Script) { shared.state.withLock { $0.script = script; $0.answered = 0 } }
}

/// An emulator built on a `ScriptedServer`: stopping it, its address, its request log, a new script.
package protocol ScriptedEmulator: Sendable {
    associatedtype Script: ScriptedReplies
    var host: ScriptedServer<Script> { get }
}

extension ScriptedEmulator {
    package func stop() { host.stop() }

    /// `http://127.0.0.1:PORT`, the base URL shelfd is pointed at.
    package var baseURL: String { host.baseURL }

    /// Every request so far, in arrival order.
    package var requests: [RecordedRequest] { host.requests }

    /// Replaces the script; its replies start again from the first.
    package func setScript(_ script: Script) { host.setScript(script) }
}
