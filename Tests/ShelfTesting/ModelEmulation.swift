import Foundation

/// A model emulator's script: what every model emulator answers with (a latency, rules keyed on the photo,
/// the reply when no rule matches) and the emulator's own world in `setup` (its keys, models, quotas), read
/// and set as if it were the script's own: `script.apiKey`. Each emulator's `Script` is one of these, made by
/// the `init` its file declares.
@dynamicMemberLookup
package struct EmulatorScript<Reply: Sendable, Setup: Sendable>: Sendable {
    package var setup: Setup
    /// Before every answer unless a rule says otherwise.
    package var latency: Duration
    /// The first matching rule answers; with none, `reply`.
    package var rules: [EmulatorRule<Reply>]
    package var reply: Reply

    init(setup: Setup, latency: Duration, rules: [EmulatorRule<Reply>], reply: Reply) {
        self.setup = setup; self.latency = latency; self.rules = rules; self.reply = reply
    }

    package subscript<Value>(dynamicMember keyPath: WritableKeyPath<Setup, Value>) -> Value {
        get { setup[keyPath: keyPath] }
        set { setup[keyPath: keyPath] = newValue }
    }

    package subscript<Value>(dynamicMember keyPath: KeyPath<Setup, Value>) -> Value { setup[keyPath: keyPath] }
}

/// One request a model emulator answered: what every model emulator logs, and what only this one notes in
/// `details`, read and set as if it were the entry's own: `request.keySource`.
@dynamicMemberLookup
package struct EmulatedRequest<Details: Sendable>: Sendable {
    package var method: String
    package var path: String
    /// The model the request named, when it named one.
    package var model: String?
    package var headers: [String: String]
    package var body: [UInt8]
    /// Of the decoded image, when the request carried one.
    package var photoSHA256: String?
    /// 0 until it is answered.
    package var status = 0
    package var details: Details

    init(_ request: RecordedRequest, model: String? = nil, details: Details) {
        method = request.method; path = request.path; self.model = model; headers = request.headers
        body = request.body; self.details = details
    }

    /// The request body as JSON.
    package var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }

    package subscript<Value>(dynamicMember keyPath: WritableKeyPath<Details, Value>) -> Value {
        get { details[keyPath: keyPath] }
        set { details[keyPath: keyPath] = newValue }
    }
}

/// What a model emulator keeps between requests: the script, how far its rules have got, the log, and
/// the emulator's own `world` (quota windows, batches, a license agreed to), read and set as if it were
/// the state's own.
@dynamicMemberLookup
package struct ModelEmulatorState<Reply: Sendable, Setup: Sendable, Details: Sendable, World: EmulatorWorld>:
    EmulatorState
where World.Setup == Setup {
    package var script: EmulatorScript<Reply, Setup>
    var progress = RuleProgress()
    package var log: [EmulatedRequest<Details>] = []
    var world: World

    package init(script: EmulatorScript<Reply, Setup>) { self.script = script; world = World(setup: script.setup) }

    package mutating func replace(script: EmulatorScript<Reply, Setup>) {
        self.script = script; progress = RuleProgress(); world.replace(setup: script.setup)
    }

    package subscript<Value>(dynamicMember keyPath: WritableKeyPath<World, Value>) -> Value {
        get { world[keyPath: keyPath] }
        set { world[keyPath: keyPath] = newValue }
    }

    /// The reply to a photo request (the first matching rule's next, or the script's) and its latency.
    mutating func reply(image: [UInt8], sha256: String) -> (Reply, Duration) {
        progress.reply(
            rules: script.rules, fallback: script.reply, latency: script.latency, image: image, sha256: sha256)
    }
}

/// What one model emulator keeps beyond its script and log; most keep nothing (`NoWorld`).
package protocol EmulatorWorld: Sendable {
    associatedtype Setup
    init(setup: Setup)
    /// A new script arrived; by default the world carries on.
    mutating func replace(setup: Setup)
}

extension EmulatorWorld {
    package mutating func replace(setup: Setup) {}
}

/// The world of an emulator that keeps nothing beyond its script and log.
package struct NoWorld<Setup>: EmulatorWorld {
    package init(setup: Setup) {}
}
